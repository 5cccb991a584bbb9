#include "analyzer/metrics/collectives.h"

#include "analyzer/metrics/plugin_clock.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace osc {
namespace {

// One SharedText per string id: every operation naming it shares it.
class SharedTexts {
public:
    explicit SharedTexts(const StringTable& strings) : strings_(strings) {}
    const SharedText& at(uint32_t id) {
        auto it = texts_.find(id);
        if (it == texts_.end()) it = texts_.emplace(id, SharedText(strings_.at(id))).first;
        return it->second;
    }

private:
    const StringTable& strings_;
    std::unordered_map<uint32_t, SharedText> texts_;
};

const char* copyKindName(CopyKind k) {
    switch (k) {
        case CopyKind::HtoD:
            return "HtoD";
        case CopyKind::DtoH:
            return "DtoH";
        case CopyKind::HtoA:
            return "HtoA";
        case CopyKind::AtoH:
            return "AtoH";
        case CopyKind::AtoA:
            return "AtoA";
        case CopyKind::AtoD:
            return "AtoD";
        case CopyKind::DtoA:
            return "DtoA";
        case CopyKind::DtoD:
            return "DtoD";
        case CopyKind::HtoH:
            return "HtoH";
        case CopyKind::PtoP:
            return "PtoP";
        default:
            return "Unknown";
    }
}

// NCCL plugin func names vs the collective in kernel names: point-to-point
// calls run inside the SendRecv kernel.
std::string kernelCollectiveOf(std::string_view func) {
    if (func == "Send" || func == "Recv" || func == "SendRecv") return "SendRecv";
    return std::string(func);
}

bool isAllToAllFunc(std::string_view func) {
    if (func.size() != 8) return false;
    constexpr std::string_view lower = "alltoall";
    for (size_t i = 0; i < 8; ++i)
        if ((func[i] | 0x20) != lower[i]) return false;
    return true;
}

void fillBandwidth(CollectiveInstance& op) {
    if (op.bytes && op.duration_ns > 0)
        op.bandwidth_gbps = static_cast<double>(*op.bytes) / static_cast<double>(op.duration_ns);
    else
        op.bandwidth_gbps.reset();
}

}  // namespace

std::vector<CollectiveInstance> collectCommOps(const Capture& capture, const Device& device,
                                               ActivityClassifier& classifier, const DeviceCoverage& coverage) {
    std::vector<CollectiveInstance> ops;
    struct KernelTexts {
        SharedText name, collective, datatype;
    };
    std::unordered_map<uint32_t, KernelTexts> textsOf;  // by name id: a device has a few communication kernels
    const auto finish = [&](CollectiveInstance& op) {
        op.duration_ns = std::max<TimeNs>(0, op.end_ns - op.start_ns);
        op.overlapped_ns = op.duration_ns ? coverage.compute.covered(op.start_ns, op.end_ns) : 0;
        op.exposed_ns = op.duration_ns - op.overlapped_ns;
        fillBandwidth(op);
    };
    const auto& k = device.kernels;
    size_t count = 0;
    for (size_t i = 0; i < k.size(); ++i) count += classifier.kernel(kernelNameId(k, i)) == Category::Communication;
    ops.reserve(count);
    // Whether each run is start-sorted, known as it is built: checked after,
    // it was another sweep over every operation (184 bytes each).
    bool kernelsSorted = true, copiesSorted = true;
    const KernelTexts* texts = nullptr;  // the last kernel's: its successor mostly has the same name
    uint32_t textsName = kNoId;
    for (size_t i = 0; i < k.size(); ++i) {
        const uint32_t nameId = kernelNameId(k, i);
        if (classifier.kernel(nameId) != Category::Communication) continue;
        if (!texts || nameId != textsName) {
            auto found = textsOf.find(nameId);
            if (found == textsOf.end()) {
                const NcclKernelName& parsed = classifier.ncclName(nameId);
                found =
                    textsOf.emplace(nameId, KernelTexts{capture.strings.at(nameId), parsed.collective, parsed.datatype})
                        .first;
            }
            texts = &found->second;
            textsName = nameId;
        }
        CollectiveInstance op;
        op.name = texts->name;
        op.collective = texts->collective;
        op.datatype = texts->datatype;
        if (!ops.empty() && k.start[i] < ops.back().start_ns) kernelsSorted = false;
        op.start_ns = k.start[i];
        op.end_ns = k.end[i];
        op.stream = k.stream[i];
        op.kernelIndex = i;
        finish(op);
        ops.push_back(std::move(op));
    }
    const size_t nKernels = ops.size();
    std::map<CopyKind, SharedText> copyNames;
    const auto& c = device.copies;
    for (size_t i = 0; i < c.size(); ++i) {
        const CopyKind kind = i < c.copyKind.size() ? c.copyKind[i] : CopyKind::Unknown;
        if (classifier.copy(kind) != Category::Communication) continue;
        CollectiveInstance op;
        SharedText& name = copyNames[kind];
        if (name.empty()) name = std::string("Memcpy ") + copyKindName(kind);
        op.name = name;
        if (ops.size() > nKernels && c.start[i] < ops.back().start_ns) copiesSorted = false;
        op.start_ns = c.start[i];
        op.end_ns = c.end[i];
        op.stream = c.stream[i];
        if (i < c.bytes.size()) op.bytes = c.bytes[i];
        finish(op);
        ops.push_back(std::move(op));
    }
    // Kernels and copies are each start-sorted; merge the two runs.
    const auto byStart = [](const CollectiveInstance& a, const CollectiveInstance& b) {
        return a.start_ns < b.start_ns;
    };
    auto mid = ops.begin() + static_cast<std::ptrdiff_t>(nKernels);
    if (!kernelsSorted || !copiesSorted)
        std::stable_sort(ops.begin(), ops.end(), byStart);
    else if (mid != ops.end())
        std::inplace_merge(ops.begin(), mid, ops.end(), byStart);
    return ops;
}

void attachPluginRows(const Capture& capture, const Process& process, const Device& device,
                      std::vector<CollectiveInstance>& ops) {
    const CollectiveTable& t = process.collectives;
    if (t.size() == 0) return;
    const bool oneDevice = process.devices.size() == 1;
    const auto rowOnDevice = [&](size_t r) {
        const uint32_t d = r < t.device.size() ? t.device[r] : kNoId;
        return d == device.id || (d == kNoId && oneDevice);
    };
    const auto known = [](const std::vector<TimeNs>& col, size_t r) { return r < col.size() && col[r] >= 0; };

    std::vector<int> rowsOn(ops.size(), 0);
    SharedTexts texts(capture.strings);
    const SharedText allToAll("AllToAll"), sendRecv("SendRecv");
    const auto attach = [&](size_t opIndex, size_t r) {
        CollectiveInstance& op = ops[opIndex];
        const std::string_view func = capture.strings.at(t.func[r]);
        if (rowsOn[opIndex]++ == 0) {
            op.commHash = t.commHash[r];
            op.seqNumber = t.seqNumber[r];
            op.algo = texts.at(t.algo[r]);
            op.proto = texts.at(t.proto[r]);
            op.bytes = t.bytes[r];
            // A point-to-point call's kernel is a SendRecv kernel.
            if (op.collective.empty())
                op.collective = func == "Send" || func == "Recv" ? sendRecv : texts.at(t.func[r]);
            op.commRank = r < t.rank.size() ? t.rank[r] : -1;
            op.commSize = r < t.nranks.size() ? t.nranks[r] : -1;
        } else {
            op.bytes = op.bytes.value_or(0) + t.bytes[r];
        }
        // NCCL keeps a point-to-point call's peer where a rooted collective
        // keeps its root (docs/capture-format.md).
        if ((func == "Send" || func == "Recv") && r < t.root.size() && t.root[r] >= 0)
            op.p2p.push_back({func == "Send", t.root[r], t.bytes[r],
                              t.p2pNumbered ? std::optional<uint64_t>(t.seqNumber[r]) : std::nullopt});
        // An all-to-all the plugin names runs in a SendRecv kernel (NCCL 2.28).
        if (isAllToAllFunc(func) && (op.collective.empty() || op.collective == "SendRecv")) op.collective = allToAll;
        fillBandwidth(op);
    };

    // Kernel operations only; copies carry their own byte counts.
    std::vector<size_t> kernelOps;
    for (size_t i = 0; i < ops.size(); ++i)
        if (ops[i].kernelIndex != static_cast<size_t>(-1)) kernelOps.push_back(i);

    // The rows' GPU times and the kernels' may be on different clocks
    // (plugin_clock.h): put the rows on the kernels' first.
    std::vector<TimedSpan> rowSpans, kernelSpans;
    for (size_t r = 0; r < t.size(); ++r)
        if (rowOnDevice(r) && known(t.gpuStart, r))
            rowSpans.push_back({t.gpuStart[r], known(t.gpuEnd, r) ? t.gpuEnd[r] : -1});
    std::sort(rowSpans.begin(), rowSpans.end(),
              [](const TimedSpan& a, const TimedSpan& b) { return a.start < b.start; });
    for (size_t i : kernelOps) kernelSpans.push_back({ops[i].start_ns, ops[i].end_ns});
    const TimeNs shift = pluginClockOffset(rowSpans, kernelSpans);

    std::vector<size_t> untimed;
    for (size_t r = 0; r < t.size(); ++r) {
        if (!rowOnDevice(r)) continue;
        if (!known(t.gpuStart, r)) {
            untimed.push_back(r);
            continue;
        }
        const TimeNs g = t.gpuStart[r] + shift;
        const TimeNs gEnd = known(t.gpuEnd, r) ? t.gpuEnd[r] + shift : -1;
        if (shift != 0 && gEnd >= g) {
            // Moved from another clock, a row lands near its kernel's start,
            // on either side of it: the nearest kernel of its duration.
            const long k = kernelMatchingRow(kernelSpans, g, gEnd - g);
            if (k >= 0) {
                attach(kernelOps[static_cast<size_t>(k)], r);
                continue;
            }
        }
        // Last kernel op starting at or before g; walk back over overlapping ones.
        auto it = std::upper_bound(kernelOps.begin(), kernelOps.end(), g,
                                   [&](TimeNs v, size_t i) { return v < ops[i].start_ns; });
        // Communication kernels of one device overlap little (a few streams),
        // so a short walk back finds the ones containing g. Kernels starting
        // (and ending) exactly at the row's times are preferred: a pipeline's
        // sends and receives start the moment another one ends.
        size_t best = static_cast<size_t>(-1);
        int bestScore = 0;
        for (int walked = 0; it != kernelOps.begin() && walked < 64; ++walked) {
            --it;
            const auto& op = ops[*it];
            if (op.end_ns < g) continue;
            const int score = op.start_ns != g ? 1 : op.end_ns == gEnd ? 3 : 2;
            // Kernels with the same start (a send and a receive of one
            // pipeline step) take such rows in turn; otherwise the latest
            // starting one wins, as before.
            if (score > bestScore || (score == bestScore && score >= 2 && rowsOn[*it] < rowsOn[best])) {
                bestScore = score;
                best = *it;
            }
        }
        if (best == static_cast<size_t>(-1) && shift != 0 && gEnd >= g) {
            const long k = kernelStartingNear(kernelSpans, g, gEnd - g);
            if (k >= 0) best = kernelOps[static_cast<size_t>(k)];
        }
        if (best != static_cast<size_t>(-1))
            attach(best, r);
        else
            untimed.push_back(r);
    }

    // Order rule: per collective type, k-th unmatched row -> k-th unmatched kernel.
    std::map<std::string, std::vector<size_t>> freeOps, freeRows;
    for (size_t i : kernelOps)
        if (rowsOn[i] == 0 && !ops[i].collective.empty()) freeOps[ops[i].collective.str()].push_back(i);
    for (size_t r : untimed) freeRows[kernelCollectiveOf(capture.strings.at(t.func[r]))].push_back(r);
    for (auto& [coll, rows] : freeRows) {
        auto f = freeOps.find(coll);
        if (f == freeOps.end()) continue;
        const size_t n = std::min(rows.size(), f->second.size());
        for (size_t k = 0; k < n; ++k) attach(f->second[k], rows[k]);
    }
}

}  // namespace osc
