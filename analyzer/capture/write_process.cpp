// writeProcess(): one in-memory Process → one capture file, losslessly
// (everything readSqliteCapture() fills comes back the same).
#include "analyzer/capture/capture_writer.h"
#include "analyzer/capture/schema.h"

#include <string>
#include <vector>

namespace osc {
namespace {

// Model string ids → file StringIds ids, each name hashed once per file
// rather than once per row.
class NameMap {
public:
    NameMap(const StringTable& strings, CaptureWriter& writer)
        : strings_(strings), writer_(writer), ids_(strings.size(), kNoId) {}
    uint32_t operator()(uint32_t modelId) {
        if (modelId >= ids_.size()) return writer_.internString({});
        if (ids_[modelId] == kNoId) ids_[modelId] = writer_.internString(strings_.at(modelId));
        return ids_[modelId];
    }

private:
    const StringTable& strings_;
    CaptureWriter& writer_;
    std::vector<uint32_t> ids_;
};

constexpr uint64_t kRowsPerCommit = 1u << 18;  // keeps the WAL small while writing

// Keys the writer owns: a process read from an older file must not carry its
// version into the new one.
bool writerOwned(const std::string& key) {
    return key == schema::kFormatVersionKey || key == schema::meta::kToolVersion;
}

}  // namespace

void writeProcess(const Capture& capture, const Process& process, const std::string& path, bool overwrite) {
    auto writer = CaptureWriter::create(path, process.sessionStartUtcNs - process.timeOffsetNs, overwrite);
    auto& w = *writer;
    NameMap names(capture.strings, w);
    const uint64_t globalPid = schema::packGlobalPid(process.pid);
    auto maybeCommit = [&, next = kRowsPerCommit]() mutable {
        if (w.rowsWritten() >= next) {
            w.commit();
            next = w.rowsWritten() + kRowsPerCommit;
        }
    };

    for (const auto& [key, value] : process.meta)
        if (!writerOwned(key)) w.setMeta(key, value);
    if (!process.host.empty()) w.setMeta(schema::meta::kHost, process.host);
    w.setMeta(schema::meta::kPid, std::to_string(process.pid));
    if (process.rank >= 0) w.setMeta(schema::meta::kRank, std::to_string(process.rank));
    if (process.localRank >= 0) w.setMeta(schema::meta::kLocalRank, std::to_string(process.localRank));
    if (process.worldSize >= 0) w.setMeta(schema::meta::kWorldSize, std::to_string(process.worldSize));
    w.addProcess({globalPid, process.pid, process.name});
    for (const auto& [tid, name] : process.threadNames) w.addThreadName(tid, name);

    for (const auto& d : process.devices) {
        GpuInfo gpu = d.gpu;
        gpu.id = d.id;
        w.addGpu(gpu);
        for (const auto& [stream, name] : d.streamNames) w.addStreamName(globalPid, d.id, stream, name);

        const auto& k = d.kernels;
        // A capture loaded with LoadOptions::launchDetails off has no launch
        // columns; its kernels are written with the writer's defaults.
        const bool details = k.gridX.size() == k.size() && k.gridY.size() == k.size() && k.gridZ.size() == k.size() &&
                             k.blockX.size() == k.size() && k.blockY.size() == k.size() &&
                             k.blockZ.size() == k.size() && k.registersPerThread.size() == k.size() &&
                             k.staticSharedMemory.size() == k.size() && k.dynamicSharedMemory.size() == k.size() &&
                             k.graphId.size() == k.size() && k.graphNodeId.size() == k.size();
        for (size_t i = 0; i < k.size(); ++i) {
            KernelRow r;
            r.start = k.start[i];
            r.end = k.end[i];
            r.deviceId = d.id;
            r.streamId = k.stream[i];
            r.correlationId = k.correlation[i];
            r.globalPid = globalPid;
            r.demangledNameId = names(k.name[i]);
            r.shortNameId = names(k.shortName[i]);
            if (details) {
                r.gridX = k.gridX[i];
                r.gridY = k.gridY[i];
                r.gridZ = k.gridZ[i];
                r.blockX = k.blockX[i];
                r.blockY = k.blockY[i];
                r.blockZ = k.blockZ[i];
                r.registersPerThread = k.registersPerThread[i];
                r.staticSharedMemory = k.staticSharedMemory[i];
                r.dynamicSharedMemory = k.dynamicSharedMemory[i];
                r.graphId = k.graphId[i];
                r.graphNodeId = k.graphNodeId[i];
            }
            w.addKernel(r);
            maybeCommit();
        }
        const auto& c = d.copies;
        for (size_t i = 0; i < c.size(); ++i) {
            CopyRow r;
            r.start = c.start[i];
            r.end = c.end[i];
            r.deviceId = d.id;
            r.streamId = c.stream[i];
            r.correlationId = c.correlation[i];
            r.globalPid = globalPid;
            r.bytes = c.bytes[i];
            r.copyKind = c.copyKind[i];
            r.srcKind = c.srcKind[i];
            r.dstKind = c.dstKind[i];
            r.srcDeviceId = c.srcDevice[i];
            r.dstDeviceId = c.dstDevice[i];
            w.addCopy(r);
            maybeCommit();
        }
        const auto& m = d.memsets;
        for (size_t i = 0; i < m.size(); ++i) {
            MemsetRow r;
            r.start = m.start[i];
            r.end = m.end[i];
            r.deviceId = d.id;
            r.streamId = m.stream[i];
            r.correlationId = m.correlation[i];
            r.globalPid = globalPid;
            r.value = m.value[i];
            r.bytes = m.bytes[i];
            w.addMemset(r);
            maybeCommit();
        }
        const auto& s = d.syncs;
        for (size_t i = 0; i < s.size(); ++i) {
            SyncRow r;
            r.start = s.start[i];
            r.end = s.end[i];
            r.deviceId = d.id;
            r.streamId = s.stream[i];
            r.correlationId = s.correlation[i];
            r.globalPid = globalPid;
            r.syncType = s.type[i];
            r.eventId = s.eventId[i];
            w.addSync(r);
            maybeCommit();
        }
    }

    const auto& a = process.apiCalls;
    for (size_t i = 0; i < a.size(); ++i) {
        ApiCallRow r;
        r.start = a.start[i];
        r.end = a.end[i];
        r.kind = a.kind[i];
        r.globalTid = a.globalTid[i];
        r.correlationId = a.correlation[i];
        r.nameId = names(a.name[i]);
        r.returnValue = a.returnValue[i];
        w.addApiCall(r);
        maybeCommit();
    }
    const auto& g = process.ranges;
    for (size_t i = 0; i < g.size(); ++i) {
        RangeRow r;
        r.start = g.start[i];
        r.end = g.end[i];
        r.kind = g.kind[i];
        r.textId = names(g.name[i]);
        r.domain = g.domain[i] == kNoId ? std::string_view{} : capture.strings.at(g.domain[i]);
        r.globalTid = g.globalTid[i];
        r.endGlobalTid = g.globalTid[i];
        r.category = g.category[i];
        r.color = g.color[i];
        r.onGpu = i < g.onGpu.size() && g.onGpu[i] != 0;
        w.addRange(r);
        maybeCommit();
    }
    const auto& n = process.collectives;
    for (size_t i = 0; i < n.size(); ++i) {
        CollectiveRow r;
        r.commHash = n.commHash[i];
        r.rank = n.rank[i];
        r.nranks = n.nranks[i];
        r.seqNumber = n.seqNumber[i];
        r.func = capture.strings.at(n.func[i]);
        r.datatype = capture.strings.at(n.datatype[i]);
        r.algo = capture.strings.at(n.algo[i]);
        r.proto = capture.strings.at(n.proto[i]);
        r.count = n.count[i];
        r.bytes = n.bytes[i];
        r.root = n.root[i];
        r.nChannels = n.nChannels[i];
        r.deviceId = n.device[i];
        r.enqueue = n.enqueue[i];
        r.gpuStart = n.gpuStart[i];
        r.gpuEnd = n.gpuEnd[i];
        w.addCollective(r);
    }
    w.close(CaptureEnd::Stopped);
}

}  // namespace osc
