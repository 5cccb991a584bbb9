// What a process that builds large tables once and then drops them does with
// the C library's allocator. glibc keeps freed memory in the thread's arena
// for reuse: after a trace is read, the pieces' scratch (a tenth of a 1 GB
// PyTorch trace's capture) stayed resident under the analysis's own peak.
#pragma once

namespace osc {

// Hands the pages freed so far back to the system (glibc: every arena);
// nothing elsewhere. Costs about a millisecond per 100 MB held.
void returnFreedMemory();

}  // namespace osc
