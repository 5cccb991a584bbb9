// Which kernel a CPU operator launched, in a PyTorch profiler trace: the
// launch calls (cudaLaunchKernel, cuLaunchKernelEx, hipLaunchKernel...) made
// on the operator's thread, each joined to its kernel by correlation id.
// PyTorch 2.11 writes a collective's arguments on the operator only, so this
// join is how they reach the kernel.
#pragma once

#include "analyzer/capture/model.h"

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace osc::kineto {

class LaunchIndex {
public:
    struct Kernel {
        uint32_t device = kNoId;
        TimeNs start = 0, end = 0;
        uint32_t name = 0;  // in the capture's string table
    };

    // Times as the process's tables hold them.
    LaunchIndex(const Process& process, const StringTable& strings);

    // The first kernel launched on `thread` by a call starting in [from, to]
    // for which `accept` holds; null when none.
    const Kernel* firstKernel(uint64_t thread, TimeNs from, TimeNs to,
                              const std::function<bool(const Kernel&)>& accept) const;

private:
    std::unordered_map<uint32_t, Kernel> kernelOf_;                                      // by correlation id
    std::unordered_map<uint64_t, std::vector<std::pair<TimeNs, uint32_t>>> launchesOf_;  // by thread, start-sorted
};

}  // namespace osc::kineto
