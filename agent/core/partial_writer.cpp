#include "agent/core/partial_writer.h"

#include "analyzer/capture/background_thread.h"
#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/sqlite_reader.h"
#include "analyzer/job/capture_file.h"
#include "analyzer/load/input_kind.h"
#include "analyzer/output/safe_output.h"

#include <cstdio>
#include <exception>
#include <sstream>

namespace osc::agent {

PartialWriter::PartialWriter(AnalysisSettings settings) : settings_(std::move(settings)) {
    thread_ = startBackgroundThread([this] { loop(); });
}

PartialWriter::~PartialWriter() { finish(); }

std::string PartialWriter::partialPathFor(const std::string& capturePath) {
    const std::string suffix = ".sqlite";
    std::string base = capturePath;
    if (base.size() > suffix.size() && base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0)
        base.resize(base.size() - suffix.size());
    return base + kPartialSuffix;
}

void PartialWriter::writePartialFor(const std::string& capturePath, const AnalysisSettings& settings) {
    // Read as `report --partial` reads it, by the SQLite reader alone: the
    // agent does not link the PyTorch trace reader.
    std::ostringstream out;
    job::writeCapturePartial(out, capturePath, settings, readSqliteCapture, "overlapscope-agent " OSC_VERSION);
    // Beside the capture, by the rules every output follows (no planted link
    // followed, a private temporary renamed into place); the application's
    // signals are its own, so no handler is installed here.
    const std::string text = out.str();
    output::writeFileSafely(
        partialPathFor(capturePath),
        [&](std::ostream& o) { o.write(text.data(), static_cast<std::streamsize>(text.size())); },
        output::WriteOptions{.overwrite = true, .removeOnSignal = false});
}

void PartialWriter::submit(const std::string& capturePath) {
    {
        std::lock_guard lock(mutex_);
        if (stopping_) return;
        queue_.push_back(capturePath);
    }
    cv_.notify_all();
}

void PartialWriter::finish() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void PartialWriter::loop() {
    for (;;) {
        std::string path;
        {
            std::unique_lock lock(mutex_);
            cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
            if (queue_.empty()) return;  // stopping, nothing left
            path = std::move(queue_.front());
            queue_.pop_front();
        }
        try {
            writePartialFor(path, settings_);
        } catch (const std::exception& e) {
            // The capture is there: `overlapscope report --partial` can do it later.
            std::fprintf(stderr, "overlapscope-agent: %s: no partial result written: %s\n",
                         partialPathFor(path).c_str(), e.what());
        }
    }
}

}  // namespace osc::agent
