#include "cli/safe_output.h"

#include "analyzer/capture/capture_error.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace osc::cli {
namespace {

// An ostream buffer over a file descriptor: the temporary file comes from
// mkstemp as a descriptor, and std::ofstream cannot adopt one.
class FdStreamBuf : public std::streambuf {
public:
    explicit FdStreamBuf(int fd) : fd_(fd), buffer_(1 << 20) { setp(buffer_.data(), buffer_.data() + buffer_.size()); }
    int error() const { return error_; }
    int sync() override { return flushBuffer() ? 0 : -1; }

protected:
    int_type overflow(int_type c) override {
        if (!flushBuffer()) return traits_type::eof();
        if (!traits_type::eq_int_type(c, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(c);
            pbump(1);
        }
        return traits_type::not_eof(c);
    }

private:
    bool flushBuffer() {
        const char* p = pbase();
        while (p < pptr() && error_ == 0) {
            const ssize_t n = ::write(fd_, p, static_cast<size_t>(pptr() - p));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0)
                error_ = n < 0 ? errno : EIO;
            else
                p += n;
        }
        setp(buffer_.data(), buffer_.data() + buffer_.size());
        return error_ == 0;
    }

    int fd_;
    std::vector<char> buffer_;
    int error_ = 0;
};

enum class TargetKind { NewFile, RegularFile, WriteThrough };

struct Target {
    TargetKind kind = TargetKind::NewFile;
    std::string path;  // where the bytes go: a symlink's target for regular files
    mode_t mode = 0;   // the replaced file's permissions
};

[[noreturn]] void fail(const std::string& path, const std::string& problem) { throw CaptureError(path, problem); }

std::string errnoText(int error) { return std::strerror(error); }

Target resolveTarget(const std::string& path, bool overwrite) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) return {TargetKind::NewFile, path, 0};
        fail(path, "cannot write: " + errnoText(errno));
    }
    Target target{TargetKind::RegularFile, path, st.st_mode & 07777};
    if (S_ISLNK(st.st_mode)) {
        // The user named the link: write what it points to, keep the link.
        if (::stat(path.c_str(), &st) != 0) {
            if (errno == ENOENT) fail(path, "is a symbolic link to a file that does not exist");
            if (errno == ELOOP) fail(path, "symbolic link loop");
            fail(path, "cannot write: " + errnoText(errno));
        }
        target.mode = st.st_mode & 07777;
        if (S_ISREG(st.st_mode)) {
            char resolved[PATH_MAX];
            if (::realpath(path.c_str(), resolved) == nullptr) fail(path, "cannot resolve: " + errnoText(errno));
            target.path = resolved;
        }
    }
    if (S_ISDIR(st.st_mode)) fail(path, "is a directory");
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return {TargetKind::WriteThrough, path, 0};
    if (!S_ISREG(st.st_mode)) fail(path, "is not a regular file, character device or FIFO; not writing to it");
    if (!overwrite) fail(path, "already exists (use --force to replace it)");
    return target;
}

// Runs `write` into `fd` and returns the first write error (0 when none);
// `cleanUp` runs before an exception from `write` goes on.
int writeToFd(int fd, const std::function<void(std::ostream&)>& write, const std::function<void()>& cleanUp) {
    FdStreamBuf buffer(fd);
    std::ostream out(&buffer);
    try {
        write(out);
        out.flush();
    } catch (...) {
        cleanUp();
        throw;
    }
    return buffer.error();
}

void writeThrough(const std::string& path, const std::function<void(std::ostream&)>& write) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) fail(path, "cannot open for writing: " + errnoText(errno));
    const int error = writeToFd(fd, write, [fd] { ::close(fd); });
    ::close(fd);
    if (error != 0) fail(path, "write failed: " + errnoText(error));
}

mode_t defaultFileMode() {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return 0666 & ~mask;
}

// Moves the finished temporary file to `target`; without `overwrite` it never
// replaces a file that appeared in the meantime.
void moveIntoPlace(const std::string& temp, const std::string& target, const std::string& shownPath, bool overwrite) {
    if (overwrite) {
        // Checked again right before: only a regular file (or nothing) is replaced.
        struct stat st {};
        if (::lstat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
            fail(shownPath, "changed into something other than a regular file while writing; not replaced");
        if (::rename(temp.c_str(), target.c_str()) != 0) fail(shownPath, "cannot replace: " + errnoText(errno));
        return;
    }
    // link() fails with EEXIST instead of replacing: the portable no-replace rename.
    if (::link(temp.c_str(), target.c_str()) != 0) {
        const int error = errno;
        if (error == EEXIST) fail(shownPath, "already exists (use --force to replace it)");
        fail(shownPath, "cannot create: " + errnoText(error));
    }
    ::unlink(temp.c_str());
}

void writeViaTemporary(const Target& target, const std::string& shownPath, bool overwrite,
                       const std::function<void(std::ostream&)>& write) {
    const auto slash = target.path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : target.path.substr(0, slash == 0 ? 1 : slash);
    const std::string base = slash == std::string::npos ? target.path : target.path.substr(slash + 1);
    std::string pattern = dir + "/." + base + ".tmp-XXXXXX";
    // mkstemp: O_CREAT|O_EXCL (a planted name or link makes it pick another), mode 0600.
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0) fail(shownPath, "cannot create a file in " + dir + ": " + errnoText(errno));
    const std::string temp = pattern;
    auto discard = [&] {
        ::close(fd);
        ::unlink(temp.c_str());
    };
    if (const int error = writeToFd(fd, write, discard); error != 0) {
        discard();
        fail(shownPath, "write failed: " + errnoText(error));
    }
    const mode_t mode = target.kind == TargetKind::RegularFile ? target.mode : defaultFileMode();
    if (::fchmod(fd, mode) != 0 || ::close(fd) != 0) {
        const int error = errno;
        ::unlink(temp.c_str());
        fail(shownPath, "write failed: " + errnoText(error));
    }
    try {
        moveIntoPlace(temp, target.path, shownPath, overwrite);
    } catch (...) {
        ::unlink(temp.c_str());
        throw;
    }
}

}  // namespace

void checkOutputPath(const std::string& path, bool overwrite) { (void)resolveTarget(path, overwrite); }

void writeFileSafely(const std::string& path, const std::function<void(std::ostream&)>& write, bool overwrite) {
    const Target target = resolveTarget(path, overwrite);
    if (target.kind == TargetKind::WriteThrough) {
        writeThrough(path, write);
        return;
    }
    writeViaTemporary(target, path, overwrite, write);
}

}  // namespace osc::cli
