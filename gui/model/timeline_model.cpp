#include "gui/model/timeline_model.h"

#include "analyzer/metrics/classify.h"
#include "analyzer/metrics/comm_kernel_families.h"
#include "gui/model/host_lanes.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace osc::gui {
namespace {

// The index of the event starting at `t` in a start-sorted row that passes `ok`.
template <class Pred>
std::optional<size_t> findAt(const EventRow& row, TimeNs t, Pred ok) {
    auto i = static_cast<size_t>(std::lower_bound(row.start.begin(), row.start.end(), t) - row.start.begin());
    for (; i < row.size() && row.start[i] == t; ++i)
        if (ok(i)) return i;
    return std::nullopt;
}

struct StreamStats {
    TimeNs time[3] = {0, 0, 0};  // per Category
    std::map<std::string, size_t> collectives;
    // Communication time by what carried it, so a lane is called NCCL only
    // when NCCL kernels made it communication (not --comm-copies copies or
    // --comm-kernel matches).
    TimeNs ncclKernels = 0, otherCommKernels = 0, peerCopies = 0, hostCopies = 0;
    // The other communication kernels' time by family (docs/metrics.md
    // section 2; "" for kernels only a --comm-kernel pattern names).
    std::map<std::string_view, TimeNs> otherFamilies;
};

std::string streamLabel(uint32_t stream, const Device& dev, const StreamStats& st, Category main) {
    std::string label = "stream " + std::to_string(stream);
    if (auto it = dev.streamNames.find(stream); it != dev.streamNames.end() && !it->second.empty()) {
        return label + " · " + it->second;
    }
    if (main == Category::Communication) {
        const TimeNs most = std::max({st.ncclKernels, st.otherCommKernels, st.peerCopies, st.hostCopies});
        if (most > 0 && most != st.ncclKernels) {
            if (most == st.otherCommKernels) {
                const auto top = std::max_element(st.otherFamilies.begin(), st.otherFamilies.end(),
                                                  [](const auto& a, const auto& b) { return a.second < b.second; });
                const bool named = top != st.otherFamilies.end() && !top->first.empty();
                return label + " · " + (named ? std::string(top->first) : std::string("communication kernels"));
            }
            return label + (most == st.peerCopies ? " · peer copies" : " · copies as communication");
        }
        std::string best;
        size_t bestCount = 0;
        for (const auto& [name, count] : st.collectives) {
            if (count > bestCount) best = name, bestCount = count;
        }
        return label + " · NCCL" + (best.empty() ? "" : " " + best);
    }
    return label + (main == Category::Memory ? " · memory" : " · compute");
}

// What a device's last-arrival count is out of (docs/metrics.md 7c, 7d; the
// analyzer's wait_transfer.cpp): every matched group (collectives and
// all-to-all exchanges) and every pair of linked send/receive kernels that
// are in no such group, once however many transfers the two kernels share.
std::string lastArrivalsOutOf(const Analysis& a) {
    std::vector<std::vector<char>> grouped(a.devices.size());
    for (size_t d = 0; d < a.devices.size(); ++d) grouped[d].assign(a.devices[d].collectives.size(), 0);
    const auto valid = [&](std::pair<int, int> op) {
        return op.first >= 0 && static_cast<size_t>(op.first) < grouped.size() && op.second >= 0 &&
               static_cast<size_t>(op.second) < grouped[static_cast<size_t>(op.first)].size();
    };
    for (const auto& m : a.matched)
        for (const auto& op : m.instances)
            if (valid(op)) grouped[static_cast<size_t>(op.first)][static_cast<size_t>(op.second)] = 1;
    std::set<std::pair<std::pair<int, int>, std::pair<int, int>>> kernelPairs;
    for (const auto& t : a.p2p) {
        if (!valid(t.sender) || !valid(t.receiver)) continue;
        if (grouped[static_cast<size_t>(t.sender.first)][static_cast<size_t>(t.sender.second)] ||
            grouped[static_cast<size_t>(t.receiver.first)][static_cast<size_t>(t.receiver.second)])
            continue;
        kernelPairs.insert(std::minmax(t.sender, t.receiver));
    }
    const size_t pairs = kernelPairs.size();
    if (pairs == 0) return std::to_string(a.matched.size()) + " collectives";
    if (a.matched.empty()) return std::to_string(pairs) + " send/receive pairs";
    return std::to_string(a.matched.size() + pairs) + " collectives and send/receive pairs";
}

}  // namespace

TimelineModel::TimelineModel(std::shared_ptr<const Capture> capture, const AnalysisSettings& settings)
    : capture_(std::move(capture)), settings_(settings) {
    if (!capture_) return;
    for (size_t p = 0; p < capture_->processes.size(); ++p) buildProcess(static_cast<int>(p));
    flowIndex_ = FlowIndex(*capture_);
    TimeNs lo = INT64_MAX, hi = INT64_MIN;
    for (const auto& lane : lanes_) {
        for (const auto& row : lane.rows) {
            if (row.size() == 0) continue;
            lo = std::min(lo, row.start.front());
            hi = std::max(hi, row.lastEnd());
        }
    }
    if (lo <= hi) {
        begin_ = lo;
        end_ = std::max(hi, lo + 1);
    }
}

void TimelineModel::buildProcess(int processIndex) {
    const Process& p = capture_->processes[static_cast<size_t>(processIndex)];
    // The host lanes go under the first GPU the process ran work on: our
    // captures also list GPUs a process only opened, and those lanes under an
    // empty GPU 0 read as if that GPU were the process's.
    int first = -1, firstWithWork = -1;
    for (size_t d = 0; d < p.devices.size(); ++d) {
        const int g = buildDeviceGroup(processIndex, static_cast<int>(d));
        if (first < 0) first = g;
        const Device& dev = p.devices[d];
        if (firstWithWork < 0 && dev.kernels.size() + dev.copies.size() + dev.memsets.size() > 0) firstWithWork = g;
    }
    if (firstWithWork >= 0) first = firstWithWork;
    if (p.ranges.size() == 0 && p.apiCalls.size() == 0 && p.cpuOps.size() == 0) return;
    if (first < 0) {
        DeviceGroup group;
        group.process = processIndex;
        group.label = p.label();
        groups_.push_back(std::move(group));
        first = static_cast<int>(groups_.size()) - 1;
    }
    buildHostLanes(first, p);  // under the NVTX lane, which goes on top
    if (p.ranges.size() > 0) buildRangesLane(first, p);
}

void TimelineModel::buildHostLanes(int group, const Process& p) {
    auto& order = groups_[static_cast<size_t>(group)].lanes;
    // Above the overlap lane: host work, then what it made the GPU do.
    size_t at = 0;
    for (HostThreadLane& t : osc::gui::buildHostLanes(p)) {
        Lane lane;
        lane.kind = LaneKind::Host;
        lane.group = group;
        lane.thread = t.globalTid;
        lane.label = std::move(t.label);
        lane.rows = std::move(t.rows);
        for (const EventRow& row : lane.rows) {
            TimeNs longest = 0;
            for (size_t i = 0; i < row.size(); ++i) longest = std::max(longest, row.end[i] - row.start[i]);
            lane.rowLongest.push_back(longest);
        }
        lanes_.push_back(std::move(lane));
        order.insert(order.begin() + static_cast<long>(at++), static_cast<int>(lanes_.size()) - 1);
    }
}

bool TimelineModel::hasHostLanes() const {
    return std::any_of(lanes_.begin(), lanes_.end(), [](const Lane& l) { return l.kind == LaneKind::Host; });
}

int TimelineModel::groupOfDevice(int process, int deviceIndex) const {
    for (size_t g = 0; g < groups_.size(); ++g)
        if (groups_[g].process == process && groups_[g].device == deviceIndex) return static_cast<int>(g);
    return -1;
}

EventRef TimelineModel::findApiCall(int process, uint32_t row) const {
    const Process& p = capture_->processes.at(static_cast<size_t>(process));
    if (row >= p.apiCalls.size()) return {};
    const uint64_t tid = p.apiCalls.globalTid[row];
    const TimeNs t = p.apiCalls.start[row];
    for (size_t l = 0; l < lanes_.size(); ++l) {
        const Lane& lane = lanes_[l];
        if (lane.kind != LaneKind::Host || lane.thread != tid ||
            groups_[static_cast<size_t>(lane.group)].process != process)
            continue;
        for (size_t r = 0; r < lane.rows.size(); ++r) {
            const EventRow& er = lane.rows[r];
            if (const auto i =
                    findAt(er, t, [&](size_t k) { return er.source[k] == EventSource::ApiCall && er.ref[k] == row; }))
                return {static_cast<int>(l), static_cast<int>(r), *i};
        }
    }
    return {};
}

int TimelineModel::buildDeviceGroup(int processIndex, int deviceIndex) {
    const Process& p = capture_->processes[static_cast<size_t>(processIndex)];
    const Device& dev = p.devices[static_cast<size_t>(deviceIndex)];
    const StringTable& strings = capture_->strings;
    // The analyzer's classifier: the lanes, the report and `check` agree on
    // what counts as communication.
    ActivityClassifier classifier(strings, settings_);

    DeviceGroup group;
    group.process = processIndex;
    group.device = deviceIndex;
    group.label = p.label() + " · GPU " + std::to_string(dev.id);
    const int groupIndex = static_cast<int>(groups_.size());

    auto kernelCategory = [&](size_t k) { return classifier.kernel(kernelNameId(dev.kernels, k)); };

    std::map<uint32_t, EventRow> streams;
    std::map<uint32_t, StreamStats> stats;
    std::map<uint32_t, std::string_view> familyOfName;  // kernel name id -> family, as looked up

    // Three-way merge of the start-sorted tables keeps every stream row sorted.
    const KernelTable& K = dev.kernels;
    const CopyTable& C = dev.copies;
    const MemsetTable& S = dev.memsets;
    size_t k = 0, c = 0, s = 0;
    while (k < K.size() || c < C.size() || s < S.size()) {
        const TimeNs tk = k < K.size() ? K.start[k] : INT64_MAX;
        const TimeNs tc = c < C.size() ? C.start[c] : INT64_MAX;
        const TimeNs ts = s < S.size() ? S.start[s] : INT64_MAX;
        if (tk <= tc && tk <= ts) {
            const Category cat = kernelCategory(k);
            streams[K.stream[k]].add(K.start[k], K.end[k], static_cast<uint32_t>(k), static_cast<uint8_t>(cat),
                                     EventSource::Kernel);
            auto& st = stats[K.stream[k]];
            st.time[static_cast<int>(cat)] += K.end[k] - K.start[k];
            if (cat == Category::Communication) {
                group.commKernels.push_back(static_cast<uint32_t>(k));
                const NcclKernelName& nccl = classifier.ncclName(kernelNameId(K, k));
                (nccl.isNccl ? st.ncclKernels : st.otherCommKernels) += K.end[k] - K.start[k];
                if (!nccl.isNccl) {
                    const uint32_t nameId = kernelNameId(K, k);
                    auto known = familyOfName.find(nameId);
                    if (known == familyOfName.end()) {
                        const CommKernelFamily* f = communicationFamily(strings.at(nameId));
                        known = familyOfName.emplace(nameId, f ? f->family : std::string_view()).first;
                    }
                    st.otherFamilies[known->second] += K.end[k] - K.start[k];
                }
                if (!nccl.collective.empty() && st.collectives.size() < 16) ++st.collectives[nccl.collective];
            }
            ++k;
        } else if (tc <= ts) {
            const Category cat = classifier.copy(C.copyKind[c]);
            streams[C.stream[c]].add(C.start[c], C.end[c], static_cast<uint32_t>(c), static_cast<uint8_t>(cat),
                                     EventSource::Copy);
            auto& st = stats[C.stream[c]];
            st.time[static_cast<int>(cat)] += C.end[c] - C.start[c];
            if (cat == Category::Communication)
                (C.copyKind[c] == CopyKind::PtoP ? st.peerCopies : st.hostCopies) += C.end[c] - C.start[c];
            ++c;
        } else {
            streams[S.stream[s]].add(S.start[s], S.end[s], static_cast<uint32_t>(s),
                                     static_cast<uint8_t>(Category::Memory), EventSource::Memset);
            stats[S.stream[s]].time[static_cast<int>(Category::Memory)] += S.end[s] - S.start[s];
            ++s;
        }
    }

    group.coverage = buildDeviceCoverage(dev, classifier);

    groups_.push_back(std::move(group));
    auto addLane = [&](Lane lane) {
        lane.group = groupIndex;
        lanes_.push_back(std::move(lane));
        groups_.back().lanes.push_back(static_cast<int>(lanes_.size()) - 1);
    };

    Lane overlapLane;
    overlapLane.kind = LaneKind::Overlap;
    overlapLane.label = "overlap · hidden / exposed comm";
    overlapLane.mainCategory = Category::Communication;
    addLane(std::move(overlapLane));

    for (auto& [stream, row] : streams) {
        row.finish();
        const StreamStats& st = stats[stream];
        const auto mainIt = std::max_element(std::begin(st.time), std::end(st.time));
        auto main = static_cast<Category>(mainIt - std::begin(st.time));
        // Only zero-length events (a pipeline's sends that never waited):
        // name the stream by what it carries, not "compute" by default.
        if (*mainIt == 0 && row.size() > 0) main = static_cast<Category>(row.category[0]);
        Lane lane;
        lane.kind = LaneKind::Stream;
        lane.stream = stream;
        lane.mainCategory = main;
        lane.label = streamLabel(stream, dev, st, main);
        lane.rows.push_back(std::move(row));
        addLane(std::move(lane));
    }
    return groupIndex;
}

void TimelineModel::buildRangesLane(int group, const Process& p) {
    Lane lane;
    lane.kind = LaneKind::Ranges;
    lane.group = group;
    lane.label = "NVTX / steps";
    lane.rows.resize(1);
    // Greedy depth: the first row whose last range has ended. Nested NVTX
    // push/pop ranges land one row below their parent.
    std::vector<TimeNs> rowEnd;
    const RangeTable& R = p.ranges;
    for (size_t i = 0; i < R.size(); ++i) {
        size_t depth = 0;
        while (depth < rowEnd.size() && rowEnd[depth] > R.start[i]) ++depth;
        depth = std::min<size_t>(depth, kMaxRangeDepth - 1);
        if (depth >= rowEnd.size()) rowEnd.resize(depth + 1, INT64_MIN);
        if (depth >= lane.rows.size()) lane.rows.resize(depth + 1);
        rowEnd[depth] = std::max(rowEnd[depth], R.end[i]);
        lane.rows[depth].add(R.start[i], R.end[i], static_cast<uint32_t>(i), 0, EventSource::Range);
    }
    for (auto& row : lane.rows) row.finish();
    lanes_.push_back(std::move(lane));
    auto& order = groups_[static_cast<size_t>(group)].lanes;
    order.insert(order.begin(), static_cast<int>(lanes_.size()) - 1);
}

int TimelineModel::groupOf(const DeviceAnalysis& d) const {
    for (size_t g = 0; g < groups_.size(); ++g) {
        const Device* dev = deviceOf(static_cast<int>(g));
        if (groups_[g].process == d.processIndex && dev && dev->id == d.device) return static_cast<int>(g);
    }
    return -1;
}

void TimelineModel::annotate(const Analysis& analysis) {
    std::vector<OpLinks> links = buildOpLinks(analysis);
    std::string outOf;  // the same for every device: counted once, when first needed
    for (size_t i = 0; i < analysis.devices.size(); ++i) {
        const DeviceAnalysis& d = analysis.devices[i];
        const int group = groupOf(d);
        if (group < 0) continue;
        DeviceGroup& g = groups_[static_cast<size_t>(group)];
        g.analysisDevice = static_cast<int>(i);
        g.exposedWait = CoverageIndex(d.exposed_wait_intervals);
        if (d.wait)  // several devices: the lane now tells waiting from transfer
            for (int l : g.lanes)
                if (lanes_[static_cast<size_t>(l)].kind == LaneKind::Overlap)
                    lanes_[static_cast<size_t>(l)].label = "overlap · hidden / exposed / waiting";
        if (d.last_arrivals && *d.last_arrivals > 0) {
            if (outOf.empty()) outOf = lastArrivalsOutOf(analysis);
            g.label += " · last at " + std::to_string(*d.last_arrivals) + " of " + outOf;
        }
        g.bubbles = stageBubbles(analysis, static_cast<int>(i), g.coverage.compute.intervals());
        if (i < links.size()) g.opLinks = std::move(links[i]);
    }
}

void TimelineModel::setGroupLabel(int group, std::string label) {
    groups_.at(static_cast<size_t>(group)).label = std::move(label);
}

void TimelineModel::setExposedWait(int group, IntervalSet waiting) {
    groups_.at(static_cast<size_t>(group)).exposedWait = CoverageIndex(std::move(waiting));
}

void TimelineModel::addStepLanes(const Analysis& analysis) {
    for (size_t di = 0; di < analysis.devices.size(); ++di) {
        const DeviceAnalysis& d = analysis.devices[di];
        if (d.steps.empty()) continue;
        const int group = groupOf(d);
        if (group < 0) continue;
        Lane lane;
        lane.kind = LaneKind::Ranges;
        lane.group = group;
        lane.label = "steps (GPU)";
        lane.rows.resize(1);
        for (size_t si = 0; si < d.steps.size(); ++si) {
            const StepAnalysis& s = d.steps[si];
            lane.rows[0].add(s.start_ns, s.end_ns, static_cast<uint32_t>(stepNames_.size()), 0, EventSource::Step);
            stepNames_.push_back(s.name);
            stepOrigins_.emplace_back(static_cast<int>(di), static_cast<int>(si));
        }
        lane.rows[0].finish();
        lanes_.push_back(std::move(lane));
        auto& order = groups_[static_cast<size_t>(group)].lanes;
        const bool hasNvtx = !order.empty() && lanes_[static_cast<size_t>(order.front())].kind == LaneKind::Ranges;
        order.insert(order.begin() + (hasNvtx ? 1 : 0), static_cast<int>(lanes_.size()) - 1);
    }
}

std::vector<int> TimelineModel::visibleLanes() const {
    std::vector<int> out;
    for (const auto& g : groups_) {
        for (int l : g.lanes) {
            const Lane& lane = lanes_[static_cast<size_t>(l)];
            if (lane.hidden) continue;
            if (lane.kind == LaneKind::Host && !hostLanesShown_) continue;
            // A collapsed group keeps only its overlap lane: the one-line summary.
            if (g.collapsed && lane.kind != LaneKind::Overlap && g.device >= 0) continue;
            out.push_back(l);
        }
    }
    return out;
}

void TimelineModel::setCollapsed(int group, bool collapsed) {
    groups_.at(static_cast<size_t>(group)).collapsed = collapsed;
}

void TimelineModel::setHidden(int lane, bool hidden) { lanes_.at(static_cast<size_t>(lane)).hidden = hidden; }

void TimelineModel::showAllLanes() {
    for (auto& l : lanes_) l.hidden = false;
}

void TimelineModel::moveLane(int lane, int delta) {
    auto& order = groups_.at(static_cast<size_t>(lanes_.at(static_cast<size_t>(lane)).group)).lanes;
    const auto it = std::find(order.begin(), order.end(), lane);
    const long pos = it - order.begin();
    const long to = std::clamp<long>(pos + delta, 0, static_cast<long>(order.size()) - 1);
    if (to == pos) return;
    order.erase(it);
    order.insert(order.begin() + to, lane);
    groups_.at(static_cast<size_t>(lanes_.at(static_cast<size_t>(lane)).group)).reordered = true;
}

void TimelineModel::setLaneOrder(int group, std::vector<int> order) {
    auto& lanes = groups_.at(static_cast<size_t>(group)).lanes;
    std::vector<int> a = lanes, b = order;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b) return;
    lanes = std::move(order);
    groups_.at(static_cast<size_t>(group)).reordered = true;
}

const Device* TimelineModel::deviceOf(int group) const {
    const DeviceGroup& g = groups_.at(static_cast<size_t>(group));
    if (g.device < 0) return nullptr;
    return &processOf(group).devices[static_cast<size_t>(g.device)];
}

const Process& TimelineModel::processOf(int group) const {
    return capture_->processes[static_cast<size_t>(groups_.at(static_cast<size_t>(group)).process)];
}

EventRef TimelineModel::findKernel(int group, uint32_t kernelRow) const {
    const Device* dev = deviceOf(group);
    if (!dev || kernelRow >= dev->kernels.size()) return {};
    return findOnStream(group, dev->kernels.stream[kernelRow], dev->kernels.start[kernelRow], EventSource::Kernel,
                        kernelRow);
}

EventRef TimelineModel::findOnStream(int group, uint32_t stream, TimeNs start, EventSource source,
                                     uint32_t sourceRow) const {
    if (group < 0 || static_cast<size_t>(group) >= groups_.size()) return {};
    for (int l : groups_[static_cast<size_t>(group)].lanes) {
        const Lane& lane = lanes_[static_cast<size_t>(l)];
        if (lane.kind != LaneKind::Stream || lane.stream != stream) continue;
        const EventRow& row = lane.rows[0];
        if (const auto i = findAt(row, start, [&](size_t k) {
                return row.source[k] == source && (sourceRow == kNoId || row.ref[k] == sourceRow);
            }))
            return {l, 0, *i};
    }
    return {};
}

EventRef TimelineModel::findStep(int group, TimeNs start) const {
    if (group < 0 || static_cast<size_t>(group) >= groups_.size()) return {};
    for (int l : groups_[static_cast<size_t>(group)].lanes) {
        const Lane& lane = lanes_[static_cast<size_t>(l)];
        if (lane.kind != LaneKind::Ranges || lane.rows.size() != 1) continue;
        const EventRow& row = lane.rows[0];
        if (const auto i = findAt(row, start, [&](size_t k) { return row.source[k] == EventSource::Step; }))
            return {l, 0, *i};
    }
    return {};
}

std::vector<EventRef> TimelineModel::matchingCollectives(EventRef ref) const {
    std::vector<EventRef> out;
    if (!ref.valid()) return out;
    const Lane& lane = lanes_[static_cast<size_t>(ref.lane)];
    const EventRow& row = lane.rows[static_cast<size_t>(ref.row)];
    if (row.source[ref.index] != EventSource::Kernel ||
        row.category[ref.index] != static_cast<uint8_t>(Category::Communication))
        return out;
    const Device* dev = deviceOf(lane.group);
    if (parseNcclKernelName(capture_->strings.at(kernelNameId(dev->kernels, row.ref[ref.index]))).collective ==
        "SendRecv")
        return out;
    const auto& own = groups_[static_cast<size_t>(lane.group)].commKernels;
    const uint32_t kernel = row.ref[ref.index];
    const auto pos = std::lower_bound(own.begin(), own.end(), kernel) - own.begin();
    for (size_t g = 0; g < groups_.size(); ++g) {
        const auto& other = groups_[g].commKernels;
        if (static_cast<int>(g) == lane.group || pos >= static_cast<long>(other.size())) continue;
        const EventRef r = findKernel(static_cast<int>(g), other[static_cast<size_t>(pos)]);
        if (r.valid()) out.push_back(r);
    }
    return out;
}

}  // namespace osc::gui
