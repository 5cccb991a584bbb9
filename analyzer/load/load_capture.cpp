#include "analyzer/load/load_capture.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/sqlite_reader.h"
#include "analyzer/capture/time_range.h"
#include "analyzer/import/kineto_reader.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <filesystem>
#include <cerrno>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace osc {
namespace {

void loadByFormat(const std::string& path, const LoadOptions& options, Capture& capture);

bool looksLikeCaptureFile(const fs::path& p) {
    const auto name = p.filename().string();
    auto endsWith = [&](std::string_view suffix) {
        return name.size() >= suffix.size() &&
               name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    // SQLite's side files belong to their main file.
    if (endsWith("-wal") || endsWith("-shm") || endsWith("-journal")) return false;
    // Partial results (`report --partial`, the agent) sit beside the captures.
    if (endsWith(".partial.json")) return false;
    return endsWith(".sqlite") || endsWith(".db") || endsWith(".json") || endsWith(".json.gz");
}

void loadOne(const std::string& path, const LoadOptions& options, Capture& capture) {
    const size_t before = capture.processes.size();
    loadByFormat(path, options, capture);
    for (size_t i = before; i < capture.processes.size(); ++i) checkTimeRange(capture.processes[i], path);
}

void loadByFormat(const std::string& path, const LoadOptions& options, Capture& capture) {
    switch (detectFormat(path)) {
        case InputFormat::Sqlite: readSqliteCapture(path, options, capture); break;
        case InputFormat::KinetoJson: readKinetoTrace(path, options, capture); break;
        case InputFormat::Unknown:
            throw CaptureError(path,
                               "not a capture: expected a SQLite capture, an Nsight Systems "
                               "SQLite export or a PyTorch profiler trace (.json/.json.gz)");
    }
}

// Opens `path` without blocking (a FIFO would wait for a writer forever) and
// returns its type; one line naming the problem when it cannot be opened.
mode_t inputType(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        const int error = errno;
        switch (error) {
            case ENOENT: throw CaptureError(path, "no such file or directory");
            case EACCES: throw CaptureError(path, "permission denied");
            case ELOOP: throw CaptureError(path, "too many levels of symbolic links (a link loop?)");
            case ENOTDIR: throw CaptureError(path, "a part of the path is not a directory");
            default: throw CaptureError(path, std::string("cannot open: ") + std::strerror(error));
        }
    }
    struct stat st {};
    const int rc = ::fstat(fd, &st);
    ::close(fd);
    if (rc != 0) throw CaptureError(path, std::string("cannot open: ") + std::strerror(errno));
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        throw CaptureError(path, std::string("not a regular file (") +
                                     (S_ISFIFO(st.st_mode) ? "a pipe" : S_ISCHR(st.st_mode) ? "a device" : "a socket or device") +
                                     "); save the capture to a file and give its name");
    return st.st_mode;
}

void loadPath(const std::string& path, const LoadOptions& options, Capture& capture) {
    std::error_code ec;
    if (S_ISDIR(inputType(path))) {
        std::vector<std::string> files;
        for (const auto& entry : fs::directory_iterator(path, ec))
            if (entry.is_regular_file() && looksLikeCaptureFile(entry.path()))
                files.push_back(entry.path().string());
        if (ec) throw CaptureError(path, "cannot list directory: " + ec.message());
        if (files.empty())
            throw CaptureError(path, "directory holds no capture files (.sqlite, .json, .json.gz)");
        std::sort(files.begin(), files.end());
        for (const auto& f : files) loadOne(f, options, capture);
        return;
    }
    loadOne(path, options, capture);
}

}  // namespace

InputFormat detectFormat(const std::string& path) {
    if (!S_ISREG(inputType(path))) throw CaptureError(path, "is a directory, not a capture file");
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) throw CaptureError(path, std::string("cannot open: ") + std::strerror(errno));
    char head[40] = {};
    ssize_t n;
    do n = ::read(fd, head, sizeof head);
    while (n < 0 && errno == EINTR);
    ::close(fd);
    const auto got = n > 0 ? static_cast<size_t>(n) : 0;
    const std::string_view start(head, got);
    if (start.starts_with("{\"format\":\"overlapscope-partial\""))
        throw CaptureError(path, "a partial result (report --partial), not a capture: give it to `overlapscope "
                                 "merge` (`check` and `diff` take it too); `export` and `whatif` need the captures");
    if (got >= 16 && std::memcmp(head, "SQLite format 3\0", 16) == 0) return InputFormat::Sqlite;
    if (got >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
        static_cast<unsigned char>(head[1]) == 0x8b)
        return InputFormat::KinetoJson;  // gzip: the only compressed input we take
    for (size_t i = 0; i < got; ++i) {
        const char c = head[i];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
        return c == '{' || c == '[' ? InputFormat::KinetoJson : InputFormat::Unknown;
    }
    return InputFormat::Unknown;
}

Capture loadCaptures(const std::vector<std::string>& paths, const LoadOptions& options) {
    Capture capture;
    for (const auto& p : paths) {
        capture.sourcePaths.push_back(p);
        loadPath(p, options, capture);
    }
    // Both checked: a time and a session start each in range cannot overflow
    // when shifted, but can land outside the range.
    capture.alignProcesses();
    for (const auto& p : capture.processes) checkTimeRange(p, p.sourcePath);
    capture.finalize();
    return capture;
}

std::vector<std::string> captureFiles(const std::vector<std::string>& paths) {
    std::vector<std::string> out;
    for (const auto& path : paths) {
        std::error_code ec;
        if (!fs::is_directory(path, ec)) {
            out.push_back(path);  // loading it says what is wrong, if anything
            continue;
        }
        std::vector<std::string> files;
        for (const auto& entry : fs::directory_iterator(path, ec))
            if (entry.is_regular_file() && looksLikeCaptureFile(entry.path()))
                files.push_back(entry.path().string());
        if (ec) throw CaptureError(path, "cannot list directory: " + ec.message());
        if (files.empty())
            throw CaptureError(path, "directory holds no capture files (.sqlite, .json, .json.gz)");
        std::sort(files.begin(), files.end());
        out.insert(out.end(), files.begin(), files.end());
    }
    return out;
}

Capture loadCapture(const std::string& path, const LoadOptions& options) {
    return loadCaptures({path}, options);
}

}  // namespace osc
