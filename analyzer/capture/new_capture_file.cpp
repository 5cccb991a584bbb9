#include "analyzer/capture/new_capture_file.h"

#include "analyzer/capture/capture_error.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace osc {
namespace {

// "a symbolic link owned by another user (uid 1000)", "a directory", ...: what
// stands at `name`, for a message about it.
std::string whatIsAt(int dir, const std::string& name) {
    struct stat st {};
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return "something";
    const std::string owner =
        st.st_uid == ::geteuid() ? "" : " owned by another user (uid " + std::to_string(st.st_uid) + ")";
    if (S_ISLNK(st.st_mode)) return "a symbolic link" + owner;
    if (S_ISDIR(st.st_mode)) return "a directory" + owner;
    return "a file" + owner;
}

// Removes `name` (the name: a link is removed, not followed); its absence is fine.
void removeName(int dir, const std::string& name, const std::string& shown) {
    if (::unlinkat(dir, name.c_str(), 0) == 0 || errno == ENOENT) return;
    const int error = errno;
    throw CaptureError(shown, "cannot remove " + whatIsAt(dir, name) + " in the way (" + std::strerror(error) +
                                  "); not writing a capture here");
}

}  // namespace

NewCaptureFile::NewCaptureFile(const std::string& path, bool overwrite) : path_(path) {
    output::OutputPath at = output::resolveOutputDirectory(path);
    dir_ = std::move(at.dir);
    name_ = std::move(at.name);
    const int dir = dir_.get();
    if (overwrite) removeName(dir, name_, path);
    // O_EXCL makes "does it exist" and "create it" one step; O_NOFOLLOW (implied
    // by O_EXCL, said for the reader) never goes through a link in the way.
    const int fd = ::openat(dir, name_.c_str(), O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) {
        const int error = errno;
        if (error != EEXIST) throw CaptureError(path, std::string("cannot create: ") + std::strerror(error));
        const std::string what = whatIsAt(dir, name_);
        if (what.starts_with("a symbolic link"))
            throw CaptureError(path, "is " + what + "; a capture is never written through one (choose another name)");
        throw CaptureError(path, "already exists; not overwriting it (choose another name, or ask for overwrite)");
    }
    ::close(fd);
    try {
        for (const char* suffix : {"-wal", "-shm", "-journal"}) removeName(dir, name_ + suffix, path + suffix);
    } catch (...) {
        ::unlinkat(dir, name_.c_str(), 0);
        throw;
    }
    const std::string real = output::directoryPath(dir_, "");
    sqlitePath_ = real.empty() ? path : (real == "/" ? "" : real) + "/" + name_;
}

NewCaptureFile::~NewCaptureFile() {
    if (kept_ || !dir_) return;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) ::unlinkat(dir_.get(), (name_ + suffix).c_str(), 0);
}

}  // namespace osc
