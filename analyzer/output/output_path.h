// Where a file the tools write (a report, a JUnit file, a partial result, a
// capture, a screenshot) may go. The path is walked one component at a time
// through directory descriptors, so nothing can redirect it between the check
// and the write, and a symbolic link on the way is followed only when nobody
// else could have put it there:
//  - the link belongs to us or to root, and
//  - its directory belongs to us or to root and no one else can write to it,
//    or it is sticky (/tmp: others cannot replace our links there).
// Any other link (another user's link in /tmp, any link in a directory another
// user owns or a group can write) is refused with one line naming it: a tool
// run by root must never write through a name a user planted. A FIFO or
// character device that another user owns in a directory others can write is
// refused likewise. The kernel's fs.protected_symlinks does the same for
// sticky directories only, and only where it is switched on.
#pragma once

#include <sys/types.h>

#include <string>

namespace osc::output {

// A file descriptor, closed on destruction.
class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() { reset(); }
    Fd(Fd&& other) noexcept : fd_(other.release()) {}
    Fd& operator=(Fd&& other) noexcept {
        if (this != &other) {
            reset();
            fd_ = other.release();
        }
        return *this;
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }
    int release() {
        const int fd = fd_;
        fd_ = -1;
        return fd;
    }
    void reset();
    explicit operator bool() const { return fd_ >= 0; }

private:
    int fd_ = -1;
};

enum class OutputKind {
    NewFile,       // nothing there yet
    RegularFile,   // an existing regular file: replaced by renaming over it
    WriteThrough,  // a FIFO or character device (/dev/null, a terminal, a pipe): written in place
};

struct OutputPath {
    OutputKind kind = OutputKind::NewFile;
    Fd dir;            // the directory `name` is in (O_PATH)
    std::string name;  // one component; after the trusted links the user named
    mode_t mode = 0;   // a RegularFile's permission bits
    // WriteThrough reached through /proc's fd links (/dev/stdout): `name` is
    // such a link and is opened by following it; everything else is opened
    // with O_NOFOLLOW.
    bool followName = false;
};

// Walks `path` by the rules above. Throws CaptureError(path, problem) for an
// empty path, a missing or unreadable directory on the way, a refused link,
// a link loop, a directory, or anything but a regular file, FIFO or
// character device at the end.
OutputPath resolveOutputPath(const std::string& path);

// The directory part only: `path`'s last component is taken as it is, never
// followed (captures: a new file is created there exclusively, and a link in
// the way is an error, not a way elsewhere).
OutputPath resolveOutputDirectory(const std::string& path);

// The directory's path as the kernel knows it (for SQLite, which opens by
// name), or `fallback` when /proc is not there to say.
std::string directoryPath(const Fd& dir, const std::string& fallback);

// The process's umask, read without setting it: umask() can only be read by
// setting it, which races with other threads creating files (the agent runs
// inside the application).
mode_t currentUmask();

// The longest file name the directory takes (NAME_MAX where it cannot say).
size_t maxNameLength(const Fd& dir);

}  // namespace osc::output
