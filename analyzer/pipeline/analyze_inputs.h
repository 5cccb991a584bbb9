// Many capture files (one per rank, thousands of them) analysed with memory
// bounded by the largest file and the number of workers, not by the job:
// each file is loaded, analysed per device and freed on one of `jobs`
// threads; only the per-device results and each device's exposed
// communication are kept for the cross-rank part. The result is exactly
// analyze(loadCaptures(paths)).
#pragma once

#include "analyzer/load/load_options.h"
#include "analyzer/metrics/analysis.h"

#include <functional>
#include <string>
#include <vector>

namespace osc {

struct PipelineOptions {
    int jobs = 0;  // worker threads; 0 = the machine's cores (at most the file count)
    LoadOptions load;  // launchDetails and cancel apply; its progress is not called
    // After each file: files done, files in all, the file just done.
    std::function<void(size_t done, size_t total, const std::string& file)> progress;
};

struct AnalyzedInputs {
    Analysis analysis;
    std::vector<std::string> files;          // what was read, in order
    std::vector<std::string> loadWarnings;   // the readers' warnings (Capture::warnings), in file order
};

// Throws CaptureError (the first failing file in order) or LoadCancelled.
AnalyzedInputs analyzeInputs(const std::vector<std::string>& paths, const AnalysisSettings& settings,
                             const PipelineOptions& options = {});

}  // namespace osc
