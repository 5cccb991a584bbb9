// Small captures with hand-worked answers for the GUI tests.
//
// One rank, one GPU (device 0):
//   stream 7  compute  gemm_kernel   [1000, 5000)  [6000, 8000)
//   stream 13 comm     ncclDevKernel_AllReduce_Sum_f32_RING_LL  [4000, 7000)
//   stream 20 memcpy HtoD [500, 900)
//   NVTX ProfilerStep#1 [0, 9000)
// So C = [1000,5000) ∪ [6000,8000), M = [4000,7000),
// C∩M = [4000,5000) ∪ [6000,7000) (2000 ns), M∖C = [5000,6000) (1000 ns).
#pragma once

#include "analyzer/capture/model.h"

#include <memory>
#include <string>

namespace osc::guitest {

inline void addKernel(Capture& c, Device& d, TimeNs s, TimeNs e, uint32_t stream, const std::string& name,
                      uint32_t corr = 0) {
    KernelTable& k = d.kernels;
    k.start.push_back(s);
    k.end.push_back(e);
    k.stream.push_back(stream);
    k.correlation.push_back(corr);
    k.name.push_back(c.strings.intern(name));
    k.shortName.push_back(c.strings.intern(name.substr(0, name.find('('))));
    for (auto* v : {&k.gridX, &k.gridY, &k.gridZ, &k.blockX, &k.blockY, &k.blockZ, &k.registersPerThread,
                    &k.staticSharedMemory, &k.dynamicSharedMemory})
        v->push_back(1);
    k.graphId.push_back(0);
    k.graphNodeId.push_back(0);
}

inline void addCopy(Device& d, TimeNs s, TimeNs e, uint32_t stream, CopyKind kind, uint64_t bytes) {
    CopyTable& c = d.copies;
    c.start.push_back(s);
    c.end.push_back(e);
    c.stream.push_back(stream);
    c.correlation.push_back(0);
    c.bytes.push_back(bytes);
    c.copyKind.push_back(kind);
    c.srcKind.push_back(MemKind::Pinned);
    c.dstKind.push_back(MemKind::Device);
    c.srcDevice.push_back(0);
    c.dstDevice.push_back(0);
}

inline void addRange(Capture& c, Process& p, TimeNs s, TimeNs e, const std::string& name) {
    RangeTable& r = p.ranges;
    r.start.push_back(s);
    r.end.push_back(e);
    r.name.push_back(c.strings.intern(name));
    r.globalTid.push_back(1);
    r.domain.push_back(kNoId);
    r.category.push_back(0);
    r.color.push_back(0);
    r.kind.push_back(RangeKind::PushPop);
    r.onGpu.push_back(0);
}

inline void addApiCall(Capture& c, Process& p, TimeNs s, TimeNs e, uint64_t tid, const std::string& name,
                       uint32_t corr) {
    ApiCallTable& a = p.apiCalls;
    a.start.push_back(s);
    a.end.push_back(e);
    a.globalTid.push_back(tid);
    a.correlation.push_back(corr);
    a.name.push_back(c.strings.intern(name));
    a.returnValue.push_back(0);
    a.kind.push_back(ApiKind::Runtime);
}

inline void addCpuOp(Capture& c, Process& p, TimeNs s, TimeNs e, uint64_t tid, const std::string& name) {
    CpuOpTable& r = p.cpuOps;
    r.start.push_back(s);
    r.end.push_back(e);
    r.name.push_back(c.strings.intern(name));
    r.globalTid.push_back(tid);
}

inline const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";

// `ranks` copies of the single-rank pattern; rank r is shifted by r * shift ns.
inline std::shared_ptr<Capture> smallCapture(int ranks = 1, TimeNs shift = 200) {
    auto c = std::make_shared<Capture>();
    for (int r = 0; r < ranks; ++r) {
        Process p;
        p.host = "node";
        p.pid = 100 + r;
        p.rank = r;
        p.worldSize = ranks;
        const TimeNs o = r * shift;
        Device& d = p.deviceById(0);
        addKernel(*c, d, o + 1000, o + 5000, 7, "gemm_kernel");
        addKernel(*c, d, o + 4000, o + 7000, 13, kAllReduce);
        addKernel(*c, d, o + 6000, o + 8000, 7, "gemm_kernel");
        addCopy(d, o + 500, o + 900, 20, CopyKind::HtoD, 4096);
        addRange(*c, p, o + 0, o + 9000, "ProfilerStep#1");
        c->processes.push_back(std::move(p));
    }
    c->finalize();
    return c;
}

}  // namespace osc::guitest
