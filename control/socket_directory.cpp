#include "control/socket_directory.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace osc::control {
namespace {

constexpr const char kFallbackSuffix[] = "-XXXXXX";
constexpr size_t kRandomChars = 6;  // what mkdtemp puts in place of the X's

std::string withoutTrailingSlashes(std::string dir) {
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    return dir;
}

bool isMkdtempSuffix(const std::string& text) {
    if (text.size() != kRandomChars) return false;
    for (char c : text) {
        const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        if (!alnum) return false;
    }
    return true;
}

}  // namespace

std::string socketDirectory() {
    if (const char* d = std::getenv("OVERLAPSCOPE_SOCKET_DIR"); d && *d) return withoutTrailingSlashes(d);
    if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x && *x) return withoutTrailingSlashes(x) + "/overlapscope";
    return "/tmp/overlapscope-" + std::to_string(::geteuid());
}

std::string socketPathFor(const std::string& dir, int64_t pid) {
    return dir + "/agent-" + std::to_string(pid) + ".sock";
}

int64_t pidFromSocketName(const std::string& fileName) {
    static const std::string prefix = "agent-", suffix = ".sock";
    if (fileName.size() <= prefix.size() + suffix.size()) return -1;
    if (fileName.compare(0, prefix.size(), prefix) != 0) return -1;
    if (fileName.compare(fileName.size() - suffix.size(), suffix.size(), suffix) != 0) return -1;
    const std::string digits = fileName.substr(prefix.size(), fileName.size() - prefix.size() - suffix.size());
    if (digits.empty() || digits.size() > 10) return -1;
    int64_t pid = 0;
    for (char c : digits) {
        if (c < '0' || c > '9') return -1;
        pid = pid * 10 + (c - '0');
    }
    return pid > 0 ? pid : -1;
}

std::optional<std::string> untrustedDirectoryReason(const std::string& dir, uid_t uid) {
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) return std::string("does not exist");
    if (S_ISLNK(st.st_mode)) return std::string("is a symbolic link");
    if (!S_ISDIR(st.st_mode)) return std::string("is not a directory");
    if (st.st_uid != uid) return "is owned by uid " + std::to_string(st.st_uid) + ", not uid " + std::to_string(uid);
    if ((st.st_mode & 077) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
        return std::string("is open to other users (mode ") + mode + ", needs 0700)";
    }
    return std::nullopt;
}

std::string fallbackDirectoryTemplate(const std::string& dir) { return withoutTrailingSlashes(dir) + kFallbackSuffix; }

std::vector<std::string> socketDirectoriesFor(const std::string& dir) {
    const std::string base = withoutTrailingSlashes(dir);
    std::vector<std::string> dirs = {base};
    const size_t slash = base.rfind('/');
    const std::string parent = slash == std::string::npos ? "." : (slash == 0 ? "/" : base.substr(0, slash));
    const std::string prefix = (slash == std::string::npos ? base : base.substr(slash + 1)) + "-";
    DIR* d = ::opendir(parent.c_str());
    if (!d) return dirs;
    std::vector<std::string> fallbacks;
    while (const dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name.size() == prefix.size() + kRandomChars && name.compare(0, prefix.size(), prefix) == 0 &&
            isMkdtempSuffix(name.substr(prefix.size())))
            fallbacks.push_back((parent == "/" ? "" : parent) + "/" + name);
    }
    ::closedir(d);
    std::sort(fallbacks.begin(), fallbacks.end());
    dirs.insert(dirs.end(), fallbacks.begin(), fallbacks.end());
    return dirs;
}

}  // namespace osc::control
