#include "analyzer/metrics/alltoall.h"

#include "analyzer/metrics/bottleneck.h"
#include "analyzer/metrics/step_keys.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <map>

namespace osc {
namespace {

void addOptional(std::optional<uint64_t>& sum, const std::optional<uint64_t>& v, bool& known) {
    if (!v)
        known = false;
    else
        sum = sum.value_or(0) + *v;
}

std::string mib(double bytes) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024.0));
    return buf;
}

std::string factor(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2fx", v);
    return buf;
}

void imbalanceAndFinding(Analysis& a, AllToAllStep& s, const StepKey& key,
                         const std::vector<std::vector<StepKey>>& keysOf) {
    const double n = static_cast<double>(s.ranks.size());
    if (s.ranks.size() < 2) return;
    bool allBytes = true;
    double bytesSum = 0, timeSum = 0;
    for (const auto& r : s.ranks) {
        if (!r.bytes)
            allBytes = false;
        else
            bytesSum += static_cast<double>(*r.bytes);
        timeSum += static_cast<double>(r.time_ns);
    }
    size_t byBytes = 0, byTime = 0;
    for (size_t i = 1; i < s.ranks.size(); ++i) {
        if (allBytes && *s.ranks[i].bytes > *s.ranks[byBytes].bytes) byBytes = i;
        if (s.ranks[i].time_ns > s.ranks[byTime].time_ns) byTime = i;
    }
    if (allBytes && bytesSum > 0) s.bytes_imbalance = static_cast<double>(*s.ranks[byBytes].bytes) / (bytesSum / n);
    if (timeSum > 0) s.time_imbalance = static_cast<double>(s.ranks[byTime].time_ns) / (timeSum / n);
    if (!s.bytes_imbalance && !s.time_imbalance) return;
    const size_t hot = s.bytes_imbalance ? byBytes : byTime;
    s.overloaded = s.ranks[hot].device;
    const double value = s.bytes_imbalance ? *s.bytes_imbalance : *s.time_imbalance;
    if (value < a.settings.alltoallImbalance) return;

    auto& dev = a.devices[static_cast<size_t>(s.overloaded)];
    const std::string where = key.second < 0 ? "outside the steps" : "of the step";
    std::string msg = findingDevice(dev) + " ";
    if (s.bytes_imbalance)
        msg += "moves " + factor(value) + " the mean all-to-all bytes " + where + " (" +
               mib(static_cast<double>(*s.ranks[hot].bytes)) + " sent and received against a mean of " +
               mib(bytesSum / n);
    else
        msg += "spends " + factor(value) + " the mean all-to-all transfer time " + where + " (" +
               findingDuration(s.ranks[hot].time_ns) + " against a mean of " +
               findingDuration(static_cast<TimeNs>(timeSum / n));
    msg += " over " + std::to_string(s.ranks.size()) + " ranks, " + std::to_string(s.dispatches) +
           " exchange(s)): the other ranks wait for it. Rebalance the tokens (router auxiliary loss, "
           "capacity factor, expert placement).";
    Finding f{FindingKind::AllToAllImbalance, msg, s.ranks[hot].exposed_ns};
    const auto& keys = keysOf[static_cast<size_t>(s.overloaded)];
    const auto at = std::find(keys.begin(), keys.end(), key);
    if (at != keys.end())
        addFinding(dev.steps[static_cast<size_t>(at - keys.begin())].bottleneck.findings, std::move(f));
    else
        addFinding(dev.findings, std::move(f));
}

}  // namespace

AllToAllBytes allToAllBytes(const CollectiveInstance& op) {
    AllToAllBytes b;
    if (!op.p2p.empty()) {
        uint64_t sent = 0, received = 0;
        for (const auto& part : op.p2p) {
            if (part.peer == op.commRank) continue;  // a local copy
            (part.send ? sent : received) += part.bytes;
        }
        b.sent = sent;
        b.received = received;
        b.total = sent + received;
    } else if (op.bytes) {
        b.total = op.bytes;
    }
    return b;
}

void deviceAllToAll(DeviceAnalysis& dev, const std::vector<AllToAllOp>& ops, const IntervalSet* exposedComm) {
    IntervalSetBuilder builder;
    AllToAllMetrics total;
    bool sentKnown = true;
    std::vector<AllToAllMetrics> perStep(dev.steps.size());
    std::vector<char> stepKnown(dev.steps.size(), 1);
    for (const auto& op : ops) {
        builder.add(op.start_ns, op.end_ns);
        const AllToAllBytes& b = op.bytes;
        ++total.ops;
        total.transfer_ns += op.transfer_ns;
        addOptional(total.bytes_sent, b.sent, sentKnown);
        addOptional(total.bytes_received, b.received, sentKnown);
        if (op.step >= 0 && static_cast<size_t>(op.step) < perStep.size()) {
            auto& m = perStep[static_cast<size_t>(op.step)];
            bool known = stepKnown[static_cast<size_t>(op.step)];
            ++m.ops;
            m.transfer_ns += op.transfer_ns;
            addOptional(m.bytes_sent, b.sent, known);
            addOptional(m.bytes_received, b.received, known);
            stepKnown[static_cast<size_t>(op.step)] = known;
        }
    }
    const IntervalSet all = builder.finish();
    const IntervalSet exposed = exposedComm ? intersect(all, *exposedComm) : all;
    total.alltoall_ns = totalLength(all);
    total.exposed_alltoall_ns = totalLength(exposed);
    if (!sentKnown) total.bytes_sent = total.bytes_received = std::nullopt;
    dev.alltoall = total;
    for (size_t s = 0; s < dev.steps.size(); ++s) {
        auto& m = perStep[s];
        const Interval w{dev.steps[s].start_ns, dev.steps[s].end_ns};
        m.alltoall_ns = lengthWithin(all, w);
        m.exposed_alltoall_ns = lengthWithin(exposed, w);
        if (!stepKnown[s]) m.bytes_sent = m.bytes_received = std::nullopt;
        if (m.ops > 0 || m.alltoall_ns > 0) dev.steps[s].alltoall = m;
    }
}

void AllToAllSteps::exchange(const StepKey& key, TimeNs firstStart) {
    Build& b = steps_[key];
    b.out.step = key.first;
    b.out.occurrence = key.second;
    b.firstStart = std::min(b.firstStart, firstStart);
    ++b.out.dispatches;
}

void AllToAllSteps::instance(const StepKey& key, int device, TimeNs transfer_ns, TimeNs exposed_ns,
                             const std::optional<uint64_t>& bytes) {
    Build& b = steps_[key];
    auto [slot, fresh] = b.rankOf.try_emplace(device, b.out.ranks.size());
    if (fresh) {
        b.out.ranks.push_back({device, 0, 0, std::nullopt});
        b.bytesKnown[device] = true;
    }
    AllToAllRank& r = b.out.ranks[slot->second];
    r.time_ns += transfer_ns;
    r.exposed_ns += exposed_ns;  // replaced by the step's exposed time in finish() when known
    addOptional(r.bytes, bytes, b.bytesKnown[device]);
}

void AllToAllSteps::pair(const StepKey& key, int src, int dst, uint64_t bytes) {
    steps_[key].pairs[{src, dst}] += bytes;
}

void AllToAllSteps::finish(Analysis& a, const std::vector<std::vector<StepKey>>& keysOf) {
    std::vector<std::pair<TimeNs, StepKey>> order;
    for (auto& [key, b] : steps_) {
        for (auto& r : b.out.ranks) {
            if (!b.bytesKnown[r.device]) r.bytes.reset();
            // The rank's exposed all-to-all in its own window of the step.
            const auto& keys = keysOf[static_cast<size_t>(r.device)];
            const auto at = std::find(keys.begin(), keys.end(), key);
            if (at != keys.end()) {
                const auto& st = a.devices[static_cast<size_t>(r.device)].steps[static_cast<size_t>(at - keys.begin())];
                if (st.alltoall) r.exposed_ns = st.alltoall->exposed_alltoall_ns;
            }
            b.out.exposed_ns += r.exposed_ns;
        }
        std::sort(b.out.ranks.begin(), b.out.ranks.end(),
                  [](const AllToAllRank& x, const AllToAllRank& y) { return x.device < y.device; });
        for (const auto& [pair, bytes] : b.pairs) b.out.pairs.push_back({pair.first, pair.second, bytes});
        imbalanceAndFinding(a, b.out, key, keysOf);
        order.emplace_back(b.firstStart, key);
    }
    std::sort(order.begin(), order.end());
    for (const auto& [start, key] : order) a.alltoall.push_back(std::move(steps_[key].out));
}

void markAllToAll(std::vector<CollectiveInstance>& ops) {
    std::vector<char> to, from;
    for (auto& op : ops) {
        if (op.collective == "AllToAll") {
            op.allToAll = true;
            continue;
        }
        const int32_t n = op.commSize;
        // Sends to and receives from every other rank need 2(n - 1) parts,
        // which also bounds the work for a communicator size read from a file.
        if (op.collective != "SendRecv" || n < 3 || op.commRank < 0 || op.commRank >= n ||
            op.p2p.size() < 2 * static_cast<size_t>(n - 1))
            continue;
        to.assign(static_cast<size_t>(n), 0);
        from.assign(static_cast<size_t>(n), 0);
        for (const auto& part : op.p2p)
            if (part.peer >= 0 && part.peer < n) (part.send ? to : from)[static_cast<size_t>(part.peer)] = 1;
        bool every = true;
        for (int32_t r = 0; r < n && every; ++r)
            if (r != op.commRank && (!to[static_cast<size_t>(r)] || !from[static_cast<size_t>(r)])) every = false;
        op.allToAll = every;
    }
}

}  // namespace osc
