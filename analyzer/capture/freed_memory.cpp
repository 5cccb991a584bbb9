#include "analyzer/capture/freed_memory.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace osc {

void returnFreedMemory() {
#if defined(__GLIBC__)
    malloc_trim(0);  // every arena, not only the main one (glibc 2.8 and later)
#endif
}

}  // namespace osc
