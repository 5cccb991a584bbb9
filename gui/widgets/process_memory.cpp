#include "gui/widgets/process_memory.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace osc::gui {

void limitAllocatorArenas() {
#if defined(__GLIBC__)
    mallopt(M_ARENA_MAX, 2);
#endif
}

void returnFreedMemory() {
#if defined(__GLIBC__)
    malloc_trim(0);  // every arena, not only the main one (glibc 2.8 and later)
#endif
}

}  // namespace osc::gui
