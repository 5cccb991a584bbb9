#include "analyzer/partial/file_part.h"

namespace osc::partial {

bool processBefore(const PartProcess& a, const PartProcess& b) {
    const bool ar = a.rank >= 0, br = b.rank >= 0;
    if (ar != br) return ar;
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.host != b.host) return a.host < b.host;
    return a.pid < b.pid;
}

namespace {

// `spent`: analyzeProcesses'.
FilePart partOf(const Capture& capture, Capture* spent, const std::string& path, const AnalysisSettings& settings) {
    FilePart part;
    part.path = path;
    AnalysisSettings perFile = settings;
    perFile.alignCollectives = false;
    analyzeProcesses(capture, perFile, part.analysis, part.intervals, &part.warningProcess, AnalysisDepth::Full, spent);
    part.analysis.settings = settings;
    for (const auto& p : capture.processes) part.processes.push_back({p.rank, p.host, p.pid});
    part.originUtcNs = capture.originUtcNs;
    part.loadWarnings = capture.warnings;
    part.savedNothing = !capture.savedNothing.empty();
    return part;
}

}  // namespace

FilePart analyzeFilePart(const Capture& capture, const std::string& path, const AnalysisSettings& settings) {
    return partOf(capture, nullptr, path, settings);
}

FilePart analyzeFilePart(Capture&& capture, const std::string& path, const AnalysisSettings& settings) {
    return partOf(capture, &capture, path, settings);
}

}  // namespace osc::partial
