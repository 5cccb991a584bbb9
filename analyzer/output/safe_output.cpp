#include "analyzer/output/safe_output.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/output/os_failure.h"
#include "analyzer/output/output_path.h"
#include "analyzer/output/temp_cleanup.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>
#include <vector>

namespace osc::output {
namespace {

// An ostream buffer over a file descriptor: files here are opened with
// openat() as descriptors, and std::ofstream cannot adopt one.
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

// Runs `write` into `fd` and returns the first write error (0 when none).
int writeToFd(int fd, const std::function<void(std::ostream&)>& write) {
    FdStreamBuf buffer(fd);
    std::ostream out(&buffer);
    write(out);
    out.flush();
    return buffer.error();
}

void writeThrough(const std::string& path, const OutputPath& target, const std::function<void(std::ostream&)>& write) {
    // Non-blocking: opening a FIFO that nobody reads would wait forever.
    const int flags = O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK | (target.followName ? 0 : O_NOFOLLOW);
    const Fd fd(::openat(target.dir.get(), target.name.c_str(), flags));
    if (!fd) {
        if (errno == ENXIO) fail(path, "is a FIFO that nothing reads; not waiting for a reader (start it first)");
        fail(path, "cannot open for writing: " + errorText(errno));
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)))
        fail(path, "changed into something other than a FIFO or device; not written");
    // Writes block again: a slow reader is waited for, not an error.
    ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
    if (const int error = writeToFd(fd.get(), write); error != 0) fail(path, "write failed: " + errorText(error));
}

// ".NAME.tmp-XXXXXX", NAME cut (at a character boundary) where the whole
// would pass the directory's name limit: legal names up to that limit work.
std::string temporaryName(const std::string& name, size_t maxLength) {
    static constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    constexpr size_t kExtra = 12;  // "." + ".tmp-" + 6
    size_t keep = name.size();
    if (keep + kExtra > maxLength) {
        keep = maxLength > kExtra ? maxLength - kExtra : 1;
        while (keep > 1 && (static_cast<unsigned char>(name[keep]) & 0xC0) == 0x80) --keep;
    }
    unsigned char random[6] = {};
    if (::getrandom(random, sizeof random, 0) != static_cast<ssize_t>(sizeof random)) {
        // Only unpredictable names keep others from guessing them; O_EXCL keeps us safe either way.
        timespec now{};
        ::clock_gettime(CLOCK_MONOTONIC, &now);
        for (size_t i = 0; i < sizeof random; ++i)
            random[i] = static_cast<unsigned char>((now.tv_nsec >> (5 * i)) ^ (::getpid() >> i));
    }
    std::string out = "." + name.substr(0, keep) + ".tmp-";
    for (const unsigned char r : random) out += kLetters[r % (sizeof kLetters - 1)];
    return out;
}

// Created exclusively, never through a link: a planted name is skipped.
std::pair<Fd, std::string> createTemporary(const std::string& path, const OutputPath& target) {
    const size_t limit = maxNameLength(target.dir);
    for (int attempt = 0; attempt < 100; ++attempt) {
        std::string name = temporaryName(target.name, limit);
        Fd fd(::openat(target.dir.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (fd) return {std::move(fd), std::move(name)};
        if (errno != EEXIST) fail(path, "cannot create a file beside it: " + errorText(errno));
    }
    fail(path, "cannot create a file beside it: every temporary name tried is taken");
}

// Moves the finished temporary to the target's name; without `overwrite` it
// never replaces a file that appeared in the meantime.
void moveIntoPlace(const std::string& path, const OutputPath& target, const std::string& temp, bool overwrite) {
    const int dir = target.dir.get();
    if (overwrite) {
        // Checked again right before: only a regular file (or nothing) is replaced.
        struct stat st {};
        if (::fstatat(dir, target.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
            fail(path, "changed into something other than a regular file while writing; not replaced");
        if (::renameat(dir, temp.c_str(), dir, target.name.c_str()) != 0)
            fail(path, "cannot replace: " + errorText(errno));
        return;
    }
    if (::renameat2(dir, temp.c_str(), dir, target.name.c_str(), RENAME_NOREPLACE) == 0) return;
    int error = errno;
    if (error == EINVAL || error == ENOSYS) {
        // A file system without RENAME_NOREPLACE: link() fails with EEXIST too.
        error = ::linkat(dir, temp.c_str(), dir, target.name.c_str(), 0) == 0 ? 0 : errno;
        if (error == 0) {
            ::unlinkat(dir, temp.c_str(), 0);
            return;
        }
    }
    if (error == EEXIST) fail(path, "already exists (use --force to replace it)");
    fail(path, "cannot create: " + errorText(error));
}

void writeViaTemporary(const std::string& path, const OutputPath& target, const WriteOptions& options,
                       const std::function<void(std::ostream&)>& write) {
    // Named, not a structured binding: clang 14 (the fuzz build's) cannot
    // capture a binding in the lambda below.
    std::pair<Fd, std::string> created = createTemporary(path, target);
    Fd& fd = created.first;
    const std::string& temp = created.second;
    std::optional<TemporaryFileGuard> guard;
    if (options.removeOnSignal) guard.emplace(target.dir.get(), temp);
    const auto discard = [&] { ::unlinkat(target.dir.get(), temp.c_str(), 0); };
    int error = 0;
    try {
        error = writeToFd(fd.get(), write);
    } catch (...) {
        discard();
        throw;
    }
    if (error != 0) {
        discard();
        fail(path, "write failed: " + errorText(error));
    }
    const mode_t mode = target.kind == OutputKind::RegularFile ? target.mode : (0666 & ~currentUmask());
    if (::fchmod(fd.get(), mode) != 0 || ::close(fd.release()) != 0) {
        error = errno;
        discard();
        fail(path, "write failed: " + errorText(error));
    }
    try {
        moveIntoPlace(path, target, temp, options.overwrite);
    } catch (...) {
        discard();
        throw;
    }
}

}  // namespace

void checkOutputPath(const std::string& path, bool overwrite) {
    const OutputPath target = resolveOutputPath(path);
    if (target.kind == OutputKind::RegularFile && !overwrite) fail(path, "already exists (use --force to replace it)");
}

void writeFileSafely(const std::string& path, const std::function<void(std::ostream&)>& write,
                     const WriteOptions& options) {
    const OutputPath target = resolveOutputPath(path);
    if (target.kind == OutputKind::WriteThrough) {
        writeThrough(path, target, write);
        return;
    }
    if (target.kind == OutputKind::RegularFile && !options.overwrite)
        fail(path, "already exists (use --force to replace it)");
    writeViaTemporary(path, target, options, write);
}

}  // namespace osc::output
