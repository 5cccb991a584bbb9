// Communication kernels recognised by name without any --comm-kernel
// pattern (docs/metrics.md section 2, "Communication kernels recognised by
// default"): NCCL and RCCL, MSCCL, MSCCL++, DeepEP, NVSHMEM and rocSHMEM,
// Transformer Engine userbuffers, PyTorch symmetric memory and vLLM's custom
// all-reduce. Users of these libraries should not have to know that their
// all-to-all or all-reduce is a kernel with its own name before overlap
// comes out right; --comm-kernel adds to this list, it never replaces it.
#pragma once

#include <string_view>

namespace osc {

struct CommKernelFamily {
    std::string_view family;   // "DeepEP", as the docs' table names it
    std::string_view matches;  // what the rule looks for, in words
};

// The family of a communication kernel by its (demangled, else short) name,
// or nullptr when the name is none of them (a compute kernel, unless a
// --comm-kernel pattern says otherwise).
const CommKernelFamily* communicationFamily(std::string_view kernelName);

}  // namespace osc
