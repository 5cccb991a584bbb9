// A temporary file that SIGINT, SIGTERM or SIGHUP must not leave behind: the
// output writers register theirs while they write (a report can take minutes
// to stream), and a handler removes them before the signal takes its usual
// course. Handlers are installed only while something is registered, and
// never for a signal the process ignores (nohup), so the exit status and a
// host program's own handling stay what they were.
#pragma once

#include <string>

namespace osc::output {

class TemporaryFileGuard {
public:
    // `dir` (a descriptor that stays open longer than the guard) and `name` in it.
    TemporaryFileGuard(int dir, const std::string& name);
    ~TemporaryFileGuard();
    TemporaryFileGuard(const TemporaryFileGuard&) = delete;
    TemporaryFileGuard& operator=(const TemporaryFileGuard&) = delete;

private:
    int slot_ = -1;  // -1: not registered (every slot taken)
};

}  // namespace osc::output
