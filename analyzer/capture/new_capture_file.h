// Where a new capture file goes, made safe before SQLite opens it by name.
// The directory is walked by analyzer/output/output_path.h (a link someone
// else could have planted is refused), the file is created exclusively and
// never through a link, and the side files an earlier capture of the same
// name left (-wal, -shm, -journal) are removed first: SQLite would replay
// them into the new file. SQLite itself opens every file with O_NOFOLLOW, so
// a link planted later makes it fail rather than write elsewhere
// (sqlite_util.cpp says so in words). Whatever is in the way and cannot be
// removed is named, with its owner when it is a link.
#pragma once

#include "analyzer/output/output_path.h"

#include <string>

namespace osc {

class NewCaptureFile {
public:
    // Throws CaptureError(path, ...). Without `overwrite` an existing file (or
    // link) at `path` is refused; with it, the name is replaced, never followed.
    NewCaptureFile(const std::string& path, bool overwrite);
    // Removes the file again unless keep() was called: a capture that could
    // not be started leaves nothing behind.
    ~NewCaptureFile();
    NewCaptureFile(const NewCaptureFile&) = delete;
    NewCaptureFile& operator=(const NewCaptureFile&) = delete;

    // The name SQLite opens: the directory as the kernel resolved it, so no
    // link on the way is looked up again.
    const std::string& sqlitePath() const { return sqlitePath_; }
    void keep() { kept_ = true; }

private:
    std::string path_;
    output::Fd dir_;
    std::string name_, sqlitePath_;
    bool kept_ = false;
};

}  // namespace osc
