// Long work (loading, analysing, merging) runs on a thread of its own while
// the Python thread that asked for it waits with the GIL released: other
// Python threads keep running, and the waiting thread wakes ten times a
// second to hand progress to a Python callable and to notice Ctrl-C (or a
// notebook's interrupt), which cancels the work.
#pragma once

#include "analyzer/job/job.h"

#include <pybind11/pybind11.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace osc::python {

namespace py = pybind11;

class BackgroundJob {
public:
    BackgroundJob();

    // Callbacks for analyzer/job that record progress and warnings from any
    // thread, and carry the cancel flag.
    const job::JobProgress& progress() const { return progress_; }
    const std::atomic<bool>* cancelFlag() const { return &cancel_; }
    // For readers that take LoadOptions::progress.
    void loading(double fraction, std::string_view stage);
    void status(std::string_view stage);
    void addWarnings(const std::vector<std::string>& warnings);

    // Runs `work` on its own thread and waits for it (GIL released), calling
    // `callback(message, fraction or None)` when progress changed, unless
    // callback is None; every stage (status()) reaches it, also one that
    // began and ended between two of its calls. Re-raises the work's exception here; Ctrl-C or an
    // exception from the callback cancels the work and propagates.
    void run(const std::function<void()>& work, const py::object& callback);

    // Warnings in the order they came, each once.
    std::vector<std::string> warnings() const;

private:
    void set(std::string message, std::optional<double> fraction);
    // The line's message, with mutex_ held.
    void replaceMessage(std::string message);

    std::atomic<bool> cancel_{false};
    job::JobProgress progress_;
    mutable std::mutex mutex_;
    std::string message_;
    std::optional<double> fraction_;
    bool changed_ = false;
    std::vector<std::string> stagesPassed_;  // stages since the last call, before message_
    std::vector<std::string> warnings_;
};

}  // namespace osc::python
