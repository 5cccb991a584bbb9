// How the window process uses the C library's allocator. Its workers (the
// load, the hang analysis, the What-if replay) build large structures once
// and free their scratch; glibc keeps freed memory in the thread's arena
// for reuse and gives each new worker thread an arena of its own, so at
// 1,024 ranks about 0.1 GiB of the window's resident size was memory
// nothing used.
#pragma once

namespace osc::gui {

// At most two arenas: the GUI thread's and one the workers share (they
// allocate in large blocks, so they hardly contend). Call first in main(),
// before any thread starts. A worker calls returnFreedMemory()
// (analyzer/capture/freed_memory.h) once its scratch is gone, so that the
// next worker's peak does not come on top.
void limitAllocatorArenas();

}  // namespace osc::gui
