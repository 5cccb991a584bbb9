// docs/design.md 4d, why the last rank was late: per collective group one
// device arrived at strictly last, the group's median rank, and the two
// ranks' lead-ups (analyzer/metrics/lead_up.h) compared. Per straggler its
// sums and its worst arrival, whose kernels and host activity are named.
//
// Memory: the arrivals of the groups are held a batch at a time (at most
// EngineOptions::instancesInMemory of them, each pass reading every
// device's operations once), then a few numbers per group.
#include "analyzer/crossrank/engine.h"

#include "analyzer/metrics/bottleneck.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace osc::crossrank {
namespace {

// One group with a strict last arrival.
struct LateGroup {
    uint32_t key = 0;
    int last = -1, median = -1;
    uint32_t lastOp = 0, medianOp = 0;
    TimeNs lastStart = 0, medianStart = 0, second = 0;
    // Each side's lead-up, on the job's clock (from), when in a step.
    bool lastLead = false, medianLead = false;
    int32_t lastStep = -1;
    TimeNs lastFrom = 0, lastCompute = 0, lastIdle = 0;
    TimeNs medianFrom = 0, medianCompute = 0, medianIdle = 0;
};

struct Arrival {
    TimeNs start;
    int device;
    uint32_t op;
};

// A kernel's name as a sentence shows it: its parameter list cut off.
std::string shortName(const std::string& name) {
    std::string_view n = name;
    if (n.substr(0, 5) == "void ") n.remove_prefix(5);
    int depth = 0;
    for (size_t i = 0; i < n.size(); ++i) {
        if (n[i] == '<') ++depth;
        if (n[i] == '>' && depth > 0) --depth;
        if (n[i] == '(' && depth == 0 && i > 0) return std::string(n.substr(0, i));
    }
    return std::string(n);
}

// Cumulative time per (host, name) in a lead-up: the sum of the increments
// of its step's operations up to it.
using NameTimes = std::map<std::pair<uint8_t, std::string>, TimeNs>;

// The lead-ups of the operations in `ops` (sorted), each as NameTimes.
std::map<uint32_t, NameTimes> namesAt(const LeadUpDetail& detail, const std::vector<uint32_t>& ops) {
    std::map<uint32_t, NameTimes> out;
    std::map<int32_t, std::map<std::pair<uint8_t, uint32_t>, TimeNs>> running;  // per step
    size_t inc = 0, want = 0;
    for (const auto& lead : detail.leadUps) {
        auto& sums = running[lead.step];
        for (uint32_t k = 0; k < lead.increments && inc < detail.increments.size(); ++k, ++inc) {
            const auto& x = detail.increments[inc];
            sums[{x.host, x.name}] += x.ns;
        }
        while (want < ops.size() && ops[want] < lead.op) ++want;
        if (want < ops.size() && ops[want] == lead.op) {
            NameTimes& t = out[lead.op];
            for (const auto& [key, ns] : sums)
                if (key.second < detail.names.size()) t[{key.first, detail.names[key.second]}] += ns;
        }
    }
    return out;
}

// What the late side spent longer on, per name, largest first (three).
std::vector<NamedTime> longer(const NameTimes& late, const NameTimes& median, uint8_t host) {
    std::vector<NamedTime> out;
    for (const auto& [key, ns] : late) {
        if (key.first != host) continue;
        const auto it = median.find(key);
        const TimeNs d = ns - (it == median.end() ? 0 : it->second);
        if (d > 0) out.push_back({key.second, d});
    }
    std::sort(out.begin(), out.end(),
              [](const NamedTime& a, const NamedTime& b) { return a.ns != b.ns ? a.ns > b.ns : a.name < b.name; });
    if (out.size() > 3) out.resize(3);
    return out;
}

// The finding's sentence; reports name the device before it.
std::string stragglerMessage(const LateArrival& w) {
    std::string m = "arrived " + findingDuration(w.late_ns) + " late at " + w.collective + " #" +
                    std::to_string(w.number) + (w.step.empty() ? "" : " of " + w.step) + " (against the median rank, " +
                    w.medianLabel + "; the others waited " + findingDuration(w.delay_ns) + " for it alone)";
    std::vector<std::pair<TimeNs, std::string>> parts;
    if (w.host_idle_ns && *w.host_idle_ns > 0) {
        std::string p = findingDuration(*w.host_idle_ns) + " of it host-bound (GPU idle)";
        if (!w.host.empty())
            p += w.host[0].name.empty() ? " with nothing recorded on the host" : " in `" + w.host[0].name + "`";
        parts.emplace_back(*w.host_idle_ns, p);
    }
    if (w.compute_ns && *w.compute_ns > 0) {
        std::string p = findingDuration(*w.compute_ns) + " in longer compute kernels";
        if (!w.kernels.empty())
            p += " (`" + shortName(w.kernels[0].name) + "` +" + findingDuration(w.kernels[0].ns) + ")";
        parts.emplace_back(*w.compute_ns, p);
    }
    if (w.late_start_ns && *w.late_start_ns > 0)
        parts.emplace_back(*w.late_start_ns, findingDuration(*w.late_start_ns) + " from starting the step late");
    if (w.other_ns && *w.other_ns > 0)
        parts.emplace_back(*w.other_ns, findingDuration(*w.other_ns) + " in communication and copies before it");
    std::stable_sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t i = 0; i < parts.size(); ++i) m += (i ? ", " : ": ") + parts[i].second;
    return m + ".";
}

}  // namespace

void Engine::stragglerPass() {
    straggler_.assign(n_, std::nullopt);
    stragglerFinding_.assign(n_, std::nullopt);
    if (n_ < 2) return;
    std::vector<LateGroup> late;
    std::vector<uint32_t> lateOf(groups_.size(), ~0u);
    for (uint32_t k : matchedKeys_) {
        const Group& g = groups_[k];
        if (g.atLast != 1) continue;
        lateOf[k] = static_cast<uint32_t>(late.size());
        LateGroup x;
        x.key = k;
        x.last = g.lastDevice;
        x.lastStart = g.lastStart;
        x.second = g.second;
        late.push_back(x);
    }
    if (late.empty()) return;

    // The median rank of each group: its arrivals, a batch of groups at a time.
    std::vector<uint32_t> stamp(groups_.size(), 0);
    std::vector<Arrival> arrivals;
    for (size_t first = 0; first < late.size();) {
        size_t end = first, held = 0;
        std::vector<size_t> offset;
        while (end < late.size() && (end == first || held + groups_[late[end].key].devices <= instancesInMemory_)) {
            offset.push_back(held);
            held += groups_[late[end].key].devices;
            ++end;
        }
        arrivals.assign(held, Arrival{});
        std::vector<size_t> filled(end - first, 0);
        std::fill(stamp.begin(), stamp.end(), 0);
        for (size_t i = 0; i < n_; ++i) {
            const std::vector<OpRecord> ops = shiftedOps(i);
            for (size_t o = 0; o < ops.size(); ++o) {
                const uint32_t k = ops[o].key;
                if (k == kNoKey || stamp[k] == i + 1) continue;
                stamp[k] = static_cast<uint32_t>(i + 1);  // the device's first operation of the key
                const uint32_t l = lateOf[k];
                if (l == ~0u || l < first || l >= end) continue;
                const size_t b = l - first;
                arrivals[offset[b] + filled[b]++] = {ops[o].start_ns, static_cast<int>(i), static_cast<uint32_t>(o)};
                if (static_cast<int>(i) == late[l].last) late[l].lastOp = static_cast<uint32_t>(o);
            }
        }
        for (size_t l = first; l < end; ++l) {
            const auto from = arrivals.begin() + static_cast<std::ptrdiff_t>(offset[l - first]);
            const auto to = from + static_cast<std::ptrdiff_t>(filled[l - first]);
            const auto mid = from + (to - from - 1) / 2;
            std::nth_element(from, mid, to, [](const Arrival& a, const Arrival& b) {
                return std::tie(a.start, a.device) < std::tie(b.start, b.device);
            });
            late[l].median = mid->device;
            late[l].medianOp = mid->op;
            late[l].medianStart = mid->start;
        }
        first = end;
    }

    // Both sides' lead-ups.
    std::vector<std::vector<std::pair<uint32_t, bool>>> wants(n_);  // (late group, is the last device)
    for (uint32_t l = 0; l < late.size(); ++l) {
        wants[static_cast<size_t>(late[l].last)].emplace_back(l, true);
        wants[static_cast<size_t>(late[l].median)].emplace_back(l, false);
    }
    for (size_t i = 0; i < n_; ++i) {
        if (wants[i].empty() || source_.header(i).leadUps == 0) continue;
        const auto leads = source_.leadUps(i);
        const TimeNs by = shiftOf(i);
        for (const auto& [l, isLast] : wants[i]) {
            LateGroup& g = late[l];
            const uint32_t op = isLast ? g.lastOp : g.medianOp;
            const auto it = std::lower_bound(leads.begin(), leads.end(), op,
                                             [](const DeviceIntervals::LeadUp& x, uint32_t v) { return x.op < v; });
            if (it == leads.end() || it->op != op) continue;
            if (isLast) {
                g.lastLead = true;
                g.lastStep = it->step;
                g.lastFrom = it->from_ns + by;
                g.lastCompute = it->compute_ns;
                g.lastIdle = it->idle_ns;
            } else {
                g.medianLead = true;
                g.medianFrom = it->from_ns + by;
                g.medianCompute = it->compute_ns;
                g.medianIdle = it->idle_ns;
            }
        }
    }

    // Per straggler its sums and worst arrival (ties: the first in matched order).
    std::vector<int> worst(n_, -1);
    for (uint32_t l = 0; l < late.size(); ++l) {
        const LateGroup& g = late[l];
        const auto d = static_cast<size_t>(g.last);
        if (!straggler_[d]) straggler_[d] = StragglerMetrics{};
        StragglerMetrics& s = *straggler_[d];
        const TimeNs lateNs = g.lastStart - g.medianStart;
        ++s.late_arrivals;
        s.late_ns += lateNs;
        if (g.lastLead && g.medianLead) {
            const TimeNs start = g.lastFrom - g.medianFrom, compute = g.lastCompute - g.medianCompute,
                         idle = g.lastIdle - g.medianIdle;
            s.late_start_ns += start;
            s.compute_ns += compute;
            s.host_idle_ns += idle;
            s.other_ns += lateNs - start - compute - idle;
        }
        if (worst[d] < 0 ||
            lateNs > late[static_cast<size_t>(worst[d])].lastStart - late[static_cast<size_t>(worst[d])].medianStart)
            worst[d] = static_cast<int>(l);
    }

    // The worst arrivals' names: what each side ran in its lead-up.
    std::vector<std::vector<uint32_t>> opsWanted(n_);
    for (size_t d = 0; d < n_; ++d) {
        if (worst[d] < 0) continue;
        const LateGroup& g = late[static_cast<size_t>(worst[d])];
        if (!g.lastLead || !g.medianLead) continue;
        opsWanted[d].push_back(g.lastOp);
        opsWanted[static_cast<size_t>(g.median)].push_back(g.medianOp);
    }
    std::vector<std::map<uint32_t, NameTimes>> names(n_);
    for (size_t i = 0; i < n_; ++i) {
        if (opsWanted[i].empty()) continue;
        std::sort(opsWanted[i].begin(), opsWanted[i].end());
        names[i] = namesAt(source_.leadUpDetail(i), opsWanted[i]);
    }
    const auto& keys = source_.keys();
    for (size_t d = 0; d < n_; ++d) {
        if (worst[d] < 0) continue;
        const LateGroup& g = late[static_cast<size_t>(worst[d])];
        const CollectiveKey& key = keys[g.key];
        const DeviceHeader& h = source_.header(d);
        LateArrival& w = straggler_[d]->worst;
        w.collective = source_.collectiveNames()[key.name];
        if (key.scheme == 0) w.commHash = key.commHash;
        w.number = key.seq;
        w.collectiveIndex = static_cast<int>(g.lastOp);
        if (g.lastLead && g.lastStep >= 0 && static_cast<size_t>(g.lastStep) < h.steps.size())
            w.step = h.steps[static_cast<size_t>(g.lastStep)].name;
        w.medianDevice = g.median;
        const DeviceHeader& median = source_.header(static_cast<size_t>(g.median));
        w.medianLabel = findingDevice(median.rank, median.host, median.pid, median.device);
        w.late_ns = g.lastStart - g.medianStart;
        w.delay_ns = g.lastStart - g.second;
        if (g.lastLead && g.medianLead) {
            w.late_start_ns = g.lastFrom - g.medianFrom;
            w.compute_ns = g.lastCompute - g.medianCompute;
            w.host_idle_ns = g.lastIdle - g.medianIdle;
            w.other_ns = w.late_ns - *w.late_start_ns - *w.compute_ns - *w.host_idle_ns;
            static const NameTimes kNone;
            const auto at = [&](size_t device, uint32_t op) -> const NameTimes& {
                const auto it = names[device].find(op);
                return it == names[device].end() ? kNone : it->second;
            };
            const NameTimes& mine = at(d, g.lastOp);
            const NameTimes& theirs = at(static_cast<size_t>(g.median), g.medianOp);
            w.kernels = longer(mine, theirs, 0);
            w.host = longer(mine, theirs, 1);
        }
        if (w.late_ns >= rest_.settings.stragglerLateNs && w.late_ns > 0)
            stragglerFinding_[d] = Finding{FindingKind::Straggler, stragglerMessage(w), w.delay_ns};
    }
}

}  // namespace osc::crossrank
