#include "analyzer/import/kineto_launches.h"

#include "analyzer/capture/api_call_names.h"

#include <algorithm>

namespace osc::kineto {

LaunchIndex::LaunchIndex(const Process& p, const StringTable& strings) {
    for (const Device& d : p.devices)
        for (size_t i = 0; i < d.kernels.size(); ++i)
            if (d.kernels.correlation[i] != 0)
                kernelOf_[d.kernels.correlation[i]] = {d.id, d.kernels.start[i], d.kernels.end[i], d.kernels.name[i]};
    const ApiCallTable& a = p.apiCalls;
    for (size_t i = 0; i < a.size(); ++i)
        if (a.correlation[i] != 0 && launchesGpuWork(strings.at(a.name[i])))
            launchesOf_[a.globalTid[i]].emplace_back(a.start[i], a.correlation[i]);
    for (auto& [thread, launches] : launchesOf_) std::sort(launches.begin(), launches.end());
}

const LaunchIndex::Kernel* LaunchIndex::firstKernel(uint64_t thread, TimeNs from, TimeNs to,
                                                    const std::function<bool(const Kernel&)>& accept) const {
    const auto it = launchesOf_.find(thread);
    if (it == launchesOf_.end()) return nullptr;
    auto l = std::lower_bound(it->second.begin(), it->second.end(), std::pair(from, uint32_t{0}));
    for (; l != it->second.end() && l->first <= to; ++l)
        if (const auto k = kernelOf_.find(l->second); k != kernelOf_.end() && accept(k->second)) return &k->second;
    return nullptr;
}

}  // namespace osc::kineto
