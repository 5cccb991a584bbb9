#include "analyzer/import/kineto_builder.h"

#include "analyzer/import/decimal_time.h"
#include "analyzer/import/kineto_names.h"
#include "analyzer/import/kineto_p2p_operators.h"
#include "analyzer/import/kineto_sax.h"

#include <algorithm>
#include <climits>
#include <string_view>

namespace osc::kineto {
namespace {

// Enough for any real node; stops hostile input from creating millions.
constexpr size_t kMaxDevicesPerProcess = 1024;

uint32_t idOrNone(int64_t value) {
    return value < 0 || value >= static_cast<int64_t>(kNoId) ? kNoId : static_cast<uint32_t>(value);
}

uint32_t clampU32(int64_t value) {
    return value < 0 ? 0 : value > static_cast<int64_t>(UINT32_MAX) ? UINT32_MAX : static_cast<uint32_t>(value);
}

// nsys packing: pid in bits 24..47, tid in bits 0..23.
uint64_t globalTid(int64_t pid, int64_t tid) {
    const uint64_t p = pid < 0 ? 0 : static_cast<uint64_t>(pid) & 0xFFFFFFu;
    const uint64_t t = tid < 0 ? 0 : static_cast<uint64_t>(tid) & 0xFFFFFFu;
    return (p << 24) | t;
}

// Kineto writes "thread 1222 (pt_autograd_0)": the tid is in the lane's
// title already, so the name is what is in the brackets. Other names are
// kept whole.
std::string threadNameOf(const std::string& text) {
    constexpr std::string_view prefix = "thread ";
    if (text.size() <= prefix.size() || text.compare(0, prefix.size(), prefix) != 0 || text.back() != ')') return text;
    size_t i = prefix.size();
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    if (i == prefix.size() || text.compare(i, 2, " (") != 0 || i + 3 >= text.size()) return text;
    return text.substr(i + 2, text.size() - i - 3);
}

void shiftColumn(std::vector<TimeNs>& column, TimeNs by) {
    for (auto& t : column) t -= by;
}

}  // namespace

CaptureBuilder::CaptureBuilder(Capture& capture, std::string path, std::function<void()> tick)
    : capture_(capture), path_(std::move(path)), tick_(std::move(tick)) {}

std::unique_ptr<CaptureBuilder> CaptureBuilder::forPiece(Capture& local) const {
    auto piece = std::make_unique<CaptureBuilder>(local, path_, nullptr);
    piece->processes_.resize(processes_.size());  // fresh: absorb() adds what they gain
    piece->processByTracePid_ = processByTracePid_;
    piece->distRank_ = distRank_;
    piece->distWorldSize_ = distWorldSize_;
    piece->launchDetails_ = launchDetails_;
    piece->launchShapeOnly_ = launchShapeOnly_;
    piece->analysisOnly_ = analysisOnly_;
    return piece;
}

Process& CaptureBuilder::processFor(int64_t tracePid) {
    if (!processByTracePid_.empty()) {
        const auto it = processByTracePid_.find(tracePid);
        if (it != processByTracePid_.end()) return processes_[it->second];
    }
    if (processes_.empty()) processes_.emplace_back();
    return processes_.front();
}

Device& CaptureBuilder::deviceFor(Process& process, int64_t device) {
    if (device < 0 || device >= static_cast<int64_t>(kNoId))
        throw FormatError(path_, "GPU event without a usable args.device");
    const auto id = static_cast<uint32_t>(device);
    if (!process.findDevice(id) && process.devices.size() >= kMaxDevicesPerProcess)
        throw FormatError(path_, "more than " + std::to_string(kMaxDevicesPerProcess) + " GPUs");
    return process.deviceById(id);
}

void CaptureBuilder::appendRange(RangeTable& r, const Event& e, TimeNs start, TimeNs end, bool onGpu) {
    r.start.push_back(start);
    r.end.push_back(end);
    r.name.push_back(capture_.strings.intern(e.name));
    r.globalTid.push_back(globalTid(e.pid, e.tid));
    r.domain.push_back(kNoId);
    r.category.push_back(0);
    r.color.push_back(0);
    r.kind.push_back(RangeKind::PushPop);
    r.onGpu.push_back(onGpu ? 1 : 0);
}

void CaptureBuilder::onEvent(const Event& e) {
    if (++events_ % 8192 == 0 && tick_) tick_();
    // One-letter phases compared as such: std::string == "M" measures the
    // literal on every event.
    const std::string_view ph = e.ph;
    if (ph == std::string_view("M")) {
        // Kineto names host threads and GPU streams alike; only names of
        // threads that ran operators or calls are ever looked up, and those
        // carry the host pid, not a device index. A later row for the same
        // thread wins, as a rename would.
        if (e.name == "thread_name" && !e.argName.empty() && e.tid >= 0)
            processFor(e.pid).threadNames[globalTid(e.pid, e.tid)] = threadNameOf(e.argName);
        return;
    }
    if (ph != std::string_view("X")) return;  // instants, flows: nothing we model
    const EventKind kind = kindOfCategory(e.cat);
    if (kind == EventKind::Ignored) return;
    if (!e.hasTs || !e.hasDur)
        throw FormatError(path_, "\"" + e.cat + "\" event \"" + e.name.substr(0, 80) + "\" lacks \"" +
                                     (e.hasTs ? "dur" : "ts") + "\"");
    const TimeNs start = e.tsNs, end = e.tsNs + e.durNs;  // |ts| and dur <= 2^61: no overflow
    // CPU operators are only shown, never measured: they leave the time
    // origin (and so every reported time) as it was before they were read.
    if (kind != EventKind::CpuOp) minTs_ = std::min(minTs_, start);
    Process& p = processFor(e.pid);
    // GPU lanes: args.device and args.stream; legacy traces only have pid/tid.
    const int64_t device = e.device != kAbsent ? e.device : e.pid;
    const uint32_t stream = idOrNone(e.stream != kAbsent ? e.stream : e.tid);
    const uint32_t correlation = e.correlation == kAbsent ? 0 : clampU32(e.correlation);

    switch (kind) {
        case EventKind::Kernel: {
            auto& k = deviceFor(p, device).kernels;
            const uint32_t name = capture_.strings.intern(e.name);
            k.start.push_back(start);
            k.end.push_back(end);
            k.stream.push_back(stream == kNoId ? 0 : stream);
            k.correlation.push_back(correlation);
            k.name.push_back(name);
            if (!analysisOnly_) k.shortName.push_back(name);
            if (launchDetails_) {
                const LaunchShape shape{clampU32(e.grid[0]),  clampU32(e.grid[1]),  clampU32(e.grid[2]),
                                        clampU32(e.block[0]), clampU32(e.block[1]), clampU32(e.block[2])};
                if (analysisOnly_) {
                    k.shape.push_back(shapes_.id(shape));
                } else {
                    k.gridX.push_back(shape[0]);
                    k.gridY.push_back(shape[1]);
                    k.gridZ.push_back(shape[2]);
                    k.blockX.push_back(shape[3]);
                    k.blockY.push_back(shape[4]);
                    k.blockZ.push_back(shape[5]);
                }
                if (!launchShapeOnly_ && !analysisOnly_) {
                    k.registersPerThread.push_back(clampU32(e.registers));
                    // Kineto reports static + dynamic shared memory as one figure.
                    k.staticSharedMemory.push_back(clampU32(e.sharedMemory));
                    k.dynamicSharedMemory.push_back(0);
                    k.graphId.push_back(0);
                    k.graphNodeId.push_back(0);
                }
            }
            ++kernels_;
            if (namesGroupCollective(e.comm))
                keepRecord(pendingGroup_, p, e, static_cast<uint32_t>(device), start, end);
            if (!e.comm.collective.empty()) {
                if (describesSendsOrReceives(e.comm)) {
                    // Peers need the process's own rank, known only at the end.
                    const auto index = static_cast<size_t>(&p - processes_.data());
                    if (pendingComm_.size() <= index) pendingComm_.resize(index + 1);
                    pendingComm_[index].push_back({static_cast<uint32_t>(device), start, end, e.comm});
                } else {
                    addCollective(p, e, device, start, end);
                }
            }
            break;
        }
        case EventKind::Memcpy: {
            auto& c = deviceFor(p, device).copies;
            const CopyKinds kinds = parseCopyName(e.name);
            c.start.push_back(start);
            c.end.push_back(end);
            c.stream.push_back(stream == kNoId ? 0 : stream);
            c.correlation.push_back(correlation);
            c.bytes.push_back(e.bytes == kAbsent ? 0 : static_cast<uint64_t>(e.bytes));
            c.copyKind.push_back(kinds.copy);
            c.srcKind.push_back(kinds.src);
            c.dstKind.push_back(kinds.dst);
            c.srcDevice.push_back(kNoId);
            c.dstDevice.push_back(kNoId);
            break;
        }
        case EventKind::Memset: {
            auto& m = deviceFor(p, device).memsets;
            m.start.push_back(start);
            m.end.push_back(end);
            m.stream.push_back(stream == kNoId ? 0 : stream);
            m.correlation.push_back(correlation);
            m.bytes.push_back(e.bytes == kAbsent ? 0 : static_cast<uint64_t>(e.bytes));
            m.value.push_back(0);
            break;
        }
        case EventKind::Sync: {
            auto& s = deviceFor(p, device == kAbsent ? 0 : device).syncs;
            s.start.push_back(start);
            s.end.push_back(end);
            s.stream.push_back(e.stream == kAbsent ? kNoId : stream);
            s.correlation.push_back(correlation);
            s.type.push_back(parseSyncName(e.name));
            s.eventId.push_back(kNoId);
            break;
        }
        case EventKind::Runtime:
        case EventKind::Driver: {
            auto& a = p.apiCalls;
            a.start.push_back(start);
            a.end.push_back(end);
            a.globalTid.push_back(globalTid(e.pid, e.tid));
            a.correlation.push_back(correlation);
            a.name.push_back(capture_.strings.intern(e.name));
            if (!analysisOnly_) {
                a.returnValue.push_back(0);
                a.kind.push_back(kind == EventKind::Driver ? ApiKind::Driver : ApiKind::Runtime);
            }
            if (p.pid == 0 && e.pid > 0) p.pid = e.pid;
            break;
        }
        case EventKind::CpuRange:
        case EventKind::GpuRange: {
            // For GPU ranges Kineto's pid/tid are the device and stream.
            appendRange(p.ranges, e, start, end, kind == EventKind::GpuRange);
            if (kind == EventKind::CpuRange) keepCommOperator(p, e, start, end);
            if (kind == EventKind::CpuRange && p.pid == 0 && e.pid > 0) p.pid = e.pid;
            break;
        }
        case EventKind::CpuOp: {
            auto& ops = p.cpuOps;
            ops.start.push_back(start);
            ops.end.push_back(end);
            ops.name.push_back(capture_.strings.intern(e.name));
            if (!analysisOnly_) ops.globalTid.push_back(globalTid(e.pid, e.tid));
            keepCommOperator(p, e, start, end);
            break;
        }
        case EventKind::Ignored:
            break;
    }
}

// PyTorch writes a collective's size on its NCCL kernel ("In msg nelems",
// "dtype", "Collective name"): one plugin-style row per such kernel, with the
// kernel's own times, so sizes reach the analyzer as from the NCCL plugin.
void CaptureBuilder::addCollective(Process& p, const Event& e, int64_t device, TimeNs start, TimeNs end) {
    const CommArgs& a = e.comm;
    const std::string_view func = ncclFuncOfCollective(a.collective);
    const int elem = dtypeBytes(a.dtype);
    const int64_t nelems = ncclElementsOf(a, func);
    if (func.empty() || elem == 0 || nelems < 0) return;
    appendArgsRow(p.collectives, capture_.strings, capture_.strings.intern(func), capture_.strings.intern(a.dtype),
                  static_cast<uint64_t>(nelems), static_cast<uint64_t>(nelems) * static_cast<uint64_t>(elem),
                  static_cast<int32_t>(std::clamp<int64_t>(distRank_, -1, INT_MAX)),
                  static_cast<int32_t>(a.groupSize == kAbsent ? -1 : std::min<int64_t>(a.groupSize, INT_MAX)),
                  idOrNone(device), start, end);
}

void CaptureBuilder::keepRecord(std::vector<std::vector<PendingGroupCall>>& into, Process& p, const Event& e,
                                uint32_t device, TimeNs start, TimeNs end) {
    const auto index = static_cast<size_t>(&p - processes_.data());
    if (into.size() <= index) into.resize(index + 1);
    if (into[index].size() >= kMaxGroupRecordsPerProcess) return;
    into[index].push_back({globalTid(e.pid, e.tid), device, start, end, e.comm});
}

void CaptureBuilder::keepCommOperator(Process& p, const Event& e, TimeNs start, TimeNs end) {
    if (namesGroupCollective(e.comm)) keepRecord(pendingGroup_, p, e, kNoId, start, end);
    if (describesSendsOrReceives(e.comm)) keepRecord(pendingP2pOperators_, p, e, kNoId, start, end);
}

void CaptureBuilder::onDistributedInfo(int64_t rank, int64_t worldSize) {
    distRank_ = rank;
    distWorldSize_ = worldSize;
}

void CaptureBuilder::onDeviceProperties(const DeviceProperties& d) {
    if (d.id < 0 || d.id >= static_cast<int64_t>(kNoId)) return;
    GpuInfo g;
    g.id = static_cast<uint32_t>(d.id);
    g.name = d.name;
    g.totalMemory = static_cast<uint64_t>(d.totalMemory);
    g.smCount = static_cast<int>(std::min<int64_t>(d.smCount, INT_MAX));
    g.computeMajor = static_cast<int>(std::min<int64_t>(d.computeMajor, INT_MAX));
    g.computeMinor = static_cast<int>(std::min<int64_t>(d.computeMinor, INT_MAX));
    gpus_[d.id] = g;
}

void CaptureBuilder::onProcessInfo(const ProcessInfo& info) {
    if (info.tracePid == kAbsent || processByTracePid_.count(info.tracePid)) return;
    if (processes_.size() >= 65536) throw FormatError(path_, "too many entries in overlapscopeProcesses");
    // Events read before this entry went to a default process; keep it first.
    if (processByTracePid_.empty() && !processes_.empty()) {
        processByTracePid_[info.tracePid] = 0;
    } else {
        processByTracePid_[info.tracePid] = processes_.size();
        processes_.emplace_back();
    }
    Process& p = processes_[processByTracePid_[info.tracePid]];
    p.pid = info.pid;
    p.rank = static_cast<int>(std::clamp<int64_t>(info.rank, -1, INT_MAX));
    p.localRank = static_cast<int>(std::clamp<int64_t>(info.localRank, -1, INT_MAX));
    p.worldSize = static_cast<int>(std::clamp<int64_t>(info.worldSize, -1, INT_MAX));
    p.host = info.host;
    p.name = info.name;
}

void CaptureBuilder::onBaseTimeNs(int64_t baseTimeNs) { baseTimeNs_ = baseTimeNs; }

void CaptureBuilder::onTopLevelScalar(const std::string& key, const std::string& value) {
    if (meta_.size() < 256) meta_["kineto." + key] = value.substr(0, 4096);
}

void CaptureBuilder::finish() {
    if (processes_.empty()) processes_.emplace_back();
    const TimeNs origin = minTs_ == INT64_MAX ? 0 : minTs_;
    for (auto& p : processes_) {
        p.sourcePath = path_;
        p.sessionStartUtcNs = baseTimeNs_ + origin;
        p.meta.insert(meta_.begin(), meta_.end());
        p.meta["source_format"] = "kineto";
        if (processByTracePid_.empty()) {
            p.rank = static_cast<int>(std::clamp<int64_t>(distRank_, -1, INT_MAX));
            p.worldSize = static_cast<int>(std::clamp<int64_t>(distWorldSize_, -1, INT_MAX));
        }
        for (auto& d : p.devices) {
            shiftColumn(d.kernels.start, origin);
            shiftColumn(d.kernels.end, origin);
            shiftColumn(d.copies.start, origin);
            shiftColumn(d.copies.end, origin);
            shiftColumn(d.memsets.start, origin);
            shiftColumn(d.memsets.end, origin);
            shiftColumn(d.syncs.start, origin);
            shiftColumn(d.syncs.end, origin);
            if (const auto it = gpus_.find(d.id); it != gpus_.end()) d.gpu = it->second;
            if (!d.kernels.shape.empty()) d.kernels.shapes = shapes_.shapes();
        }
        shiftColumn(p.apiCalls.start, origin);
        shiftColumn(p.apiCalls.end, origin);
        shiftColumn(p.collectives.gpuStart, origin);
        shiftColumn(p.collectives.gpuEnd, origin);
        shiftColumn(p.ranges.start, origin);
        shiftColumn(p.ranges.end, origin);
        shiftColumn(p.cpuOps.start, origin);
        shiftColumn(p.cpuOps.end, origin);
        const auto index = static_cast<size_t>(&p - processes_.data());
        std::vector<PendingComm> comms;
        if (index < pendingComm_.size()) comms = std::move(pendingComm_[index]);
        for (auto& c : comms) {
            c.start -= origin;
            c.end -= origin;
        }
        if (index < pendingP2pOperators_.size()) {
            auto& operators = pendingP2pOperators_[index];
            for (auto& r : operators) {
                r.start -= origin;
                r.end -= origin;
            }
            auto joined = commsOfOperators(p, capture_.strings, std::move(operators), comms);
            if (!joined.empty()) {
                comms.insert(comms.end(), std::make_move_iterator(joined.begin()),
                             std::make_move_iterator(joined.end()));
                // Rows in kernel order: sends and receives are numbered per peer in row order.
                std::stable_sort(comms.begin(), comms.end(),
                                 [](const auto& x, const auto& y) { return x.start < y.start; });
            }
        }
        for (const auto& c : comms) appendCommRows(p, capture_.strings, c, p.rank);
    }
    pendingComm_.clear();
    pendingP2pOperators_.clear();
    for (size_t index = 0; index < pendingGroup_.size() && index < processes_.size(); ++index) {
        for (auto& r : pendingGroup_[index]) {
            r.start -= origin;
            r.end -= origin;
        }
        appendGroupCalls(processes_[index], capture_.strings, pendingGroup_[index], processes_[index].rank);
    }
    pendingGroup_.clear();
    // A synchronisation without args.device lands on device 0 (formats.md).
    for (auto& p : processes_) p.dropDevicesWithoutWork();
    if (kernels_ == 0)
        capture_.warnings.push_back(path_ +
                                    ": the trace holds no GPU kernels (was the profiler "
                                    "run with ProfilerActivity.CUDA?)");
    for (auto& p : processes_) capture_.processes.push_back(std::move(p));
    processes_.clear();
}

}  // namespace osc::kineto
