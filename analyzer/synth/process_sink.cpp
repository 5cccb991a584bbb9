#include "analyzer/synth/row_sink.h"

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

void ProcessSink::kernel(const KernelRow& r) {
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

void ProcessSink::apiCall(const ApiCallRow& r) {
    auto& a = process_.apiCalls;
    a.start.push_back(r.start);
    a.end.push_back(r.end);
    a.globalTid.push_back(r.globalTid);
    a.correlation.push_back(r.correlationId);
    a.name.push_back(capture_.strings.intern(r.name));
    a.returnValue.push_back(r.returnValue);
    a.kind.push_back(r.kind);
}

void ProcessSink::range(const RangeRow& r) {
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

void ProcessSink::collective(const CollectiveRow& r) {
    auto& c = process_.collectives;
    c.commHash.push_back(r.commHash);
    c.rank.push_back(r.rank);
    c.nranks.push_back(r.nranks);
    c.seqNumber.push_back(r.seqNumber);
    c.func.push_back(capture_.strings.intern(r.func));
    c.datatype.push_back(capture_.strings.intern(r.datatype));
    c.algo.push_back(capture_.strings.intern(r.algo));
    c.proto.push_back(capture_.strings.intern(r.proto));
    c.count.push_back(r.count);
    c.bytes.push_back(r.bytes);
    c.root.push_back(r.root);
    c.nChannels.push_back(r.nChannels);
    c.device.push_back(r.deviceId);
    c.enqueue.push_back(r.enqueue);
    c.gpuStart.push_back(r.gpuStart);
    c.gpuEnd.push_back(r.gpuEnd);
}

}  // namespace osc::synth
