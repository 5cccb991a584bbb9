#include "analyzer/partial/merge.h"

#include "analyzer/metrics/multirank.h"
#include "analyzer/partial/instance_table.h"
#include "analyzer/report/report_json.h"

#include <algorithm>
#include <climits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace osc::partial {
namespace {

void addSaturating(TimeNs& sum, TimeNs value) {
    if (__builtin_add_overflow(sum, value, &sum)) sum = value < 0 ? INT64_MIN : INT64_MAX;
}

TimeNs lowerMedian(std::vector<TimeNs> v) {
    const size_t at = (v.size() - 1) / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(at), v.end());
    return v[at];
}

// rankSpread (metrics/multirank.h) over the devices' step headers.
std::optional<RankSpread> spreadOf(const std::vector<const PartDevice*>& devices) {
    std::vector<SpreadDevice> spread(devices.size());
    for (size_t d = 0; d < devices.size(); ++d) {
        spread[d].overlap_ns = devices[d]->totals.overlap_ns;
        spread[d].comm_ns = devices[d]->totals.comm_ns;
        for (const auto& s : devices[d]->steps)
            spread[d].steps.push_back({s.name, s.window_ns, s.overlap_ns, s.comm_ns});
    }
    return rankSpread(spread);
}

}  // namespace

Merge::Merge(const PartSet& parts, const MergeOptions& options) : parts_(parts), options_(options) {
    const bool align = options.alignCollectives.value_or(parts.settings.alignCollectives);
    if (!options.alignCollectives && !parts.alignAgreed)
        throw std::invalid_argument("the partial results were made with different --align choices; give --align");
    rest_.settings = parts.settings;
    rest_.settings.alignCollectives = align;

    // Capture::finalize's process order over every file, ties in file order.
    struct Slot {
        size_t file;
        int process;
    };
    std::vector<Slot> slots;
    int64_t origin = INT64_MAX;
    for (size_t f = 0; f < parts.files.size(); ++f) {
        const auto& file = parts.files[f];
        for (size_t p = 0; p < file.processes.size(); ++p) slots.push_back({f, static_cast<int>(p)});
        if (!file.processes.empty()) origin = std::min(origin, file.originUtcNs);
    }
    std::stable_sort(slots.begin(), slots.end(), [&](const Slot& a, const Slot& b) {
        return processBefore(parts.files[a.file].processes[static_cast<size_t>(a.process)],
                             parts.files[b.file].processes[static_cast<size_t>(b.process)]);
    });
    processes_ = slots.size();
    fileShift_.resize(parts.files.size(), 0);
    for (size_t f = 0; f < parts.files.size(); ++f)
        if (!parts.files[f].processes.empty()) fileShift_[f] = parts.files[f].originUtcNs - origin;
    std::map<std::pair<size_t, int>, std::vector<size_t>> devicesOf;
    for (size_t d = 0; d < parts.devices.size(); ++d)
        devicesOf[{parts.devices[d].file, parts.devices[d].process}].push_back(d);
    for (size_t g = 0; g < slots.size(); ++g) {
        const auto it = devicesOf.find({slots[g].file, slots[g].process});
        if (it != devicesOf.end())
            for (size_t d : it->second) {
                order_.push_back(d);
                processOf_.push_back(static_cast<int>(g));
            }
        for (const auto& [process, message] : parts.files[slots[g].file].warnings)
            if (process == slots[g].process) rest_.warnings.push_back(message);
    }
    for (const auto& f : parts.files) rest_.droppedRecords += f.droppedRecords;
    clockShift_.assign(processes_, 0);

    groupPass();
    p2p_ = std::make_unique<P2pMatch>(parts, order_);
    if (align) {
        alignClocks();
        groupPass();  // skews in the aligned clocks
    }
    p2p_->time([this](size_t i) { return shiftOf(i); });
    // One rank's capture has no partners to find: nothing to warn about.
    if (order_.size() >= 2)
        if (auto w = p2p_->warning(); !w.empty()) rest_.warnings.push_back(std::move(w));
    orderMatched();
    arrivals();
    summarize();
    buildShells();
    pipelinePass();
    allToAllPass();
    rest_.p2p = p2p_->transfers();
    instances_ = std::make_unique<InstanceTable>(
        [&] {
            uint64_t n = 0;
            for (uint32_t k : matchedKeys_) n += groups_[k].devices;
            return n;
        }(),
        options.instancesInMemory);
}

Merge::~Merge() = default;

TimeNs Merge::shiftOf(size_t index) const {
    return fileShift_[parts_.devices[order_[index]].file] + clockShift_[static_cast<size_t>(processOf_[index])];
}

std::vector<OpRecord> Merge::shiftedOps(size_t index) const {
    const PartDevice& d = parts_.devices[order_[index]];
    std::vector<OpRecord> ops = parts_.readOps(d);
    const TimeNs by = shiftOf(index);
    if (by != 0)
        for (auto& op : ops) {
            op.start_ns += by;
            op.end_ns += by;
        }
    return ops;
}

void Merge::groupPass() {
    groups_.assign(parts_.keys.size(), Group{});
    for (size_t i = 0; i < order_.size(); ++i) {
        const auto stamp = static_cast<uint32_t>(i + 1);
        for (const auto& op : shiftedOps(i)) {
            if (op.key == kNoKey) continue;
            Group& g = groups_[op.key];
            if (g.stamp == stamp) continue;  // a later operation of the same key on this device
            g.stamp = stamp;
            g.add(static_cast<int>(i), op.start_ns, op.end_ns);
        }
    }
    // matchAcrossDevices' order: by first start, ties by key.
    matchedKeys_.clear();
    rest_.total_skew_ns = 0;
    for (uint32_t k = 0; k < groups_.size(); ++k)
        if (groups_[k].devices >= 2) {
            matchedKeys_.push_back(k);
            rest_.total_skew_ns += groups_[k].lastStart - groups_[k].firstStart;
        }
    const auto keyTuple = [&](uint32_t k) {
        const CollectiveKey& key = parts_.keys[k];
        return std::tie(key.scheme, key.commHash, parts_.collectiveNames[key.name], key.seq);
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

void Merge::alignClocks() {
    if (order_.empty()) return;
    // The reference: the process of the lowest known rank, else the first.
    int reference = processOf_[0], bestRank = INT_MAX;
    for (size_t i = 0; i < order_.size(); ++i) {
        const int rank = parts_.devices[order_[i]].rank;
        if (rank >= 0 && rank < bestRank) {
            bestRank = rank;
            reference = processOf_[i];
        }
    }
    const size_t keys = groups_.size();
    std::vector<TimeNs> refEnd(keys, 0);
    std::vector<char> haveRef(keys, 0);
    std::vector<uint32_t> deviceStamp(keys, 0), processStamp(keys, 0);
    for (size_t i = 0; i < order_.size(); ++i) {
        if (processOf_[i] != reference) continue;
        const auto stamp = static_cast<uint32_t>(i + 1);
        for (const auto& op : shiftedOps(i)) {
            if (op.key == kNoKey || groups_[op.key].devices < 2 || deviceStamp[op.key] == stamp) continue;
            deviceStamp[op.key] = stamp;
            if (!haveRef[op.key]) {
                haveRef[op.key] = 1;
                refEnd[op.key] = op.end_ns;
            }
        }
    }
    // Devices of a process are adjacent in job order.
    std::vector<TimeNs> shifts(processes_, 0);
    std::vector<TimeNs> differences;
    for (size_t i = 0; i < order_.size(); ++i) {
        const int p = processOf_[i];
        if (p == reference) continue;
        const auto stamp = static_cast<uint32_t>(i + 1), pStamp = static_cast<uint32_t>(p + 1);
        for (const auto& op : shiftedOps(i)) {
            if (op.key == kNoKey || groups_[op.key].devices < 2 || deviceStamp[op.key] == stamp) continue;
            deviceStamp[op.key] = stamp;
            if (!haveRef[op.key] || processStamp[op.key] == pStamp) continue;
            processStamp[op.key] = pStamp;
            differences.push_back(refEnd[op.key] - op.end_ns);
        }
        if (i + 1 == order_.size() || processOf_[i + 1] != p) {
            if (!differences.empty()) shifts[static_cast<size_t>(p)] = lowerMedian(std::move(differences));
            differences.clear();
        }
    }
    clockShift_ = std::move(shifts);
}

// matchPointToPoint appends the exchanges to matchAcrossDevices' groups and
// sorts them all by first start (stably: collectives first among equals).
void Merge::orderMatched() {
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

void Merge::arrivals() {
    if (order_.size() < 2) return;
    lastArrivals_.assign(order_.size(), 0);
    delayCaused_.assign(order_.size(), 0);
    for (uint32_t k : matchedKeys_) {
        const Group& g = groups_[k];
        if (g.atLast != 1) continue;
        const auto d = static_cast<size_t>(g.lastDevice);
        lastArrivals_[d] += 1;
        delayCaused_[d] += g.lastStart - g.second;
    }
    p2p_->addArrivals(lastArrivals_, delayCaused_);
}

// One shell per device (rest_.devices): what the pipeline and all-to-all
// phases read and write of a device, on the job's clock.
void Merge::buildShells() {
    rest_.devices.assign(order_.size(), DeviceAnalysis{});
    for (size_t i = 0; i < order_.size(); ++i) {
        const PartDevice& d = parts_.devices[order_[i]];
        DeviceAnalysis& shell = rest_.devices[i];
        shell.processIndex = processOf_[i];
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

void Merge::summarize() {
    OverlapMetrics& s = rest_.summary;
    TimeNs computeOrComm = 0;
    std::vector<const PartDevice*> devices;
    for (size_t i : order_) {
        const OverlapMetrics& t = parts_.devices[i].totals;
        addSaturating(s.window_ns, t.window_ns);
        addSaturating(s.compute_ns, t.compute_ns);
        addSaturating(s.comm_ns, t.comm_ns);
        addSaturating(s.overlap_ns, t.overlap_ns);
        addSaturating(s.exposed_comm_ns, t.exposed_comm_ns);
        addSaturating(s.busy_ns, t.busy_ns);
        addSaturating(s.idle_ns, t.idle_ns);
        addSaturating(computeOrComm, (t.compute_ns - t.overlap_ns) + t.comm_ns);  // as finishAnalysis
        devices.push_back(&parts_.devices[i]);
    }
    s.computeRatios(computeOrComm);
    rest_.spread = spreadOf(devices);
}

DeviceCrossRank Merge::crossRank(size_t index) {
    const PartDevice& d = parts_.devices[order_[index]];
    const auto process = static_cast<size_t>(processOf_[index]);
    DeviceCrossRank cross;
    cross.shift = fileShift_[d.file] + clockShift_[process];
    if (rest_.settings.alignCollectives) cross.clockShift = clockShift_[process];
    cross.patterns = &rest_.devices[index];
    cross.messageShift = fileShift_[d.file];  // analyze() writes messages before --align collectives
    cross.idleGapAt = &d.idleGapAt;
    if (order_.size() < 2) return cross;

    // computeWaitTransfer for this device: waiting up to the last arrival,
    // transfer after it; operations in no group are transfer.
    // Sends, receives and exchanges wait up to what P2pMatch found.
    IntervalSetBuilder waiting, transfer;
    const auto stamp = static_cast<uint32_t>(index + 1);
    const std::vector<OpRecord> ops = shiftedOps(index);
    const auto& until = p2p_->waitUntil(index);
    size_t u = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
        const OpRecord& op = ops[i];
        if (op.key != kNoKey && groups_[op.key].devices >= 2 && groups_[op.key].stamp != stamp) {
            Group& g = groups_[op.key];
            g.stamp = stamp;  // pass 1 is over: the stamp now marks pass 2's first operation per device
            waiting.add(op.start_ns, std::min(op.end_ns, g.lastStart));
            transfer.add(std::max(op.start_ns, g.lastStart), op.end_ns);
            instances_->put(slotOf_[op.key]++, static_cast<int>(index), static_cast<int>(i));
            continue;
        }
        while (u < until.size() && until[u].first < i) ++u;
        if (u < until.size() && until[u].first == i) {
            const TimeNs last = until[u].second;
            waiting.add(op.start_ns, std::min(op.end_ns, last));
            transfer.add(std::max(op.start_ns, last), op.end_ns);
        } else {
            transfer.add(op.start_ns, op.end_ns);
        }
    }
    IntervalSet exposed = parts_.readExposed(d);
    for (auto& e : exposed) {
        e.start += cross.shift;
        e.end += cross.shift;
    }
    const IntervalSet waitOnly = subtract(waiting.finish(), transfer.finish());
    const IntervalSet exposedWait = intersect(waitOnly, exposed);
    WaitTransferMetrics w;
    w.comm_wait_ns = totalLength(waitOnly);
    w.exposed_wait_ns = totalLength(exposedWait);
    w.exposed_transfer_ns = d.totals.exposed_comm_ns - w.exposed_wait_ns;
    cross.wait = w;
    for (const auto& s : d.steps) {
        const Interval window{s.start_ns + cross.shift, s.end_ns + cross.shift};
        WaitTransferMetrics sw;
        sw.comm_wait_ns = lengthWithin(waitOnly, window);
        sw.exposed_wait_ns = lengthWithin(exposedWait, window);
        sw.exposed_transfer_ns = s.exposed_comm_ns - sw.exposed_wait_ns;
        cross.stepWait.push_back(sw);
    }
    cross.lastArrivals = lastArrivals_[index];
    cross.delayCaused = delayCaused_[index];
    return cross;
}

void Merge::writeDevice(std::ostream& out, int indent, size_t index) {
    if (index != nextDevice_) throw std::logic_error("Merge::writeDevice out of order");
    // Pass 2 reuses the groups' stamps; a fresh start for the first device.
    if (index == 0)
        for (auto& g : groups_) g.stamp = 0;
    const DeviceCrossRank cross = crossRank(index);
    const PartDevice& d = parts_.devices[order_[index]];
    const auto in = parts_.openDeviceJson(d);
    rewriteDeviceJson(*in, out, indent, cross, parts_.sourceName(d.source));
    ++nextDevice_;
    if (nextDevice_ == order_.size()) {
        // Back to each matched group's first slot for matched().
        for (uint32_t k : matchedKeys_) slotOf_[k] -= groups_[k].devices;
    }
    if (options_.progress) options_.progress(nextDevice_, order_.size());
}

DeviceAnalysis Merge::device(size_t index) {
    std::ostringstream text;
    writeDevice(text, 0, index);
    const PartDevice& d = parts_.devices[order_[index]];
    DeviceAnalysis out = report::parseDeviceJson(text.str(), parts_.sourceName(d.source));
    out.processIndex = processOf_[index];
    return out;
}

MatchedCollective Merge::matched(size_t index) {
    if (nextDevice_ != order_.size() || index != nextMatched_)
        throw std::logic_error("Merge::matched before the devices or out of order");
    ++nextMatched_;
    if (matched_[index].exchange) {
        const P2pExchange& x = p2p_->exchanges()[matched_[index].id];
        MatchedCollective m;
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
    const CollectiveKey& key = parts_.keys[k];
    MatchedCollective m;
    m.collective = parts_.collectiveNames[key.name];
    if (key.scheme == 0) {
        m.commHash = key.commHash;
        m.seqNumber = key.seq;
    }
    for (uint64_t s = slotOf_[k]; s < slotOf_[k] + g.devices; ++s) m.instances.push_back(instances_->at(s));
    m.skew_ns = g.lastStart - g.firstStart;
    m.transfer_ns = std::max<TimeNs>(0, g.firstEnd - g.lastStart);
    return m;
}

void writeMergedJson(const PartSet& parts, const MergeOptions& options, const report::ReportOptions& report,
                     std::ostream& out) {
    Merge merge(parts, options);
    report::StreamedReportBody body;
    body.deviceCount = merge.deviceCount();
    body.writeDevice = [&](std::ostream& os, int indent, size_t i) { merge.writeDevice(os, indent, i); };
    body.matchedCount = merge.matchedCount();
    body.matched = [&](size_t i) { return merge.matched(i); };
    report::writeJsonReport(out, merge.rest(), report, body);
}

Analysis mergedAnalysis(const PartSet& parts, const MergeOptions& options, bool collectives) {
    Merge merge(parts, options);
    Analysis a = merge.rest();
    a.devices.clear();  // shells: the devices themselves come next
    a.devices.reserve(merge.deviceCount());
    for (size_t i = 0; i < merge.deviceCount(); ++i) {
        DeviceAnalysis d = merge.device(i);
        if (!collectives) {
            d.collectives = {};
            d.signatures = {};
        }
        a.devices.push_back(std::move(d));
    }
    if (collectives)
        for (size_t g = 0; g < merge.matchedCount(); ++g) a.matched.push_back(merge.matched(g));
    return a;
}

}  // namespace osc::partial
