#include "agent/core/partial_writer.h"

#include "analyzer/capture/background_thread.h"
#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/sqlite_reader.h"
#include "analyzer/job/capture_file.h"
#include "analyzer/load/input_kind.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <sstream>

namespace osc::agent {
namespace {

// umask() can only be read by setting it, which would race with the
// application's threads creating files; the kernel also shows it here.
mode_t currentUmask() {
    std::FILE* f = std::fopen("/proc/self/status", "re");
    unsigned mask = 022;
    if (!f) return mask;
    char line[256];
    while (std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "Umask: %o", &mask) == 1) break;
    std::fclose(f);
    return static_cast<mode_t>(mask);
}

// Writes `text` to a private temporary beside `path` and renames it into place.
void writeAtomically(const std::string& path, const std::string& text) {
    std::string temp = path + ".tmp-XXXXXX";
    const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
    if (fd < 0) throw CaptureError(path, std::string("cannot create: ") + std::strerror(errno));
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int error = n < 0 ? errno : ENOSPC;
            ::close(fd);
            ::unlink(temp.c_str());
            throw CaptureError(path, std::string("cannot write: ") + std::strerror(error));
        }
        done += static_cast<size_t>(n);
    }
    // The usual mode of a new file (0666 less the umask), not mkstemp's 0600.
    ::fchmod(fd, 0666 & ~currentUmask());
    if (::close(fd) != 0 || ::rename(temp.c_str(), path.c_str()) != 0) {
        const int error = errno;
        ::unlink(temp.c_str());
        throw CaptureError(path, std::string("cannot write: ") + std::strerror(error));
    }
}

}  // namespace

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
    writeAtomically(partialPathFor(capturePath), out.str());
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
