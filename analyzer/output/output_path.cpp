#include "analyzer/output/output_path.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/output/os_failure.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <deque>
#include <optional>

namespace osc::output {

void Fd::reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

namespace {

constexpr int kMaxLinks = 40;             // what the kernel allows on one path
constexpr long kProcSuperMagic = 0x9fa0;  // statfs f_type of /proc

bool mineOrRoot(uid_t uid) { return uid == 0 || uid == ::geteuid(); }

// Empty when only we (or root) can change what the directory's names mean;
// else why not. In a sticky directory others cannot remove or rename our
// entries, so `stickyProtects` says whether that is enough.
std::string othersCanChange(const struct stat& dir, bool stickyProtects) {
    if (!mineOrRoot(dir.st_uid)) return "in a directory owned by another user (uid " + std::to_string(dir.st_uid) + ")";
    const bool othersWrite = (dir.st_mode & (S_IWGRP | S_IWOTH)) != 0;
    if (othersWrite && !(stickyProtects && (dir.st_mode & S_ISVTX) != 0))
        return "in a directory other users can write to";
    return "";
}

bool onProcfs(int dir) {
    struct statfs fs {};
    return ::fstatfs(dir, &fs) == 0 && static_cast<long>(fs.f_type) == kProcSuperMagic;
}

class Walk {
public:
    explicit Walk(const std::string& path) : path_(path) {
        if (path.empty()) fail(path, "an empty file name (use - for standard output)");
        trailingSlash_ = path.back() == '/';
        push(path);
    }

    // followLast: resolve the last component too (outputs written in place
    // or renamed over); otherwise stop at its directory (captures).
    OutputPath run(bool followLast) {
        for (;;) {
            if (pending_.empty()) fail(path_, "is a directory");
            const std::string part = pending_.front();
            pending_.pop_front();
            const bool last = pending_.empty();
            if (part == "." || part == "..") {
                if (last) fail(path_, "is a directory");
                if (part == "..") enter("..");
                continue;
            }
            if (last && trailingSlash_ && !followedLink_) fail(path_, "names a directory (it ends with '/')");
            if (last && !followLast) return {OutputKind::NewFile, std::move(dir_), part, 0, false};
            struct stat st {};
            if (::fstatat(dir_.get(), part.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
                const int error = errno;
                if (error == ENOENT && last) {
                    if (lastCameFromLink_) fail(path_, "is a symbolic link to a file that does not exist");
                    return {OutputKind::NewFile, std::move(dir_), part, 0, false};
                }
                if (error == ENOENT) fail(path_, "cannot create: the directory " + shown(part) + " does not exist");
                fail(path_, "cannot create: " + errorText(error));
            }
            if (S_ISLNK(st.st_mode)) {
                if (auto through = followLink(part, st, last)) return std::move(*through);
                continue;
            }
            if (!last) {
                if (!S_ISDIR(st.st_mode)) fail(path_, "cannot create: " + shown(part) + " is not a directory");
                enter(part);
                continue;
            }
            return atEnd(part, st);
        }
    }

private:
    void push(const std::string& text) {
        std::deque<std::string> parts;
        size_t at = 0;
        while (at <= text.size()) {
            const size_t slash = text.find('/', at);
            const size_t end = slash == std::string::npos ? text.size() : slash;
            if (end > at) parts.push_back(text.substr(at, end - at));
            if (slash == std::string::npos) break;
            at = slash + 1;
        }
        pending_.insert(pending_.begin(), parts.begin(), parts.end());
        if (text.front() == '/') {
            dir_ = Fd(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
            walked_ = "/";
        } else if (!dir_) {
            dir_ = Fd(::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC));
        }
        if (!dir_) fail(path_, "cannot write: " + errorText(errno));
    }

    void enter(const std::string& part) {
        // O_NOFOLLOW: a directory swapped for a link since fstatat is not entered.
        Fd next(::openat(dir_.get(), part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!next) fail(path_, "cannot create: " + shown(part) + ": " + errorText(errno));
        dir_ = std::move(next);
        walked_ += part + "/";
    }

    std::string shown(const std::string& part) const { return walked_ + part; }

    struct stat dirStat() const {
        struct stat st {};
        if (::fstat(dir_.get(), &st) != 0) fail(path_, "cannot write: " + errorText(errno));
        return st;
    }

    // Refuses a link someone else could have planted; returns an OutputPath
    // when the link is a /proc fd link to a pipe or device (written through).
    std::optional<OutputPath> followLink(const std::string& part, const struct stat& link, bool last) {
        const std::string what =
            (!followedLink_ && last) ? std::string("is a symbolic link") : shown(part) + " is a symbolic link";
        if (!mineOrRoot(link.st_uid))
            fail(path_, what + " owned by another user (uid " + std::to_string(link.st_uid) +
                            "); not following it (remove it, or name the file it points to)");
        if (const std::string why = othersCanChange(dirStat(), true); !why.empty())
            fail(path_, what + " " + why + "; not following it (remove it, or name the file it points to)");
        if (++links_ > kMaxLinks) fail(path_, "symbolic link loop");
        const bool proc = onProcfs(dir_.get());
        if (proc && last) {
            // /dev/stdout and /proc/self/fd/N: the kernel's links to open
            // files, whose "targets" (pipe:[123]) are no paths.
            struct stat target {};
            if (::fstatat(dir_.get(), part.c_str(), &target, 0) != 0) fail(path_, "cannot write: " + errorText(errno));
            if (S_ISFIFO(target.st_mode) || S_ISCHR(target.st_mode))
                return OutputPath{OutputKind::WriteThrough, std::move(dir_), part, 0, true};
            if (!S_ISREG(target.st_mode))
                fail(path_, "is not a regular file, character device or FIFO; not writing to it");
        }
        char buffer[PATH_MAX];
        const ssize_t n = ::readlinkat(dir_.get(), part.c_str(), buffer, sizeof buffer - 1);
        if (n <= 0) fail(path_, "cannot read the symbolic link " + shown(part) + ": " + errorText(errno));
        const std::string target(buffer, static_cast<size_t>(n));
        if (proc && target.find(":[") != std::string::npos) fail(path_, "cannot tell where " + shown(part) + " leads");
        if (last) lastCameFromLink_ = true;
        followedLink_ = true;
        push(target);
        return std::nullopt;
    }

    OutputPath atEnd(const std::string& part, const struct stat& st) {
        if (S_ISDIR(st.st_mode)) fail(path_, "is a directory");
        if (S_ISREG(st.st_mode)) return {OutputKind::RegularFile, std::move(dir_), part, st.st_mode & 07777, false};
        if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
            if (!mineOrRoot(st.st_uid))
                if (const std::string why = othersCanChange(dirStat(), false); !why.empty())
                    fail(path_, std::string(S_ISFIFO(st.st_mode) ? "is a FIFO" : "is a device") +
                                    " owned by another user (uid " + std::to_string(st.st_uid) + ") " + why +
                                    "; not writing into it");
            return {OutputKind::WriteThrough, std::move(dir_), part, 0, false};
        }
        fail(path_, "is not a regular file, character device or FIFO; not writing to it");
    }

    const std::string& path_;
    std::deque<std::string> pending_;
    Fd dir_;
    std::string walked_;  // the directory walked so far, as text, for messages
    int links_ = 0;
    bool trailingSlash_ = false;
    bool followedLink_ = false;
    bool lastCameFromLink_ = false;
};

}  // namespace

OutputPath resolveOutputPath(const std::string& path) { return Walk(path).run(true); }

OutputPath resolveOutputDirectory(const std::string& path) { return Walk(path).run(false); }

std::string directoryPath(const Fd& dir, const std::string& fallback) {
    char buffer[PATH_MAX];
    const std::string link = "/proc/self/fd/" + std::to_string(dir.get());
    const ssize_t n = ::readlink(link.c_str(), buffer, sizeof buffer - 1);
    if (n <= 0 || buffer[0] != '/') return fallback;
    const std::string path(buffer, static_cast<size_t>(n));
    if (path.ends_with(" (deleted)")) return fallback;
    return path;
}

mode_t currentUmask() {
    if (std::FILE* f = std::fopen("/proc/self/status", "re")) {
        char line[256];
        unsigned mask = 0;
        bool found = false;
        while (!found && std::fgets(line, sizeof line, f)) found = std::sscanf(line, "Umask: %o", &mask) == 1;
        std::fclose(f);
        if (found) return static_cast<mode_t>(mask);
    }
    const mode_t mask = ::umask(022);
    ::umask(mask);
    return mask;
}

size_t maxNameLength(const Fd& dir) {
    const long n = ::fpathconf(dir.get(), _PC_NAME_MAX);
    return n > 0 ? static_cast<size_t>(n) : NAME_MAX;
}

}  // namespace osc::output
