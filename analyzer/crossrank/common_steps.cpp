#include "analyzer/crossrank/common_steps.h"

#include "analyzer/metrics/bottleneck.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace osc::crossrank {
namespace {

// A device's step names in time order, or empty when they repeat (steps
// that cannot be told apart by name cannot be compared across ranks).
std::vector<std::string> distinctSteps(const DeviceHeader& h) {
    std::vector<const StepHeader*> steps;
    for (const auto& s : h.steps) steps.push_back(&s);
    std::stable_sort(steps.begin(), steps.end(),
                     [](const StepHeader* a, const StepHeader* b) { return a->start_ns < b->start_ns; });
    std::vector<std::string> names;
    std::set<std::string> seen;
    for (const StepHeader* s : steps) {
        if (!seen.insert(s->name).second) return {};
        names.push_back(s->name);
    }
    return names;
}

std::string span(const std::vector<std::string>& names) {
    if (names.empty()) return "no step";
    if (names.size() == 1) return names.front();
    return names.front() + " to " + names.back();
}

}  // namespace

CommonStepSource::CommonStepSource(const DeviceSource& inner) : inner_(inner) {
    const size_t n = inner.deviceCount();
    if (n < 2) return;
    // A device's steps are those that launched GPU work on it: with only a
    // step or two, one missing on a device is as likely a step that launched
    // nothing there as a capture that began or ended elsewhere.
    constexpr size_t kFewestSteps = 3;
    std::vector<std::vector<std::string>> names(n);
    for (size_t d = 0; d < n; ++d) {
        names[d] = distinctSteps(inner.header(d));
        if (names[d].size() < kFewestSteps) return;
    }
    std::set<std::string> common(names[0].begin(), names[0].end());
    bool same = true;
    for (size_t d = 1; d < n; ++d) {
        const std::set<std::string> mine(names[d].begin(), names[d].end());
        same = same && mine == common;
        std::set<std::string> both;
        std::set_intersection(common.begin(), common.end(), mine.begin(), mine.end(),
                              std::inserter(both, both.begin()));
        common = std::move(both);
    }
    if (same) return;

    // Ordinal keys (scheme 1) by (collective, ordinal), to number them again.
    const std::vector<CollectiveKey>& all = inner.keys();
    std::map<std::pair<uint32_t, uint64_t>, uint32_t> ordinalKey;
    for (uint32_t k = 0; k < all.size(); ++k)
        if (all[k].scheme == 1) ordinalKey.emplace(std::make_pair(all[k].name, all[k].seq), k);
    keys_.resize(n);
    for (size_t d = 0; d < n; ++d) {
        const DeviceHeader& h = inner.header(d);
        const std::vector<OpRecord> ops = inner.ops(d);
        const std::vector<BandwidthRecord> steps = inner.bandwidth(d);
        std::unordered_map<uint32_t, uint64_t> ordinal;  // per collective name, from the first common step
        keys_[d].reserve(ops.size());
        for (size_t i = 0; i < ops.size(); ++i) {
            const int32_t s = i < steps.size() ? steps[i].step : -1;
            const bool inCommon = s >= 0 && static_cast<size_t>(s) < h.steps.size() && common.count(h.steps[s].name);
            uint32_t key = inCommon ? ops[i].key : kNoKey;
            if (key != kNoKey && all[key].scheme == 1) {
                const auto it = ordinalKey.find({all[key].name, ordinal[all[key].name]++});
                key = it == ordinalKey.end() ? kNoKey : it->second;
            }
            keys_[d].push_back(key);
        }
    }

    std::vector<std::string> commonNames;
    for (const auto& name : names[0])
        if (common.count(name)) commonNames.push_back(name);
    std::string who;
    size_t listed = 0;
    for (size_t d = 0; d < n; ++d) {
        if (d > 0 && names[d] == names[d - 1] && inner.processOf(d) == inner.processOf(d - 1)) continue;
        if (listed == 4) {
            who += ", ...";
            break;
        }
        const DeviceHeader& h = inner.header(d);
        who += (listed++ ? ", " : "") + findingDevice(h.rank, h.host, h.pid, h.device) + " " + span(names[d]);
    }
    note_ = "the captures cover different steps (" + who + "): ";
    if (common.empty())
        note_ += "they hold no step in common, so no collective is matched across ranks";
    else
        note_ += "collectives are matched across ranks, and last arrivals and waiting judged, over the " +
                 std::to_string(common.size()) + " step" + (common.size() == 1 ? "" : "s") + " all of them hold (" +
                 span(commonNames) + ")";
}

std::vector<OpRecord> CommonStepSource::ops(size_t device) const {
    std::vector<OpRecord> ops = inner_.ops(device);
    if (keys_.empty()) return ops;
    for (size_t i = 0; i < ops.size() && i < keys_[device].size(); ++i) ops[i].key = keys_[device][i];
    return ops;
}

}  // namespace osc::crossrank
