#include "analyzer/crossrank/analyze.h"

#include "analyzer/crossrank/engine.h"
#include "analyzer/crossrank/memory_source.h"

namespace osc {

void finishAnalysis(Analysis& a, const std::vector<DeviceIntervals>& intervalsOfDevice, size_t processes) {
    std::vector<crossrank::DeviceCrossRank> cross;
    std::vector<MatchedCollective> matched;
    Analysis rest;
    {
        const crossrank::MemorySource source(a, intervalsOfDevice, processes);
        crossrank::Engine engine(source, {a.settings});
        // Every device's decision first: the source reads the devices as
        // they were analysed until the engine is done.
        cross.reserve(engine.deviceCount());
        for (size_t d = 0; d < engine.deviceCount(); ++d) cross.push_back(engine.device(d));
        matched.reserve(engine.matchedCount());
        for (size_t g = 0; g < engine.matchedCount(); ++g) matched.push_back(engine.matched(g));
        rest = engine.rest();
    }
    for (size_t d = 0; d < a.devices.size(); ++d) {
        cross[d].patterns = &rest.devices[d];
        crossrank::applyCrossRank(a.devices[d], cross[d]);
    }
    a.summary = rest.summary;
    a.matched = std::move(matched);
    a.total_skew_ns = rest.total_skew_ns;
    a.spread = std::move(rest.spread);
    a.p2p = std::move(rest.p2p);
    a.pipeline = std::move(rest.pipeline);
    a.alltoall = std::move(rest.alltoall);
    a.warnings = std::move(rest.warnings);
}

namespace {

// Both halves; `given`, when the caller gave the capture up, is emptied
// between them.
Analysis analyzeWhole(const Capture& capture, Capture* given, const AnalysisSettings& settings, AnalysisDepth depth) {
    Analysis a;
    std::vector<DeviceIntervals> intervalsOfDevice;
    analyzeProcesses(capture, settings, a, intervalsOfDevice, nullptr, depth, given);
    const size_t processes = capture.processes.size();
    if (given) *given = Capture{};
    finishAnalysis(a, intervalsOfDevice, processes);
    return a;
}

}  // namespace

Analysis analyze(const Capture& capture, const AnalysisSettings& settings, AnalysisDepth depth) {
    return analyzeWhole(capture, nullptr, settings, depth);
}

Analysis analyze(Capture&& capture, const AnalysisSettings& settings, AnalysisDepth depth) {
    return analyzeWhole(capture, &capture, settings, depth);
}

}  // namespace osc
