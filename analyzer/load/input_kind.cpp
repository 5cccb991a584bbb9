#include "analyzer/load/input_kind.h"

#include "analyzer/capture/capture_error.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string_view>

namespace fs = std::filesystem;

namespace osc {
namespace {

bool endsWith(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool isCaptureFileName(const std::string& name) {
    // SQLite's side files belong to their main file; partial results
    // (`report --partial`, the agent) sit beside the captures.
    if (endsWith(name, "-wal") || endsWith(name, "-shm") || endsWith(name, "-journal")) return false;
    if (endsWith(name, kPartialSuffix)) return false;
    return endsWith(name, ".sqlite") || endsWith(name, ".db") || endsWith(name, ".json") || endsWith(name, ".json.gz");
}

std::vector<std::string> filesIn(const std::string& directory, bool (*wanted)(const std::string&)) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(directory, ec)) {
        if (!wanted(entry.path().filename().string())) continue;
        // A link that loops is bad input, not a file to skip; one that
        // points nowhere is skipped, as a name that is no file.
        std::error_code typeError;
        const bool regular = entry.is_regular_file(typeError);
        if (typeError == std::errc::too_many_symbolic_link_levels)
            throw CaptureError(entry.path().string(), "too many levels of symbolic links (a link loop?)");
        if (typeError && typeError != std::errc::no_such_file_or_directory)
            throw CaptureError(entry.path().string(), "cannot read: " + typeError.message());
        if (regular) out.push_back(entry.path().string());
    }
    if (ec) throw CaptureError(directory, "cannot list directory: " + ec.message());
    std::sort(out.begin(), out.end());
    return out;
}

// Whether `head` is a JSON object whose first key is "format" with this
// value: our writers put it first (compact or pretty-printed), and a trace
// from another tool that mentions it further in is not ours.
bool formatIs(std::string_view head, std::string_view format) {
    size_t i = head.find_first_not_of(" \t\r\n");
    if (i == std::string_view::npos || head[i] != '{') return false;
    i = head.find_first_not_of(" \t\r\n", i + 1);
    if (i == std::string_view::npos || head.substr(i, 8) != "\"format\"") return false;
    i = head.find_first_not_of(" \t\r\n", i + 8);
    if (i == std::string_view::npos || head[i] != ':') return false;
    i = head.find_first_not_of(" \t\r\n", i + 1);
    return i != std::string_view::npos && head.substr(i).starts_with("\"" + std::string(format) + "\"");
}

// Whether `head` (a file's first bytes) opens a Flight Recorder dump: a JSON
// object with a top-level key only PyTorch's dump has, or a pickle naming
// them. Kineto traces mention "pg_config" too, but inside distributedInfo,
// so only keys at depth 1 count; JSON dumps sort their keys, so the first
// key already tells (entries, comm_lib_version, nccl_comm_state, pg_config).
bool isFlightRecorderHead(std::string_view head) {
    static constexpr std::string_view kKeys[] = {"entries",         "pg_config",    "pg_status",
                                                 "nccl_comm_state", "nccl_version", "comm_lib_version"};
    if (!head.empty() && static_cast<unsigned char>(head[0]) == 0x80)
        return head.find("pg_config") != std::string_view::npos ||
               head.find("collective_seq_id") != std::string_view::npos;
    const size_t first = head.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos || head[first] != '{') return false;
    int depth = 0;
    bool expectKey = false;
    for (size_t i = first; i < head.size(); ++i) {
        const char c = head[i];
        if (c == '"') {
            size_t j = i + 1;
            while (j < head.size() && head[j] != '"') j += head[j] == '\\' ? 2 : 1;
            if (j >= head.size()) return false;  // cut off inside a string
            if (depth == 1 && expectKey) {
                const std::string_view key = head.substr(i + 1, j - i - 1);
                for (const auto k : kKeys)
                    if (key == k) return true;
            }
            expectKey = false;
            i = j;
        } else if (c == '{' || c == '[') {
            ++depth;
            expectKey = c == '{' && depth == 1;
        } else if (c == '}' || c == ']') {
            --depth;
        } else if (c == ',') {
            expectKey = depth == 1;
        }
    }
    return false;
}

bool endsInRankNumber(const std::string& name) {
    return !name.empty() && std::isdigit(static_cast<unsigned char>(name.back())) != 0;
}

[[noreturn]] void cannotOpen(const std::string& path, int error) {
    switch (error) {
        case ENOENT:
            throw CaptureError(path, "no such file or directory");
        case EACCES:
            throw CaptureError(path, "permission denied");
        case ELOOP:
            throw CaptureError(path, "too many levels of symbolic links (a link loop?)");
        case ENOTDIR:
            throw CaptureError(path, "a part of the path is not a directory");
        default:
            throw CaptureError(path, std::string("cannot open: ") + std::strerror(error));
    }
}

}  // namespace

InputKind sniff(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) cannotOpen(path, errno);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int error = errno;
        ::close(fd);
        cannotOpen(path, error);
    }
    if (S_ISDIR(st.st_mode)) {
        ::close(fd);
        if (!captureFilesIn(path).empty()) return InputKind::CaptureDirectory;
        if (!partialFilesIn(path).empty()) return InputKind::PartialDirectory;
        return flightRecorderFilesIn(path).empty() ? InputKind::Unknown : InputKind::FlightRecorderDirectory;
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        throw CaptureError(path, std::string("not a regular file (") +
                                     (S_ISFIFO(st.st_mode)  ? "a pipe"
                                      : S_ISCHR(st.st_mode) ? "a device"
                                                            : "a socket or device") +
                                     "); save the capture to a file and give its name");
    }
    char buffer[4096];
    size_t got = 0;
    while (got < sizeof buffer) {
        const ssize_t n = ::read(fd, buffer + got, sizeof buffer - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<size_t>(n);
    }
    ::close(fd);
    const std::string_view head(buffer, got);
    if (head.starts_with(std::string_view("SQLite format 3\0", 16))) return InputKind::SqliteCapture;
    // gzip: the only compressed input we take.
    if (got >= 2 && static_cast<unsigned char>(buffer[0]) == 0x1f && static_cast<unsigned char>(buffer[1]) == 0x8b)
        return InputKind::KinetoTrace;
    if (head.starts_with(kPartialMagic) || formatIs(head, kPartialFormat)) return InputKind::PartialResult;
    if (formatIs(head, kReportFormat)) return InputKind::SavedReport;
    if (formatIs(head, kHangFormat)) return InputKind::HangResult;
    if (isFlightRecorderHead(head)) return InputKind::FlightRecorderDump;
    const size_t first = head.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && (head[first] == '{' || head[first] == '[')) return InputKind::KinetoTrace;
    return InputKind::Unknown;
}

std::string describe(InputKind kind) {
    switch (kind) {
        case InputKind::SqliteCapture:
            return "an overlapscope capture or Nsight Systems SQLite export";
        case InputKind::KinetoTrace:
            return "a PyTorch profiler trace";
        case InputKind::PartialResult:
            return "a partial result";
        case InputKind::SavedReport:
            return "a saved report";
        case InputKind::HangResult:
            return "an overlapscope hang result";
        case InputKind::CaptureDirectory:
            return "a directory of captures";
        case InputKind::PartialDirectory:
            return "a directory of partial results";
        case InputKind::FlightRecorderDump:
            return "a PyTorch Flight Recorder dump";
        case InputKind::FlightRecorderDirectory:
            return "a directory of Flight Recorder dumps";
        case InputKind::Unknown:
            return "not something overlapscope reads";
    }
    return "unknown";
}

std::vector<std::string> captureFilesIn(const std::string& directory) { return filesIn(directory, isCaptureFileName); }

std::vector<std::string> partialFilesIn(const std::string& directory) {
    return filesIn(directory, [](const std::string& name) { return endsWith(name, kPartialSuffix); });
}

std::vector<std::string> flightRecorderFilesIn(const std::string& directory) {
    constexpr size_t kMaxNamesLooked = 65536;
    size_t looked = 0;
    std::vector<std::string> out;
    for (const auto& file : filesIn(directory, [](const std::string& name) {
             return name.front() != '.' && (endsInRankNumber(name) || endsWith(name, ".json"));
         })) {
        if (++looked > kMaxNamesLooked) break;
        try {
            if (sniff(file) == InputKind::FlightRecorderDump) out.push_back(file);
        } catch (const CaptureError&) {
            // Unreadable: not a dump this directory offers.
        }
    }
    return out;
}

}  // namespace osc
