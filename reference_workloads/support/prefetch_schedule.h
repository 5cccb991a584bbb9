// FSDP weight-gather schedule. A step uses every layer twice: forward
// 0..L-1, then backward L-1..0 (weights are re-gathered for backward, as
// FSDP does after resharding). The gather for use j is issued `prefetch`
// uses ahead into slot j % (prefetch + 1) and waits until the compute of use
// j - prefetch - 1 (the slot's previous occupant) has finished. prefetch 0
// therefore serialises gather and compute; 1 or 2 let the gather of the next
// layer(s) run under the current layer's GEMMs.
#pragma once

#include <vector>

namespace oscwl {

struct LayerUse {
    int layer;
    bool backward;
};

struct GatherIssue {
    int use;           // which use this gather feeds
    int slot;          // gathered-weight buffer it writes
    int wait_compute;  // use whose compute must finish first, or -1
};

struct PrefetchPlan {
    int slots = 1;
    std::vector<LayerUse> uses;                    // 2L uses in execution order
    std::vector<std::vector<GatherIssue>> before;  // gathers issued just before use u's compute
    int slot_of(int use) const { return use % slots; }
};

PrefetchPlan plan_prefetch(int layers, int prefetch);

}  // namespace oscwl
