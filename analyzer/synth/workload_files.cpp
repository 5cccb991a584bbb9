// writeWorkload lives apart from the model so that users of the in-memory
// generator (tests, the GUI) do not link the SQLite writer.
#include "analyzer/capture/capture_error.h"
#include "analyzer/synth/workload_synth.h"

#include <filesystem>
#include <memory>

namespace fs = std::filesystem;

namespace osc::synth {

std::vector<std::string> writeWorkload(const WorkloadSpec& spec, const std::string& out,
                                       bool overwrite) {
    spec.validate();
    std::vector<std::string> paths;
    std::error_code ec;
    if (spec.ranks == 1) {
        if (fs::is_directory(out, ec))
            throw CaptureError(out, "is a directory; give a file name for a one-rank capture");
        paths.push_back(out);
    } else {
        if (fs::exists(out, ec) && !fs::is_directory(out, ec))
            throw CaptureError(out, "exists and is not a directory; " + std::to_string(spec.ranks) +
                                        " ranks are written as one file per rank in a directory");
        fs::create_directories(out, ec);
        if (ec) throw CaptureError(out, "cannot create directory: " + ec.message());
        for (int r = 0; r < spec.ranks; ++r)
            paths.push_back((fs::path(out) / rankFileName(spec.host, spec.basePid + r, r)).string());
    }
    // Check every target first so a refusal leaves nothing half-written.
    if (!overwrite)
        for (const auto& p : paths)
            if (fs::exists(p, ec)) throw CaptureError(p, "already exists (use --force to replace it)");

    std::vector<std::unique_ptr<WriterSink>> owned;
    std::vector<RowSink*> sinks;
    for (int r = 0; r < spec.ranks; ++r) {
        owned.push_back(std::make_unique<WriterSink>(paths[static_cast<size_t>(r)],
                                                     workloadIdentity(spec, r), overwrite));
        sinks.push_back(owned.back().get());
    }
    generateWorkload(spec, sinks);
    for (auto& s : owned) s->close();
    return paths;
}

}  // namespace osc::synth
