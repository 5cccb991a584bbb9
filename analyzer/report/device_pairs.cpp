#include "analyzer/report/device_pairs.h"

#include <map>
#include <tuple>

namespace osc::report {

std::vector<DevicePair> pairDevices(const Analysis& base, const Analysis& candidate) {
    using Key = std::tuple<int, uint32_t, int>;  // rank, GPU, occurrence
    std::map<Key, DevicePair> byKey;
    const auto add = [&](const Analysis& a, int DevicePair::*side) {
        std::map<std::pair<int, uint32_t>, int> seen;
        for (size_t i = 0; i < a.devices.size(); ++i) {
            const auto& d = a.devices[i];
            byKey[{d.rank, d.device, seen[{d.rank, d.device}]++}].*side = static_cast<int>(i);
        }
    };
    add(base, &DevicePair::base);
    add(candidate, &DevicePair::candidate);
    std::vector<DevicePair> out;
    out.reserve(byKey.size());
    for (const auto& [key, pair] : byKey) out.push_back(pair);
    return out;
}

}  // namespace osc::report
