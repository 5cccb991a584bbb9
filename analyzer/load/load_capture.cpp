#include "analyzer/load/load_capture.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/sqlite_reader.h"
#include "analyzer/import/kineto_reader.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace osc {
namespace {

bool looksLikeCaptureFile(const fs::path& p) {
    const auto name = p.filename().string();
    auto endsWith = [&](std::string_view suffix) {
        return name.size() >= suffix.size() &&
               name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    // SQLite's side files belong to their main file.
    if (endsWith("-wal") || endsWith("-shm") || endsWith("-journal")) return false;
    return endsWith(".sqlite") || endsWith(".db") || endsWith(".json") || endsWith(".json.gz");
}

void loadOne(const std::string& path, const LoadOptions& options, Capture& capture) {
    switch (detectFormat(path)) {
        case InputFormat::Sqlite: readSqliteCapture(path, options, capture); break;
        case InputFormat::KinetoJson: readKinetoTrace(path, options, capture); break;
        case InputFormat::Unknown:
            throw CaptureError(path,
                               "not a capture: expected a SQLite capture, an Nsight Systems "
                               "SQLite export or a PyTorch profiler trace (.json/.json.gz)");
    }
}

void loadPath(const std::string& path, const LoadOptions& options, Capture& capture) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
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
    if (!fs::exists(path, ec)) throw CaptureError(path, "no such file or directory");
    loadOne(path, options, capture);
}

}  // namespace

InputFormat detectFormat(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw CaptureError(path, "cannot open for reading");
    char head[16] = {};
    in.read(head, sizeof head);
    const auto got = static_cast<size_t>(in.gcount());
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
    capture.alignProcesses();
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
