#include "reference_workloads/support/prefetch_schedule.h"

#include <stdexcept>

namespace oscwl {

PrefetchPlan plan_prefetch(int layers, int prefetch) {
    if (layers < 1 || prefetch < 0)
        throw std::invalid_argument("plan_prefetch: layers >= 1 and prefetch >= 0 required");
    PrefetchPlan plan;
    plan.slots = prefetch + 1;
    for (int l = 0; l < layers; ++l) plan.uses.push_back({l, false});
    for (int l = layers - 1; l >= 0; --l) plan.uses.push_back({l, true});
    const int n = static_cast<int>(plan.uses.size());
    plan.before.resize(static_cast<std::size_t>(n));
    int next = 0;  // first use whose gather is not issued yet
    for (int u = 0; u < n; ++u) {
        for (; next < n && next <= u + prefetch; ++next) {
            const int previous_occupant = next - plan.slots;
            plan.before[static_cast<std::size_t>(u)].push_back(
                {next, plan.slot_of(next), previous_occupant >= 0 ? previous_occupant : -1});
        }
    }
    return plan;
}

}  // namespace oscwl
