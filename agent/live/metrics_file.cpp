#include "agent/live/metrics_file.h"

#include "analyzer/output/output_path.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace osc::agent::live {
namespace {

void replaceAll(std::string& s, const std::string& from, const std::string& to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
        s.replace(at, from.size(), to);
}

[[noreturn]] void failed(const std::string& path, const char* what) {
    throw std::runtime_error(path + ": " + what + ": " + std::strerror(errno));
}

}  // namespace

std::string metricsFilePath(const std::string& spec, const ProcessIdentity& who) {
    struct stat st {};
    const bool directory =
        (!spec.empty() && spec.back() == '/') || (::stat(spec.c_str(), &st) == 0 && S_ISDIR(st.st_mode));
    if (directory) {
        std::string name = "overlapscope-" + who.host + "-" + std::to_string(who.pid);
        if (who.rank >= 0) name += "-rank" + std::to_string(who.rank);
        return spec + (spec.back() == '/' ? "" : "/") + name + ".prom";
    }
    std::string path = spec;
    replaceAll(path, "{rank}", who.rank >= 0 ? std::to_string(who.rank) : "");
    replaceAll(path, "{local_rank}", who.localRank >= 0 ? std::to_string(who.localRank) : "");
    replaceAll(path, "{pid}", std::to_string(who.pid));
    replaceAll(path, "{host}", who.host);
    return path;
}

void writeMetricsFile(const std::string& path, const std::string& text) {
    // The directories on the way as every output's (a link another user
    // could have planted is refused); the name itself is replaced, never
    // followed, whatever is there.
    output::OutputPath target;
    try {
        target = output::resolveOutputDirectory(path);
    } catch (const std::exception& e) {
        throw std::runtime_error(e.what());
    }
    const int dir = target.dir.get();
    // ".NAME.XXXXXX": not ending in .prom, so the collector never reads half a file.
    std::string tmp;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
        char suffix[16];
        static std::atomic<unsigned> serial{0};
        const unsigned mix = static_cast<unsigned>(::getpid()) * 2654435761u ^ serial.fetch_add(7919) ^
                             static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count());
        std::snprintf(suffix, sizeof suffix, ".%06x", mix & 0xFFFFFFu);
        tmp = "." + target.name.substr(0, 200) + suffix;
        fd = ::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) failed(path, "cannot create a temporary file beside it");
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int e = errno;
            ::close(fd);
            ::unlinkat(dir, tmp.c_str(), 0);
            errno = e;
            failed(path, "cannot write");
        }
        done += static_cast<size_t>(n);
    }
    if (::fchmod(fd, 0644) != 0 || ::close(fd) != 0) {
        const int e = errno;
        ::unlinkat(dir, tmp.c_str(), 0);
        errno = e;
        failed(path, "cannot finish the temporary file");
    }
    if (::renameat(dir, tmp.c_str(), dir, target.name.c_str()) != 0) {
        const int e = errno;
        ::unlinkat(dir, tmp.c_str(), 0);
        errno = e;
        failed(path, "cannot rename the temporary file over it");
    }
}

void removeStaleMetricsFiles(const std::string& spec, const ProcessIdentity& who) {
    if (metricsFilePath(spec, who).rfind(spec.back() == '/' ? spec : spec + "/", 0) != 0) return;  // not a directory
    const std::string prefix = "overlapscope-" + who.host + "-";
    DIR* d = ::opendir(spec.c_str());
    if (!d) return;
    while (const dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name.size() <= prefix.size() + 5 || name.compare(0, prefix.size(), prefix) != 0 ||
            name.compare(name.size() - 5, 5, ".prom") != 0)
            continue;
        // "<pid>[-rank<R>].prom"
        const std::string rest = name.substr(prefix.size(), name.size() - prefix.size() - 5);
        size_t digits = 0;
        while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
        if (digits == 0 || digits > 10 || (digits < rest.size() && rest.compare(digits, 5, "-rank") != 0)) continue;
        const long pid = std::strtol(rest.substr(0, digits).c_str(), nullptr, 10);
        if (pid == who.pid || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) continue;  // alive
        struct stat st {};
        if (::fstatat(::dirfd(d), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
            st.st_uid != ::geteuid())
            continue;
        ::unlinkat(::dirfd(d), name.c_str(), 0);
    }
    ::closedir(d);
}

}  // namespace osc::agent::live
