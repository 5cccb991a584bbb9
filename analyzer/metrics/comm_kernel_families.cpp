#include "analyzer/metrics/comm_kernel_families.h"

#include "analyzer/metrics/classify.h"

#include <array>

namespace osc {
namespace {

// Kernel names are matched as plain text: a prefix of the name (after a
// leading "void "), or a part anywhere in it (kernels of these libraries
// live in namespaces and templates: "void deep_ep::intranode::dispatch<8>
// (...)", "void (anonymous namespace)::multimem_all_reduce_kernel<c10::
// BFloat16, 16>(...)"). DeepEP's namespaces are matched as namespaces.
struct Entry {
    CommKernelFamily family;
    std::array<std::string_view, 2> prefixes;
    std::array<std::string_view, 4> parts;
    std::array<std::string_view, 2> deepEpNamespaces;
};

constexpr std::array<Entry, 8> kFamilies = {{
    {{"NCCL, RCCL",
      "name starts with nccl (ncclKernel_, ncclDevKernel_, ncclSymkDevKernel_, RCCL's "
      "ncclDevKernel_Generic)"},
     {"nccl"},
     {},
     {}},
    {{"MSCCL", "name starts with mscclKernel_"}, {"mscclKernel_"}, {}, {}},
    {{"MSCCL++", "name contains mscclpp::"}, {}, {"mscclpp::"}, {}},
    {{"DeepEP",
      "deep_ep:: or dpsk::ep:: followed by intranode::, internode:: or internode_ll:: (dispatch, "
      "combine, notify_dispatch, cached_notify)"},
     {},
     {},
     {"deep_ep::", "dpsk::ep::"}},
    {{"NVSHMEM, rocSHMEM", "name starts with nvshmem or rocshmem, or contains _on_stream_kernel"},
     {"nvshmem", "rocshmem"},
     {"_on_stream_kernel"},
     {}},
    {{"Transformer Engine userbuffers", "name contains userbuffers"}, {}, {"userbuffers"}, {}},
    {{"PyTorch symmetric memory",
      "name contains multimem_all_reduce, multimem_all_gather, one_shot_all_reduce or "
      "two_shot_all_reduce"},
     {},
     {"multimem_all_reduce", "multimem_all_gather", "one_shot_all_reduce", "two_shot_all_reduce"},
     {}},
    {{"vLLM custom all-reduce", "name contains cross_device_reduce"}, {}, {"cross_device_reduce"}, {}},
}};

bool identifierChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// DeepEP's communication kernels, and not its layout kernel
// (deep_ep::layout::get_dispatch_layout, dpsk::ep::cuda::get_dispatch_layout)
// nor other namespaces ending in the same letters (cdpsk::ep::CUB_...).
bool deepEpCommunication(std::string_view name, std::string_view ns) {
    for (size_t at = name.find(ns); at != std::string_view::npos; at = name.find(ns, at + 1)) {
        if (at > 0 && identifierChar(name[at - 1])) continue;
        const std::string_view rest = name.substr(at + ns.size());
        for (std::string_view mode : {"intranode::", "internode::", "internode_ll::"})
            if (rest.starts_with(mode)) return true;
    }
    return false;
}

}  // namespace

const CommKernelFamily* communicationFamily(std::string_view name) {
    const std::string_view bare = bareKernelName(name);
    for (const Entry& e : kFamilies) {
        for (std::string_view p : e.prefixes)
            if (!p.empty() && bare.starts_with(p)) return &e.family;
        for (std::string_view p : e.parts)
            if (!p.empty() && name.find(p) != std::string_view::npos) return &e.family;
        for (std::string_view ns : e.deepEpNamespaces)
            if (!ns.empty() && deepEpCommunication(name, ns)) return &e.family;
    }
    return nullptr;
}

}  // namespace osc
