// OVERLAPSCOPE_PARTIAL=1: when a capture closes, the agent also writes the
// capture's partial result (analyzer/partial/partial_format.h) beside it,
// "<capture without .sqlite>.partial.json", exactly what
// `overlapscope report --partial CAPTURE` would write. A cluster job is
// then analysed by gathering the small partials (or leaving them on a shared
// filesystem) and running `overlapscope merge`, without moving captures.
//
// The analysis runs on its own thread after the capture is closed, so a
// detach or a duration end returns at once; at exit the process waits for
// the partials still being written (about a second per million kernels).
#pragma once

#include "analyzer/metrics/analysis.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace osc::agent {

class PartialWriter {
public:
    explicit PartialWriter(AnalysisSettings settings);
    ~PartialWriter();
    PartialWriter(const PartialWriter&) = delete;
    PartialWriter& operator=(const PartialWriter&) = delete;

    // Queues a closed capture file.
    void submit(const std::string& capturePath);
    // Writes what is queued, then stops the thread.
    void finish();

    // "<dir>/x.sqlite" -> "<dir>/x.partial.json"
    static std::string partialPathFor(const std::string& capturePath);
    // Analyses one capture file and writes its partial (atomically: a
    // private temporary renamed into place). Throws CaptureError.
    static void writePartialFor(const std::string& capturePath, const AnalysisSettings& settings);

private:
    void loop();

    const AnalysisSettings settings_;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<std::string> queue_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace osc::agent
