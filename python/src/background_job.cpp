#include "python/src/background_job.h"

#include "analyzer/capture/load_options.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <thread>

namespace osc::python {

BackgroundJob::BackgroundJob() {
    progress_.loading = [this](double fraction, std::string_view stage) { loading(fraction, stage); };
    progress_.status = [this](std::string_view stage) { status(stage); };
    progress_.counted = [this](std::string_view verb, size_t done, size_t total) {
        const char* unit = verb == "merging" ? " devices" : verb == "reading" ? " partial results" : " files";
        set(std::string(verb) + ": " + std::to_string(done) + "/" + std::to_string(total) + unit,
            total ? static_cast<double>(done) / static_cast<double>(total) : 0.0);
    };
    // Several files analysed: the line's fraction advances within them.
    progress_.reading = [this](double fraction) {
        const std::lock_guard lock(mutex_);
        if (message_.rfind("analyzing:", 0) != 0) replaceMessage("analyzing: reading files");
        fraction_ = fraction;
        changed_ = true;
    };
    progress_.warnings = [this](const std::vector<std::string>& w) { addWarnings(w); };
    progress_.cancel = &cancel_;
}

void BackgroundJob::loading(double fraction, std::string_view stage) {
    set("loading: " + std::string(stage), fraction);
}

void BackgroundJob::status(std::string_view stage) { set(std::string(stage), std::nullopt); }

void BackgroundJob::replaceMessage(std::string message) {
    // A stage replaced before the callback saw it is still told (ahead of
    // what replaced it): a short analysis is a stage like a long one.
    if (changed_ && !fraction_ && message_ != message) stagesPassed_.push_back(message_);
    message_ = std::move(message);
}

void BackgroundJob::set(std::string message, std::optional<double> fraction) {
    const std::lock_guard lock(mutex_);
    replaceMessage(std::move(message));
    fraction_ = fraction;
    changed_ = true;
}

void BackgroundJob::addWarnings(const std::vector<std::string>& warnings) {
    const std::lock_guard lock(mutex_);
    for (const auto& w : warnings)
        if (std::find(warnings_.begin(), warnings_.end(), w) == warnings_.end()) warnings_.push_back(w);
}

std::vector<std::string> BackgroundJob::warnings() const {
    const std::lock_guard lock(mutex_);
    return warnings_;
}

void BackgroundJob::run(const std::function<void()>& work, const py::object& callback) {
    std::mutex doneMutex;
    std::condition_variable doneChanged;
    bool done = false;
    std::exception_ptr error;
    std::thread worker([&] {
        try {
            work();
        } catch (...) {
            error = std::current_exception();
        }
        const std::lock_guard lock(doneMutex);
        done = true;
        doneChanged.notify_all();
    });
    // Whatever leaves this function first, the worker is stopped and joined:
    // a std::thread destroyed while joinable would end the process.
    struct Joiner {
        std::thread& worker;
        std::atomic<bool>& cancel;
        ~Joiner() {
            if (!worker.joinable()) return;
            cancel = true;
            py::gil_scoped_release release;
            worker.join();
        }
    } joiner{worker, cancel_};

    for (;;) {
        bool finished = false;
        {
            py::gil_scoped_release release;
            std::unique_lock lock(doneMutex);
            doneChanged.wait_for(lock, std::chrono::milliseconds(100), [&] { return done; });
            finished = done;
        }
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        if (!callback.is_none()) {
            std::string message;
            std::optional<double> fraction;
            bool changed = false;
            std::vector<std::string> passed;
            {
                const std::lock_guard lock(mutex_);
                std::swap(changed, changed_);
                std::swap(passed, stagesPassed_);
                message = message_;
                fraction = fraction_;
            }
            for (const auto& stage : passed) callback(stage, py::none());
            if (changed || finished)
                callback(finished ? std::string() : message, fraction ? py::cast(*fraction) : py::none());
        }
        if (finished) break;
    }
    {
        py::gil_scoped_release release;
        worker.join();
    }
    if (error) {
        try {
            std::rethrow_exception(error);
        } catch (const LoadCancelled&) {
            PyErr_SetNone(PyExc_KeyboardInterrupt);
            throw py::error_already_set();
        }
    }
}

}  // namespace osc::python
