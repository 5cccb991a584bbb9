// A process the agent is injected into that dies of a fault (SIGSEGV,
// SIGBUS, SIGILL, SIGFPE) says so on stderr before it dies: which signal,
// the faulting address, the thread (id and name), and the stack of that
// thread with each frame's library, so that a crash inside the agent or its
// NCCL plugin can be told from one in the application. Then the fault takes
// its course exactly as without us: the handler that was there before ours
// runs (Python's faulthandler prints its stacks), else the default action
// (termination, a core dump where enabled). OVERLAPSCOPE_CRASH_REPORT=0 turns
// it off.
#pragma once

namespace osc::agent {

// Idempotent; a signal the application ignores is left ignored.
void installCrashReport();

}  // namespace osc::agent
