#include "analyzer/crossrank/engine.h"

#include "analyzer/crossrank/bandwidth_pass.h"
#include "analyzer/crossrank/clock_alignment.h"
#include "analyzer/crossrank/instance_table.h"
#include "analyzer/crossrank/rank_spread.h"
#include "analyzer/crossrank/wait_transfer.h"
#include "analyzer/metrics/bottleneck.h"
#include "analyzer/metrics/metric_sum.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

namespace osc::crossrank {

Engine::Engine(const DeviceSource& source, const EngineOptions& options)
    : common_(std::make_unique<CommonStepSource>(source)),
      source_(*common_),
      n_(source.deviceCount()),
      instancesInMemory_(std::max<size_t>(1, options.instancesInMemory)) {
    rest_.settings = options.settings;
    rest_.warnings = source.warnings();
    if (!common_->note().empty()) rest_.warnings.push_back(common_->note());
    rest_.droppedRecords = source.droppedRecords();
    clockShift_.assign(source.processCount(), 0);
    std::map<std::string, uint32_t> hosts;
    hostOf_.assign(n_, 0);
    for (size_t i = 0; i < n_; ++i)
        if (const std::string& h = source.header(i).host; !h.empty())
            hostOf_[i] = hosts.emplace(h, static_cast<uint32_t>(hosts.size() + 1)).first->second;
    // Ranks on one GPU: devices that communicate (a helper process's stray
    // kernel on a rank's GPU changes nothing of its links).
    std::map<std::string, std::vector<size_t>> byUuid;
    for (size_t i = 0; i < n_; ++i)
        if (const DeviceHeader& h = source.header(i); !h.gpuUuid.empty() && h.totals.comm_ns > 0)
            byUuid[h.gpuUuid].push_back(i);
    for (auto& [uuid, devices] : byUuid)
        if (devices.size() >= 2) sharedGpus_.push_back(std::move(devices));

    groupPass();
    p2p_ = std::make_unique<P2pMatch>(source_);
    if (options.settings.alignCollectives) {
        std::vector<char> matchedKey(groups_.size(), 0);
        for (uint32_t k : matchedKeys_) matchedKey[k] = 1;
        clockShift_ = collectiveClockShifts(source_, matchedKey);
        groupPass();  // skews in the aligned clocks
    }
    p2p_->time([this](size_t i) { return shiftOf(i); });
    // One rank's capture has no partners to find: nothing to warn about.
    if (n_ >= 2)
        if (auto w = p2p_->warning(); !w.empty()) rest_.warnings.push_back(std::move(w));
    orderMatched();
    arrivals();
    summarize();
    buildShells();
    pipelinePass();
    allToAllPass();
    stragglerPass();
    rest_.p2p = p2p_->transfers();
    uint64_t instances = 0;
    for (uint32_t k : matchedKeys_) instances += groups_[k].devices;
    instances_ = std::make_unique<InstanceTable>(instances, options.instancesInMemory);
}

Engine::~Engine() = default;

TimeNs Engine::shiftOf(size_t index) const {
    return source_.originShift(index) + clockShift_[static_cast<size_t>(source_.processOf(index))];
}

std::vector<OpRecord> Engine::shiftedOps(size_t index) const {
    std::vector<OpRecord> ops = source_.ops(index);
    const TimeNs by = shiftOf(index);
    if (by != 0)
        for (auto& op : ops) {
            op.start_ns += by;
            op.end_ns += by;
        }
    return ops;
}

IntervalSet Engine::shifted(IntervalSet set, size_t index) const {
    const TimeNs by = shiftOf(index);
    if (by != 0)
        for (auto& i : set) {
            i.start += by;
            i.end += by;
        }
    return set;
}

void Engine::groupPass() {
    const auto& keys = source_.keys();
    groups_.assign(keys.size(), Group{});
    for (size_t i = 0; i < n_; ++i) {
        const auto stamp = static_cast<uint32_t>(i + 1);
        for (const auto& op : shiftedOps(i)) {
            if (op.key == kNoKey) continue;
            Group& g = groups_[op.key];
            if (g.stamp == stamp) continue;  // a later operation of the same key on this device
            g.stamp = stamp;
            g.add(static_cast<int>(i), op.start_ns, op.end_ns);
            if (const uint32_t h = hostOf_[i]; h != 0) {
                if (g.host == 0)
                    g.host = h;
                else if (g.host != h)
                    g.multiHost = true;
            }
        }
    }
    // A group needs operations on at least two devices; the report lists
    // them by first start, ties by key.
    matchedKeys_.clear();
    rest_.total_skew_ns = 0;
    for (uint32_t k = 0; k < groups_.size(); ++k)
        if (groups_[k].devices >= 2) {
            matchedKeys_.push_back(k);
            rest_.total_skew_ns += groups_[k].lastStart - groups_[k].firstStart;
        }
    const auto& names = source_.collectiveNames();
    const auto keyTuple = [&](uint32_t k) {
        const CollectiveKey& key = keys[k];
        return std::tie(key.scheme, key.commHash, names[key.name], key.seq);
    };
    std::sort(matchedKeys_.begin(), matchedKeys_.end(), [&](uint32_t a, uint32_t b) {
        if (groups_[a].firstStart != groups_[b].firstStart) return groups_[a].firstStart < groups_[b].firstStart;
        return keyTuple(a) < keyTuple(b);
    });
    slotOf_.assign(groups_.size(), 0);
    uint64_t slot = 0;
    for (uint32_t k : matchedKeys_) {
        slotOf_[k] = slot;
        slot += groups_[k].devices;
    }
}

// The exchanges join the collectives' groups, all by first start (stably:
// collectives first among equals).
void Engine::orderMatched() {
    const auto& exchanges = p2p_->exchanges();
    matched_.clear();
    matched_.reserve(matchedKeys_.size() + exchanges.size());
    size_t e = 0;
    for (uint32_t k : matchedKeys_) {
        for (; e < exchanges.size() && exchanges[e].firstStart < groups_[k].firstStart; ++e)
            matched_.push_back({true, static_cast<uint32_t>(e)});
        matched_.push_back({false, k});
    }
    for (; e < exchanges.size(); ++e) matched_.push_back({true, static_cast<uint32_t>(e)});
    for (const auto& x : exchanges) rest_.total_skew_ns += x.lastStart - x.firstStart;
}

// A group whose latest start is one device's alone: that device arrived
// last and delayed the others by its lead over the second latest.
void Engine::arrivals() {
    if (n_ < 2) return;
    lastArrivals_.assign(n_, 0);
    delayCaused_.assign(n_, 0);
    for (uint32_t k : matchedKeys_) {
        const Group& g = groups_[k];
        if (g.atLast != 1) continue;
        const auto d = static_cast<size_t>(g.lastDevice);
        lastArrivals_[d] += 1;
        delayCaused_[d] += g.lastStart - g.second;
    }
    p2p_->addArrivals(lastArrivals_, delayCaused_);
}

void Engine::summarize() {
    MetricSum sum;
    std::vector<SpreadDevice> spread(n_);
    for (size_t i = 0; i < n_; ++i) {
        const DeviceHeader& d = source_.header(i);
        sum.add(d.totals);
        spread[i].overlap_ns = d.totals.overlap_ns;
        spread[i].comm_ns = d.totals.comm_ns;
        for (const auto& s : d.steps) spread[i].steps.push_back({s.name, s.window_ns, s.overlap_ns, s.comm_ns});
    }
    rest_.summary = sum.total();
    rest_.spread = rankSpread(spread);
}

// One shell per device (rest_.devices): what the pipeline and all-to-all
// phases read and write of a device, on the job's clock.
void Engine::buildShells() {
    rest_.devices.assign(n_, DeviceAnalysis{});
    for (size_t i = 0; i < n_; ++i) {
        const DeviceHeader& d = source_.header(i);
        DeviceAnalysis& shell = rest_.devices[i];
        shell.processIndex = source_.processOf(i);
        shell.rank = d.rank;
        shell.host = d.host;
        shell.pid = d.pid;
        shell.device = d.device;
        if (d.microbatches.empty() && d.alltoallOps == 0) continue;
        const TimeNs by = shiftOf(i);
        shell.steps.resize(d.steps.size());
        for (size_t s = 0; s < d.steps.size(); ++s) {
            shell.steps[s].name = d.steps[s].name;
            shell.steps[s].start_ns = d.steps[s].start_ns + by;
            shell.steps[s].end_ns = d.steps[s].end_ns + by;
        }
    }
}

DeviceCrossRank Engine::device(size_t index) {
    if (index != nextDevice_ || index >= n_) throw std::logic_error("Engine::device out of order");
    // This pass reuses the groups' stamps: a fresh start for the first device.
    if (index == 0)
        for (auto& g : groups_) g.stamp = 0;
    const DeviceHeader& d = source_.header(index);
    DeviceCrossRank cross;
    cross.shift = shiftOf(index);
    cross.messageShift = source_.originShift(index);
    if (rest_.settings.alignCollectives) cross.clockShift = clockShift_[static_cast<size_t>(source_.processOf(index))];
    cross.patterns = &rest_.devices[index];

    // Waiting up to the group's last arrival, transfer after it; sends,
    // receives and exchanges wait up to what P2pMatch found; operations in
    // no group only transfer. The same split times each operation's
    // transfer for its bandwidth.
    const std::vector<OpRecord> ops = shiftedOps(index);
    std::vector<OpArrival> arrival(ops.size());
    if (n_ >= 2) {
        WaitTransfer wt;
        const auto stamp = static_cast<uint32_t>(index + 1);
        const auto& until = p2p_->waitUntil(index);
        const auto& withoutPeer = p2p_->withoutPeer(index);
        size_t u = 0, unknown = 0;
        for (size_t i = 0; i < ops.size(); ++i) {
            const OpRecord& op = ops[i];
            if (op.key != kNoKey && groups_[op.key].devices >= 2 && groups_[op.key].stamp != stamp) {
                Group& g = groups_[op.key];
                g.stamp = stamp;  // the device's first operation of the key is the group's instance
                wt.waitsUntil(op.start_ns, op.end_ns, g.lastStart);
                arrival[i] = {g.lastStart, BusBwBasis::Transfer, g.multiHost};
                instances_->put(slotOf_[op.key]++, static_cast<int>(index), static_cast<int>(i));
                continue;
            }
            while (u < until.size() && until[u].first < i) ++u;
            while (unknown < withoutPeer.size() && withoutPeer[unknown] < i) ++unknown;
            if (u < until.size() && until[u].first == i) {
                wt.waitsUntil(op.start_ns, op.end_ns, until[u].second);
                arrival[i] = {until[u].second, BusBwBasis::Transfer, false};
            } else if (unknown < withoutPeer.size() && withoutPeer[unknown] == i) {
                wt.unknownPartner(op.start_ns, op.end_ns);
            } else {
                wt.transfers(op.start_ns, op.end_ns);
            }
        }
        DeviceWaiting w = wt.finish(shifted(source_.exposed(index), index), d, cross.shift);
        cross.wait = w.wait;
        cross.stepWait = std::move(w.steps);
        cross.exposedWait = std::move(w.exposedWait);
        cross.lastArrivals = lastArrivals_[index];
        cross.delayCaused = delayCaused_[index];
    }
    std::vector<std::string> sharesGpuWith;
    for (const auto& devices : sharedGpus_)
        if (std::find(devices.begin(), devices.end(), index) != devices.end())
            for (size_t j : devices) {
                if (j == index) continue;
                const DeviceHeader& h = source_.header(j);
                sharesGpuWith.push_back(findingDevice(h.rank, h.host, h.pid, h.device));
            }
    DeviceBandwidth bw = deviceBandwidth(source_, ops, source_.bandwidth(index), arrival, d.gpu,
                                         rest_.settings.peakBusBwGbps, d.steps.size(), sharesGpuWith);
    cross.bandwidth = std::move(bw.ops);
    cross.busbw = std::move(bw.summary);
    cross.findings = std::move(bw.findings);
    cross.stepFindings = std::move(bw.stepFindings);
    cross.stepFindings.resize(d.steps.size());
    if (index < straggler_.size()) {
        cross.straggler = straggler_[index];
        if (stragglerFinding_[index]) cross.findings.push_back(*stragglerFinding_[index]);
    }
    ++nextDevice_;
    // Back to each matched group's first slot for matched().
    if (nextDevice_ == n_)
        for (uint32_t k : matchedKeys_) slotOf_[k] -= groups_[k].devices;
    return cross;
}

MatchedCollective Engine::matched(size_t index) {
    if (nextDevice_ != n_ || index != nextMatched_)
        throw std::logic_error("Engine::matched before the devices or out of order");
    ++nextMatched_;
    MatchedCollective m;
    if (matched_[index].exchange) {
        const P2pExchange& x = p2p_->exchanges()[matched_[index].id];
        m.collective = "AllToAll";
        m.pointToPoint = true;
        m.commHash = x.commHash;
        m.instances = x.instances;
        m.skew_ns = x.lastStart - x.firstStart;
        m.transfer_ns = std::max<TimeNs>(0, x.firstEnd - x.lastStart);
        return m;
    }
    const uint32_t k = matched_[index].id;
    const Group& g = groups_[k];
    const CollectiveKey& key = source_.keys()[k];
    m.collective = source_.collectiveNames()[key.name];
    if (key.scheme == 0) {
        m.commHash = key.commHash;
        m.seqNumber = key.seq;
    }
    for (uint64_t s = slotOf_[k]; s < slotOf_[k] + g.devices; ++s) m.instances.push_back(instances_->at(s));
    m.skew_ns = g.lastStart - g.firstStart;
    m.transfer_ns = std::max<TimeNs>(0, g.firstEnd - g.lastStart);
    return m;
}

}  // namespace osc::crossrank
