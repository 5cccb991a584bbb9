#include "analyzer/synth/process_sinks.h"

#include "analyzer/capture/row_tables.h"

namespace osc::synth {

ProcessSink::ProcessSink(Capture& capture, Process& process, const ProcessIdentity& who)
    : capture_(capture), process_(process) {
    process_.host = who.host;
    process_.pid = who.pid;
    process_.rank = who.rank;
    process_.localRank = who.localRank;
    process_.worldSize = who.worldSize;
    process_.name = who.commandLine;
    process_.sessionStartUtcNs = who.sessionStartUtcNs;
    process_.deviceById(who.gpu.id).gpu = who.gpu;
}

void ProcessSink::addKernel(const KernelRow& r) {
    auto& k = process_.deviceById(r.deviceId).kernels;
    k.start.push_back(r.start);
    k.end.push_back(r.end);
    k.stream.push_back(r.streamId);
    k.correlation.push_back(r.correlationId);
    k.name.push_back(capture_.strings.intern(r.demangledName));
    k.shortName.push_back(capture_.strings.intern(r.shortName));
    k.gridX.push_back(r.gridX);
    k.gridY.push_back(r.gridY);
    k.gridZ.push_back(r.gridZ);
    k.blockX.push_back(r.blockX);
    k.blockY.push_back(r.blockY);
    k.blockZ.push_back(r.blockZ);
    k.registersPerThread.push_back(r.registersPerThread);
    k.staticSharedMemory.push_back(r.staticSharedMemory);
    k.dynamicSharedMemory.push_back(r.dynamicSharedMemory);
    k.graphId.push_back(r.graphId);
    k.graphNodeId.push_back(r.graphNodeId);
}

// The models emit no copies, memsets or syncs today; kept as the reader
// keeps them, so that a model that does gets them in memory as in a file.
void ProcessSink::addCopy(const CopyRow& r) { appendRow(process_.deviceById(r.deviceId).copies, r); }

void ProcessSink::addMemset(const MemsetRow& r) { appendRow(process_.deviceById(r.deviceId).memsets, r); }

void ProcessSink::addSync(const SyncRow& r) {
    auto& y = process_.deviceById(r.deviceId).syncs;
    y.start.push_back(r.start);
    y.end.push_back(r.end);
    y.stream.push_back(r.streamId);
    y.correlation.push_back(r.correlationId);
    y.type.push_back(r.syncType);
    y.eventId.push_back(r.eventId);
}

void ProcessSink::addApiCall(const ApiCallRow& r) {
    auto& a = process_.apiCalls;
    a.start.push_back(r.start);
    a.end.push_back(r.end);
    a.globalTid.push_back(r.globalTid);
    a.correlation.push_back(r.correlationId);
    a.name.push_back(capture_.strings.intern(r.name));
    a.returnValue.push_back(r.returnValue);
    a.kind.push_back(r.kind);
}

void ProcessSink::addRange(const RangeRow& r) {
    auto& t = process_.ranges;
    t.start.push_back(r.start);
    t.end.push_back(r.end < 0 ? r.start : r.end);
    t.name.push_back(capture_.strings.intern(r.text));
    t.globalTid.push_back(r.globalTid);
    t.domain.push_back(r.domain.empty() ? kNoId : capture_.strings.intern(r.domain));
    t.category.push_back(r.category);
    t.color.push_back(r.color);
    t.kind.push_back(r.kind);
    t.onGpu.push_back(0);
}

void ProcessSink::addCollective(const CollectiveRow& r) { appendRow(process_.collectives, capture_.strings, r); }

}  // namespace osc::synth
