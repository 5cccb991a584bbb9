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

}  // namespace osc::gui
