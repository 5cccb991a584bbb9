// The pipeline bubble and the all-to-all balance (docs/metrics.md 7e, 7f).
// Both need every device at once (a pipeline window spans all stages; an
// exchange's transfer starts at its last arrival), so they run the metrics'
// own phases (pipeline_bubble.h, alltoall.h) on the devices' shells,
// reading each device's compute or all-to-all operations once.
#include "analyzer/crossrank/engine.h"
#include "analyzer/metrics/alltoall.h"
#include "analyzer/metrics/pipeline_bubble.h"
#include "analyzer/metrics/step_keys.h"

#include <algorithm>
#include <unordered_map>

namespace osc::crossrank {

void Engine::pipelinePass() {
    const size_t n = n_;
    std::vector<std::vector<DeviceIntervals::MicroBatches>> shiftedBatches(n);
    std::vector<const std::vector<DeviceIntervals::MicroBatches>*> microbatchesOf(n, nullptr);
    for (size_t i = 0; i < n; ++i) {
        const DeviceHeader& d = source_.header(i);
        if (d.microbatches.empty()) continue;
        const TimeNs by = shiftOf(i);
        shiftedBatches[i] = d.microbatches;
        for (auto& mb : shiftedBatches[i]) {
            mb.compute.start += by;
            mb.compute.end += by;
        }
        microbatchesOf[i] = &shiftedBatches[i];
    }
    const PipelinePlan plan = planPipeline(rest_, microbatchesOf);
    if (plan.windows.empty()) return;
    // Each device's compute read once, measured against all its windows.
    std::vector<std::vector<std::pair<size_t, size_t>>> stagesOf(n);  // (window, stage)
    std::vector<std::vector<PipelineStageMeasure>> measured(plan.windows.size());
    for (size_t w = 0; w < plan.windows.size(); ++w) {
        measured[w].resize(plan.windows[w].stages.size());
        for (size_t s = 0; s < plan.windows[w].stages.size(); ++s)
            stagesOf[static_cast<size_t>(plan.windows[w].stages[s].device)].emplace_back(w, s);
    }
    for (size_t i = 0; i < n; ++i) {
        if (stagesOf[i].empty()) continue;
        const IntervalSet compute = shifted(source_.compute(i), i);
        for (const auto& [w, s] : stagesOf[i]) {
            const PipelineStep& p = plan.windows[w].step;
            measured[w][s] = measurePipelineStage(compute, {p.start_ns, p.end_ns});
        }
    }
    finishPipeline(rest_, plan, measured);
}

void Engine::allToAllPass() {
    const size_t n = n_;
    bool any = false;
    for (size_t i = 0; i < n; ++i) any = any || source_.header(i).alltoallOps > 0;
    if (!any) return;
    std::vector<std::vector<StepKey>> keysOf(n);
    for (size_t i = 0; i < n; ++i) keysOf[i] = stepKeys(rest_.devices[i]);

    // One device at a time, in job order: an exchange's step is its first
    // instance's, on the lowest device of the exchange, so it is known
    // before any other instance is read.
    AllToAllSteps steps;
    std::unordered_map<uint32_t, StepKey> keyStep;  // collective group -> its step
    std::vector<std::optional<StepKey>> exchangeStep(p2p_->exchanges().size());
    std::vector<uint32_t> stamps(groups_.size(), 0);
    const std::string kAllToAll = "AllToAll";
    for (size_t i = 0; i < n; ++i) {
        if (source_.header(i).alltoallOps == 0) continue;
        const std::vector<OpRecord> ops = shiftedOps(i);
        const std::vector<AllToAllRecord> records = source_.alltoall(i);
        const std::vector<P2pPartRecord> parts = source_.p2p(i);
        const auto device = static_cast<int>(i);
        const auto stamp = static_cast<uint32_t>(i + 1);
        // The first operation of each key on this device is its group's instance.
        std::vector<char> instanceOfKey(ops.size(), 0);
        for (size_t k = 0; k < ops.size(); ++k) {
            const uint32_t key = ops[k].key;
            if (key == kNoKey || groups_[key].devices < 2 || stamps[key] == stamp) continue;
            stamps[key] = stamp;
            instanceOfKey[k] = 1;
        }
        std::vector<AllToAllOp> list;
        size_t p = 0;
        for (const auto& r : records) {
            const OpRecord& op = ops[r.op];
            AllToAllOp a;
            a.start_ns = op.start_ns;
            a.end_ns = op.end_ns;
            a.step = r.step;
            a.transfer_ns = r.duration_ns;
            if (r.hasSent) a.bytes.sent = r.sent;
            if (r.hasReceived) a.bytes.received = r.received;
            if (r.hasTotal) a.bytes.total = r.total;
            const StepKey own = r.step >= 0 ? keysOf[i][static_cast<size_t>(r.step)] : kOutsideSteps;
            const StepKey* key = nullptr;
            TimeNs last = 0;
            if (instanceOfKey[r.op] && source_.collectiveNames()[source_.keys()[op.key].name] == kAllToAll) {
                const Group& g = groups_[op.key];
                auto [at, lead] = keyStep.try_emplace(op.key, own);
                if (lead) steps.exchange(own, g.firstStart);
                key = &at->second;
                last = g.lastStart;
            } else if (const int x = p2p_->exchangeOf(i, r.op); x >= 0) {
                const P2pExchange& e = p2p_->exchanges()[static_cast<size_t>(x)];
                auto& slot = exchangeStep[static_cast<size_t>(x)];
                if (!slot) {
                    slot = own;
                    steps.exchange(own, e.firstStart);
                }
                key = &*slot;
                last = e.lastStart;
            }
            if (key) {
                a.transfer_ns = std::max<TimeNs>(0, op.end_ns - std::max(op.start_ns, last));
                steps.instance(*key, device, a.transfer_ns, r.exposed_ns, a.bytes.total);
                while (p < parts.size() && parts[p].op < r.op) ++p;
                for (; p < parts.size() && parts[p].op == r.op; ++p) {
                    const P2pPartRecord& part = parts[p];
                    if (!part.hasCommHash || part.parts == 0 || !part.send || part.peer == part.commRank) continue;
                    const auto peer = p2p_->deviceOf().find({part.commHash, part.peer});
                    if (peer != p2p_->deviceOf().end() && peer->second != device)
                        steps.pair(*key, device, peer->second, part.bytes);
                }
            }
            list.push_back(a);
        }
        const IntervalSet exposed = shifted(source_.exposed(i), i);
        deviceAllToAll(rest_.devices[i], list, &exposed);
    }
    steps.finish(rest_, keysOf);
}

}  // namespace osc::crossrank
