// The one way the tools write a file the user named (report -o, check
// --junit, export -o, diff -o, merge -o, report --partial, the GUI's
// screenshot, the agent's partial results), so that no output clobbers what
// it should not:
//  - the path is walked by output_path.h: a symbolic link anyone else could
//    have planted is refused, never followed;
//  - a regular file is written under a fresh temporary name in its own
//    directory (.NAME.tmp-XXXXXX, created exclusively, mode 0600 until
//    complete; NAME shortened where the whole would pass the file system's
//    name limit) and renamed over the target only at the end, so an
//    interrupted write never leaves half a file under the real name, and a
//    signal that ends the process removes the temporary;
//  - an existing regular file is replaced only when `overwrite`, and a file
//    that appears while we write is not replaced without it either;
//  - a character device or FIFO (/dev/null, /dev/stdout, a pipe) is written
//    through in place and never replaced; a FIFO nobody reads is refused
//    rather than waited on;
//  - directories, sockets, block devices and dangling links are refused.
// Every problem is a CaptureError naming the path.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace osc::output {

struct WriteOptions {
    bool overwrite = false;
    // Remove the temporary when SIGINT, SIGTERM or SIGHUP ends the process
    // (temp_cleanup.h). Off inside a host process (the agent), whose signals
    // belong to the application.
    bool removeOnSignal = true;
};

// Writes what `write` produces to `path`, by the rules above. An exception
// thrown by `write` removes the temporary file and propagates unchanged.
void writeFileSafely(const std::string& path, const std::function<void(std::ostream&)>& write,
                     const WriteOptions& options);
inline void writeFileSafely(const std::string& path, const std::function<void(std::ostream&)>& write, bool overwrite) {
    writeFileSafely(path, write, WriteOptions{.overwrite = overwrite});
}

// Throws the CaptureError writeFileSafely would throw before writing anything
// (an existing file without `overwrite`, a directory, a planted link, ...):
// lets a command refuse before a long load.
void checkOutputPath(const std::string& path, bool overwrite);

}  // namespace osc::output
