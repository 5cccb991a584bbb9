// A scoped NVTX push/pop range. The analyzer finds steps by the names
// "step N" and phases by "forward", "backward", "optimizer".
#pragma once

#include <nvtx3/nvToolsExt.h>

#include <string>

namespace oscwl {

class NvtxRange {
public:
    explicit NvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
    ~NvtxRange() { nvtxRangePop(); }
    NvtxRange(const NvtxRange&) = delete;
    NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace oscwl
