#include "analyzer/capture/api_call_names.h"

#include "analyzer/capture/model.h"

#include <algorithm>
#include <array>
#include <vector>

namespace osc {
namespace {

bool endsWith(std::string_view s, std::string_view tail) {
    return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

bool removePerThreadSuffix(std::string_view& name) {
    if (!endsWith(name, "_ptsz") && !endsWith(name, "_ptds")) return false;
    name.remove_suffix(5);
    return true;
}

void removeVersionSuffix(std::string_view& name) {
    const size_t v = name.rfind("_v");
    if (v == std::string_view::npos || v + 2 == name.size()) return;
    const std::string_view digits = name.substr(v + 2);
    if (std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        name = name.substr(0, v);
}

// "cudaLaunchKernel_ptsz_v7000" -> "cudaLaunchKernel": CUPTI names end in
// the API version and a per-thread default stream variant, in either order,
// each at most once.
std::string_view baseName(std::string_view name) {
    removePerThreadSuffix(name);
    removeVersionSuffix(name);
    removePerThreadSuffix(name);
    return name;
}

constexpr std::array<std::string_view, 7> kKernelLaunches = {
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchCooperativeKernel", "cudaLaunch",
    "cuLaunchKernel",   "cuLaunchKernelEx",    "cuLaunchCooperativeKernel",
};

// cudaMemcpyAsync, cudaMemcpy2DAsync, cudaMemsetAsync, cuMemcpyHtoDAsync,
// cuMemsetD32Async...; not cudaMemPrefetchAsync or cuMemAllocAsync.
bool isAsyncCopyOrMemset(std::string_view base) {
    if (!endsWith(base, "Async")) return false;
    for (std::string_view prefix : {"cudaMem", "cuMem"}) {
        if (base.substr(0, prefix.size()) != prefix) continue;
        const std::string_view rest = base.substr(prefix.size());
        return rest.substr(0, 3) == "cpy" || rest.substr(0, 3) == "set";
    }
    return false;
}

}  // namespace

bool launchesGpuWork(std::string_view apiName) {
    return apiName.find("LaunchKernel") != std::string_view::npos ||
           apiName.find("LaunchCooperativeKernel") != std::string_view::npos ||
           apiName.find("GraphLaunch") != std::string_view::npos;
}

ApiCallRole apiCallRole(std::string_view cuptiName) {
    const std::string_view base = baseName(cuptiName);
    if (base == "cudaGraphLaunch" || base == "cuGraphLaunch") return ApiCallRole::GraphLaunch;
    if (base == "cudaStreamBeginCapture" || base == "cuStreamBeginCapture" || base == "cudaStreamBeginCaptureToGraph" ||
        base == "cuStreamBeginCaptureToGraph")
        return ApiCallRole::BeginStreamCapture;
    if (base == "cudaStreamEndCapture" || base == "cuStreamEndCapture") return ApiCallRole::EndStreamCapture;
    if (std::find(kKernelLaunches.begin(), kKernelLaunches.end(), base) != kKernelLaunches.end())
        return ApiCallRole::KernelLaunch;
    if (isAsyncCopyOrMemset(base)) return ApiCallRole::AsyncCopyOrMemset;
    return ApiCallRole::Other;
}

ApiFamily apiFamily(std::string_view name) { return name.starts_with("hip") ? ApiFamily::Hip : ApiFamily::Cuda; }

std::string apiFamiliesOf(const Capture& capture) {
    bool cuda = false, hip = false;
    std::vector<int8_t> seen;  // by name id: whether looked at
    for (const Process& p : capture.processes)
        for (uint32_t name : p.apiCalls.name) {
            if (name >= seen.size()) seen.resize(name + 1, 0);
            if (seen[name]) continue;
            seen[name] = 1;
            (apiFamily(capture.strings.at(name)) == ApiFamily::Hip ? hip : cuda) = true;
        }
    if (hip) return cuda ? "CUDA and HIP" : "HIP";
    return "CUDA";
}

}  // namespace osc
