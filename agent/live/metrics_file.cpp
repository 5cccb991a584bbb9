#include "agent/live/metrics_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
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
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    std::string tmp = dir + "/." + base + ".XXXXXX";
    const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
    if (fd < 0) failed(path, "cannot create a temporary file beside it");
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int e = errno;
            ::close(fd);
            ::unlink(tmp.c_str());
            errno = e;
            failed(path, "cannot write");
        }
        done += static_cast<size_t>(n);
    }
    if (::fchmod(fd, 0644) != 0 || ::close(fd) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        errno = e;
        failed(path, "cannot finish the temporary file");
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        errno = e;
        failed(path, "cannot rename the temporary file over it");
    }
}

}  // namespace osc::agent::live
