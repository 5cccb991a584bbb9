// Building captures in memory for the metrics tests: every column of every
// table is pushed, so the model stays consistently sized.
#pragma once

#include "analyzer/capture/model.h"

#include <map>
#include <optional>
#include <string>
#include <tuple>

namespace osc::testing {

class TraceBuilder {
public:
    Capture capture;

    Process& process(int rank) {
        for (auto& p : capture.processes)
            if (p.rank == rank) return p;
        Process p;
        p.rank = rank;
        p.host = "node";
        p.pid = 1000 + rank;
        capture.processes.push_back(std::move(p));
        return capture.processes.back();
    }
    Device& device(int rank, uint32_t id = 0) { return process(rank).deviceById(id); }

    void kernel(int rank, uint32_t dev, const std::string& name, TimeNs start, TimeNs end, uint32_t stream = 7,
                uint32_t correlation = 0) {
        KernelTable& k = device(rank, dev).kernels;
        const uint32_t id = capture.strings.intern(name);
        k.start.push_back(start);
        k.end.push_back(end);
        k.stream.push_back(stream);
        k.correlation.push_back(correlation);
        k.name.push_back(id);
        k.shortName.push_back(id);
        for (auto* c : {&k.gridX, &k.gridY, &k.gridZ, &k.blockX, &k.blockY, &k.blockZ}) c->push_back(1);
        for (auto* c : {&k.registersPerThread, &k.staticSharedMemory, &k.dynamicSharedMemory, &k.graphId})
            c->push_back(0);
        k.graphNodeId.push_back(0);
    }
    void copy(int rank, uint32_t dev, CopyKind kind, TimeNs start, TimeNs end, uint64_t bytes = 0, uint32_t stream = 9,
              uint32_t correlation = 0) {
        CopyTable& c = device(rank, dev).copies;
        c.start.push_back(start);
        c.end.push_back(end);
        c.stream.push_back(stream);
        c.correlation.push_back(correlation);
        c.bytes.push_back(bytes);
        c.copyKind.push_back(kind);
        c.srcKind.push_back(MemKind::Device);
        c.dstKind.push_back(MemKind::Device);
        c.srcDevice.push_back(dev);
        c.dstDevice.push_back(dev);
    }
    void memset(int rank, uint32_t dev, TimeNs start, TimeNs end, uint32_t stream = 9, uint32_t correlation = 0) {
        MemsetTable& m = device(rank, dev).memsets;
        m.start.push_back(start);
        m.end.push_back(end);
        m.stream.push_back(stream);
        m.correlation.push_back(correlation);
        m.bytes.push_back(64);
        m.value.push_back(0);
    }
    void api(int rank, TimeNs start, TimeNs end, uint32_t correlation, uint64_t tid = 1) {
        ApiCallTable& a = process(rank).apiCalls;
        a.start.push_back(start);
        a.end.push_back(end);
        a.globalTid.push_back(tid);
        a.correlation.push_back(correlation);
        a.name.push_back(capture.strings.intern("cudaLaunchKernel"));
        a.returnValue.push_back(0);
        a.kind.push_back(ApiKind::Runtime);
    }
    void range(int rank, const std::string& name, TimeNs start, TimeNs end, uint64_t tid = 1, bool onGpu = false) {
        RangeTable& r = process(rank).ranges;
        r.start.push_back(start);
        r.end.push_back(end);
        r.name.push_back(capture.strings.intern(name));
        r.globalTid.push_back(tid);
        r.domain.push_back(kNoId);
        r.category.push_back(0);
        r.color.push_back(0);
        r.kind.push_back(end > start ? RangeKind::PushPop : RangeKind::Mark);
        r.onGpu.push_back(onGpu ? 1 : 0);
    }
    // A kernel launched by an API call at `launchAt` on thread `tid`.
    void launched(int rank, uint32_t dev, const std::string& name, TimeNs launchAt, TimeNs start, TimeNs end,
                  uint32_t stream = 7, uint64_t tid = 1) {
        const uint32_t corr = nextCorrelation_++;
        api(rank, launchAt, launchAt + 1, corr, tid);
        kernel(rank, dev, name, start, end, stream, corr);
    }
    void pluginRow(int rank, uint32_t dev, uint64_t commHash, uint64_t seq, const std::string& func, uint64_t bytes,
                   TimeNs enqueue, TimeNs gpuStart = -1, TimeNs gpuEnd = -1, const std::string& algo = "RING",
                   const std::string& proto = "SIMPLE") {
        CollectiveTable& t = process(rank).collectives;
        t.commHash.push_back(commHash);
        t.rank.push_back(rank);
        t.nranks.push_back(2);
        t.seqNumber.push_back(seq);
        t.func.push_back(capture.strings.intern(func));
        t.datatype.push_back(capture.strings.intern("ncclFloat32"));
        t.algo.push_back(capture.strings.intern(algo));
        t.proto.push_back(capture.strings.intern(proto));
        t.count.push_back(bytes / 4);
        t.bytes.push_back(bytes);
        t.root.push_back(-1);
        t.nChannels.push_back(2);
        t.device.push_back(dev);
        t.enqueue.push_back(enqueue);
        t.gpuStart.push_back(gpuStart);
        t.gpuEnd.push_back(gpuEnd);
    }
    // A point-to-point row as NCCL's plugin records it: the peer in `root`,
    // and unless given, the agent's seqNumber: this rank's count of calls
    // per communicator, peer and direction, in the order rows are added.
    void p2pRow(int rank, uint32_t dev, uint64_t commHash, const std::string& func, int peer, int nranks,
                uint64_t bytes, TimeNs gpuStart, TimeNs gpuEnd, std::optional<uint64_t> seq = std::nullopt) {
        const uint64_t number = seq ? *seq : p2pCalls_[{rank, commHash, peer, func}]++;
        pluginRow(rank, dev, commHash, number, func, bytes, gpuStart, gpuStart, gpuEnd);
        CollectiveTable& t = process(rank).collectives;
        t.root.back() = peer;
        t.nranks.back() = nranks;
    }
    Capture& finalized() {
        capture.finalize();
        return capture;
    }

private:
    uint32_t nextCorrelation_ = 1;
    std::map<std::tuple<int, uint64_t, int, std::string>, uint64_t> p2pCalls_;
};

}  // namespace osc::testing
