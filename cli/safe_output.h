// The one way the CLI writes a file the user named (report -o, check --junit,
// export -o, diff -o), so that no output clobbers what it should not:
//  - a regular file is written under a fresh temporary name in its own
//    directory (mkstemp: O_CREAT|O_EXCL, never following a planted symlink,
//    mode 0600 until complete) and renamed over the target only at the end,
//    so an interrupted write never leaves half a report under the real name;
//  - an existing regular file is replaced only when `overwrite`, and a file
//    that appears while we write is not replaced without it either;
//  - a symbolic link the user named is followed: its target is written (or
//    replaced, when it is a regular file), the link stays;
//  - a character device or FIFO (/dev/null, /dev/stdout, a pipe) is written
//    through in place and never replaced by a regular file;
//  - directories, sockets, block devices and dangling links are refused.
// Every problem is a CaptureError naming the path.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace osc::cli {

// Writes what `write` produces to `path`, by the rules above. An exception
// thrown by `write` removes the temporary file and propagates unchanged.
void writeFileSafely(const std::string& path, const std::function<void(std::ostream&)>& write, bool overwrite);

// Throws the CaptureError writeFileSafely would throw before writing anything
// (an existing file without `overwrite`, a directory, ...): lets a command
// refuse before a long load.
void checkOutputPath(const std::string& path, bool overwrite);

}  // namespace osc::cli
