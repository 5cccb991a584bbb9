// Write → read round trips: a hand-built Process with every field set must
// come back field for field, and the file must have the nsys layout.
#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/capture_writer.h"
#include "analyzer/capture/schema.h"
#include "analyzer/capture/sqlite_reader.h"
#include "tests/analyzer/test_capture_io_util.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace osc {
namespace {

using testing_io::queryPlan;
using testing_io::querySql;
using testsupport::TempDir;

constexpr int64_t kSession = 1'700'000'000'123'456'789;

// Every column of every table gets a distinct, recognisable value.
Process handBuiltProcess(Capture& c) {
    auto& s = c.strings;
    Process p;
    p.host = "node7";
    p.pid = 31337;
    p.rank = 3;
    p.localRank = 1;
    p.worldSize = 8;
    p.name = "python train.py";
    p.sessionStartUtcNs = kSession;
    p.meta = {{"command_line", "python train.py --steps 3"}, {"cupti_version", "26"}};

    auto& d0 = p.deviceById(0);
    d0.gpu = {0, "NVIDIA H100 80GB HBM3", "0000:1b:00.0", "GPU-1234", 85'520'809'984ull, 132, 9, 0};
    d0.streamNames = {{7, "compute"}, {13, "nccl"}};
    auto& k = d0.kernels;
    struct K {
        TimeNs s, e;
        uint32_t stream, corr;
        const char* name;
        const char* shortName;
    };
    const K ks[] = {{100, 900, 7, 11, "void gemm<float>(Params)", "gemm"},
                    {300, 1500, 13, 12, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgs4K)",
                     "ncclDevKernel_AllReduce_Sum_f32_RING_LL"},
                    {950, 1200, 7, 14, "void gemm<float>(Params)", "gemm"}};
    uint32_t n = 0;
    for (const auto& x : ks) {
        k.start.push_back(x.s);
        k.end.push_back(x.e);
        k.stream.push_back(x.stream);
        k.correlation.push_back(x.corr);
        k.name.push_back(s.intern(x.name));
        k.shortName.push_back(s.intern(x.shortName));
        k.gridX.push_back(100 + n);
        k.gridY.push_back(2 + n);
        k.gridZ.push_back(3 + n);
        k.blockX.push_back(256 + n);
        k.blockY.push_back(4 + n);
        k.blockZ.push_back(5 + n);
        k.registersPerThread.push_back(40 + n);
        k.staticSharedMemory.push_back(1024 + n);
        k.dynamicSharedMemory.push_back(2048 + n);
        k.graphId.push_back(n);
        k.graphNodeId.push_back(n ? 0x1234'5678'9abcull + n : 0);
        ++n;
    }
    auto& cp = d0.copies;
    cp.start = {50, 1600};
    cp.end = {90, 1700};
    cp.stream = {7, 13};
    cp.correlation = {10, 15};
    cp.bytes = {4096, 1ull << 33};
    cp.copyKind = {CopyKind::HtoD, CopyKind::PtoP};
    cp.srcKind = {MemKind::Pinned, MemKind::Device};
    cp.dstKind = {MemKind::Device, MemKind::Device};
    cp.srcDevice = {kNoId, 0};
    cp.dstDevice = {0, 2};
    auto& ms = d0.memsets;
    ms.start = {20};
    ms.end = {30};
    ms.stream = {7};
    ms.correlation = {9};
    ms.bytes = {1 << 20};
    ms.value = {0xAB};
    auto& sy = d0.syncs;
    sy.start = {1800, 1900};
    sy.end = {1850, 1990};
    sy.stream = {kNoId, 13};
    sy.correlation = {16, 17};
    sy.type = {SyncType::ContextSynchronize, SyncType::StreamWaitEvent};
    sy.eventId = {kNoId, 5};

    auto& d2 = p.deviceById(2);
    d2.gpu = {2, "NVIDIA H100 80GB HBM3", "0000:2b:00.0", "GPU-5678", 85'520'809'984ull, 132, 9, 0};
    d2.kernels.start = {400};
    d2.kernels.end = {450};
    d2.kernels.stream = {21};
    d2.kernels.correlation = {13};
    d2.kernels.name = {s.intern("void gemm<float>(Params)")};
    d2.kernels.shortName = {s.intern("gemm")};
    for (auto* col : {&d2.kernels.gridX, &d2.kernels.gridY, &d2.kernels.gridZ, &d2.kernels.blockX, &d2.kernels.blockY,
                      &d2.kernels.blockZ, &d2.kernels.registersPerThread, &d2.kernels.staticSharedMemory,
                      &d2.kernels.dynamicSharedMemory, &d2.kernels.graphId})
        col->push_back(1);
    d2.kernels.graphNodeId = {0};
    p.deviceById(5).gpu = {5, "idle GPU", "0000:5b:00.0", "GPU-idle", 1, 2, 8, 6};

    const uint64_t tid = schema::packGlobalTid(31337, 31340);
    auto& a = p.apiCalls;
    a.start = {5, 60, 70};
    a.end = {40, 80, 95};
    a.globalTid = {tid, tid, tid + 1};
    a.correlation = {9, 11, 12};
    a.name = {s.intern("cudaMemsetAsync_v3020"), s.intern("cudaLaunchKernel_v7000"), s.intern("cuLaunchKernelEx")};
    a.returnValue = {0, 0, 700};
    a.kind = {ApiKind::Runtime, ApiKind::Runtime, ApiKind::Driver};

    auto& r = p.ranges;
    r.start = {0, 250, 260, 1000};
    r.end = {2000, 1400, 260, 1100};
    r.name = {s.intern("step 1"), s.intern("ncclAllReduce"), s.intern("checkpoint"), s.intern("gpu annotation")};
    r.globalTid = {tid, tid + 1, tid, tid};
    r.domain = {kNoId, s.intern("NCCL"), kNoId, s.intern("NCCL")};
    r.category = {0, 3, 0, 1};
    r.color = {0xFF00FF00u, 0, 0xFF0000FFu, 7};
    r.kind = {RangeKind::PushPop, RangeKind::StartEnd, RangeKind::Mark, RangeKind::PushPop};
    r.onGpu = {0, 0, 0, 1};

    auto& cl = p.collectives;
    cl.commHash = {0xF00D'CAFE'DEAD'BEEFull, 42};
    cl.rank = {3, 3};
    cl.nranks = {8, 8};
    cl.seqNumber = {7, 8};
    cl.func = {s.intern("AllReduce"), s.intern("AllGather")};
    cl.datatype = {s.intern("ncclFloat32"), s.intern("ncclBfloat16")};
    cl.algo = {s.intern("RING"), s.intern("")};
    cl.proto = {s.intern("LL"), s.intern("")};
    cl.count = {1 << 20, 4096};
    cl.bytes = {4 << 20, 8192};
    cl.root = {-1, 0};
    cl.nChannels = {4, 2};
    cl.device = {0, kNoId};
    cl.enqueue = {280, -1};
    cl.gpuStart = {300, -1};
    cl.gpuEnd = {1500, -1};
    return p;
}

// Column equality, with string-id columns compared by their text.
void expectSameNames(const Capture& ca, const std::vector<uint32_t>& a, const Capture& cb,
                     const std::vector<uint32_t>& b, const char* what) {
    ASSERT_EQ(a.size(), b.size()) << what;
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(ca.strings.at(a[i]), cb.strings.at(b[i])) << what << " row " << i;
}
void expectSameDomains(const Capture& ca, const std::vector<uint32_t>& a, const Capture& cb,
                       const std::vector<uint32_t>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i] == kNoId, b[i] == kNoId) << "domain row " << i;
        if (a[i] != kNoId && b[i] != kNoId) {
            EXPECT_EQ(ca.strings.at(a[i]), cb.strings.at(b[i]));
        }
    }
}

void expectSameProcess(const Capture& ca, const Process& a, const Capture& cb, const Process& b) {
    EXPECT_EQ(a.host, b.host);
    EXPECT_EQ(a.pid, b.pid);
    EXPECT_EQ(a.rank, b.rank);
    EXPECT_EQ(a.localRank, b.localRank);
    EXPECT_EQ(a.worldSize, b.worldSize);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.sessionStartUtcNs - a.timeOffsetNs, b.sessionStartUtcNs - b.timeOffsetNs);
    for (const auto& [key, value] : a.meta) {
        ASSERT_TRUE(b.meta.count(key)) << key;
        EXPECT_EQ(b.meta.at(key), value) << key;
    }
    ASSERT_EQ(a.devices.size(), b.devices.size());
    for (size_t i = 0; i < a.devices.size(); ++i) {
        const auto& x = a.devices[i];
        const auto& y = b.devices[i];
        SCOPED_TRACE("device " + std::to_string(x.id));
        EXPECT_EQ(x.id, y.id);
        EXPECT_EQ(x.gpu.id, y.gpu.id);
        EXPECT_EQ(x.gpu.name, y.gpu.name);
        EXPECT_EQ(x.gpu.busLocation, y.gpu.busLocation);
        EXPECT_EQ(x.gpu.uuid, y.gpu.uuid);
        EXPECT_EQ(x.gpu.totalMemory, y.gpu.totalMemory);
        EXPECT_EQ(x.gpu.smCount, y.gpu.smCount);
        EXPECT_EQ(x.gpu.computeMajor, y.gpu.computeMajor);
        EXPECT_EQ(x.gpu.computeMinor, y.gpu.computeMinor);
        EXPECT_EQ(x.streamNames, y.streamNames);
        const auto &k = x.kernels, &l = y.kernels;
        EXPECT_EQ(k.start, l.start);
        EXPECT_EQ(k.end, l.end);
        EXPECT_EQ(k.stream, l.stream);
        EXPECT_EQ(k.correlation, l.correlation);
        expectSameNames(ca, k.name, cb, l.name, "kernel name");
        expectSameNames(ca, k.shortName, cb, l.shortName, "kernel short name");
        EXPECT_EQ(k.gridX, l.gridX);
        EXPECT_EQ(k.gridY, l.gridY);
        EXPECT_EQ(k.gridZ, l.gridZ);
        EXPECT_EQ(k.blockX, l.blockX);
        EXPECT_EQ(k.blockY, l.blockY);
        EXPECT_EQ(k.blockZ, l.blockZ);
        EXPECT_EQ(k.registersPerThread, l.registersPerThread);
        EXPECT_EQ(k.staticSharedMemory, l.staticSharedMemory);
        EXPECT_EQ(k.dynamicSharedMemory, l.dynamicSharedMemory);
        EXPECT_EQ(k.graphId, l.graphId);
        EXPECT_EQ(k.graphNodeId, l.graphNodeId);
        const auto &c = x.copies, &e = y.copies;
        EXPECT_EQ(c.start, e.start);
        EXPECT_EQ(c.end, e.end);
        EXPECT_EQ(c.stream, e.stream);
        EXPECT_EQ(c.correlation, e.correlation);
        EXPECT_EQ(c.bytes, e.bytes);
        EXPECT_EQ(c.copyKind, e.copyKind);
        EXPECT_EQ(c.srcKind, e.srcKind);
        EXPECT_EQ(c.dstKind, e.dstKind);
        EXPECT_EQ(c.srcDevice, e.srcDevice);
        EXPECT_EQ(c.dstDevice, e.dstDevice);
        EXPECT_EQ(x.memsets.start, y.memsets.start);
        EXPECT_EQ(x.memsets.end, y.memsets.end);
        EXPECT_EQ(x.memsets.stream, y.memsets.stream);
        EXPECT_EQ(x.memsets.correlation, y.memsets.correlation);
        EXPECT_EQ(x.memsets.bytes, y.memsets.bytes);
        EXPECT_EQ(x.memsets.value, y.memsets.value);
        EXPECT_EQ(x.syncs.start, y.syncs.start);
        EXPECT_EQ(x.syncs.end, y.syncs.end);
        EXPECT_EQ(x.syncs.stream, y.syncs.stream);
        EXPECT_EQ(x.syncs.correlation, y.syncs.correlation);
        EXPECT_EQ(x.syncs.type, y.syncs.type);
        EXPECT_EQ(x.syncs.eventId, y.syncs.eventId);
    }
    const auto &p = a.apiCalls, &q = b.apiCalls;
    EXPECT_EQ(p.start, q.start);
    EXPECT_EQ(p.end, q.end);
    EXPECT_EQ(p.globalTid, q.globalTid);
    EXPECT_EQ(p.correlation, q.correlation);
    expectSameNames(ca, p.name, cb, q.name, "API name");
    EXPECT_EQ(p.returnValue, q.returnValue);
    EXPECT_EQ(p.kind, q.kind);
    const auto &r = a.ranges, &s = b.ranges;
    EXPECT_EQ(r.start, s.start);
    EXPECT_EQ(r.end, s.end);
    expectSameNames(ca, r.name, cb, s.name, "range name");
    EXPECT_EQ(r.globalTid, s.globalTid);
    expectSameDomains(ca, r.domain, cb, s.domain);
    EXPECT_EQ(r.category, s.category);
    EXPECT_EQ(r.color, s.color);
    EXPECT_EQ(r.kind, s.kind);
    EXPECT_EQ(r.onGpu, s.onGpu);
    const auto &n = a.collectives, &m = b.collectives;
    EXPECT_EQ(n.commHash, m.commHash);
    EXPECT_EQ(n.rank, m.rank);
    EXPECT_EQ(n.nranks, m.nranks);
    EXPECT_EQ(n.seqNumber, m.seqNumber);
    expectSameNames(ca, n.func, cb, m.func, "func");
    expectSameNames(ca, n.datatype, cb, m.datatype, "datatype");
    expectSameNames(ca, n.algo, cb, m.algo, "algo");
    expectSameNames(ca, n.proto, cb, m.proto, "proto");
    EXPECT_EQ(n.count, m.count);
    EXPECT_EQ(n.bytes, m.bytes);
    EXPECT_EQ(n.root, m.root);
    EXPECT_EQ(n.nChannels, m.nChannels);
    EXPECT_EQ(n.device, m.device);
    EXPECT_EQ(n.enqueue, m.enqueue);
    EXPECT_EQ(n.gpuStart, m.gpuStart);
    EXPECT_EQ(n.gpuEnd, m.gpuEnd);
}

TEST(CaptureIoRoundTrip, EveryFieldComesBack) {
    TempDir dir;
    Capture original;
    original.processes.push_back(handBuiltProcess(original));
    const auto path = dir / "rank3.sqlite";
    writeProcess(original, original.processes[0], path);

    Capture read;
    readSqliteCapture(path, {}, read);
    ASSERT_EQ(read.processes.size(), 1u);
    EXPECT_TRUE(read.warnings.empty());
    const auto& p = read.processes[0];
    EXPECT_EQ(p.sourcePath, path);
    EXPECT_EQ(p.sessionStartUtcNs, kSession);
    EXPECT_EQ(p.meta.at("format_version"), std::to_string(schema::kFormatVersion));
    EXPECT_EQ(p.meta.at("end_reason"), "stopped");
    expectSameProcess(original, original.processes[0], read, p);
    // The idle GPU is a device of its own, with its description.
    ASSERT_NE(p.findDevice(5), nullptr);
    EXPECT_EQ(p.findDevice(5)->gpu.computeMinor, 6);
}

TEST(CaptureIoRoundTrip, WrittenAgainGivesTheSameProcess) {
    // read → write → read: a file read back writes out the same way (the
    // path synth and export take), with no version carried over.
    TempDir dir;
    Capture original;
    original.processes.push_back(handBuiltProcess(original));
    writeProcess(original, original.processes[0], dir / "a.sqlite");
    Capture once;
    readSqliteCapture(dir / "a.sqlite", {}, once);
    writeProcess(once, once.processes[0], dir / "b.sqlite");
    Capture twice;
    readSqliteCapture(dir / "b.sqlite", {}, twice);
    ASSERT_EQ(twice.processes.size(), 1u);
    expectSameProcess(original, original.processes[0], twice, twice.processes[0]);
}

TEST(CaptureIoRoundTrip, AlignedProcessKeepsItsWallClockAnchor) {
    // After alignment a process's times are on the capture timeline; the file
    // anchors them at sessionStart - timeOffset so wall-clock times survive.
    TempDir dir;
    Capture c;
    Process p = handBuiltProcess(c);
    p.timeOffsetNs = 500;
    for (auto& t : p.devices[0].kernels.start) t += 500;
    for (auto& t : p.devices[0].kernels.end) t += 500;
    c.processes.push_back(p);
    writeProcess(c, c.processes[0], dir / "aligned.sqlite");
    Capture read;
    readSqliteCapture(dir / "aligned.sqlite", {}, read);
    const auto& q = read.processes[0];
    EXPECT_EQ(q.sessionStartUtcNs, kSession - 500);
    EXPECT_EQ(q.devices[0].kernels.start[0], 600);
    EXPECT_EQ(q.sessionStartUtcNs + q.devices[0].kernels.start[0], kSession + 100);
}

TEST(CaptureIoRoundTrip, FileHasTheNsysLayout) {
    // Scripts written for nsys exports must work on our files.
    TempDir dir;
    Capture c;
    c.processes.push_back(handBuiltProcess(c));
    const auto path = dir / "layout.sqlite";
    writeProcess(c, c.processes[0], path);
    EXPECT_EQ(querySql(path,
                       "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
                       "ON k.shortName = s.id WHERE k.correlationId = 12"),
              "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    EXPECT_EQ(querySql(path,
                       "SELECT e.name FROM CUPTI_ACTIVITY_KIND_MEMCPY m JOIN "
                       "ENUM_CUDA_MEMCPY_OPER e ON m.copyKind = e.id WHERE m.correlationId = 15"),
              "CUDA_MEMCPY_KIND_PTOP");
    EXPECT_EQ(querySql(path, "SELECT name FROM ENUM_CUDA_MEM_KIND WHERE id = 2"), "CUDA_MEMOPR_MEMORY_KIND_PINNED");
    EXPECT_EQ(querySql(path, "SELECT name FROM ENUM_CUPTI_SYNC_TYPE WHERE id = 4"),
              "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE");
    EXPECT_EQ(querySql(path, "SELECT count(*) FROM ENUM_NSYS_EVENT_TYPE WHERE id IN (34, 59, 60, 75)"), "4");
    // NCCL-domain ranges found the nsys way: the domain's DomainCreate row.
    EXPECT_EQ(querySql(path,
                       "SELECT s.value FROM NVTX_EVENTS r JOIN NVTX_EVENTS d ON "
                       "d.eventType = 75 AND d.domainId = r.domainId JOIN StringIds s ON "
                       "s.id = r.textId WHERE d.text = 'NCCL' AND r.eventType = 60"),
              "ncclAllReduce");
    EXPECT_EQ(querySql(path, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 34 AND end IS NULL"), "1");
    EXPECT_EQ(querySql(path, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME"), std::to_string(kSession));
    EXPECT_EQ(
        querySql(path, "SELECT pid FROM PROCESSES WHERE globalPid = " + std::to_string(schema::packGlobalPid(31337))),
        "31337");
    EXPECT_EQ(querySql(path,
                       "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE globalPid >> 24 "
                       "= 31337"),
              "4");
    EXPECT_EQ(querySql(path, "SELECT value FROM OVERLAPSCOPE_META WHERE name = 'rank'"), "3");
    EXPECT_EQ(querySql(path, "SELECT value FROM OVERLAPSCOPE_META WHERE name = 'world_size'"), "8");
    EXPECT_EQ(querySql(path, "SELECT count(*) FROM OVERLAPSCOPE_NCCL_COLL WHERE gpuStart IS NULL"), "1");
    // Kernels are a view over narrow rows and shared launches (format 2),
    // with exactly the columns docs/design.md lists, in its order.
    EXPECT_EQ(querySql(path,
                       "SELECT group_concat(name, ',') FROM "
                       "pragma_table_info('CUPTI_ACTIVITY_KIND_KERNEL')"),
              "start,end,deviceId,contextId,streamId,correlationId,globalPid,demangledName,"
              "shortName,gridX,gridY,gridZ,blockX,blockY,blockZ,registersPerThread,"
              "staticSharedMemory,dynamicSharedMemory,graphId,graphNodeId");
    EXPECT_EQ(querySql(path,
                       "SELECT name FROM sqlite_master WHERE type = 'index' AND "
                       "tbl_name = 'OVERLAPSCOPE_KERNEL'"),
              "kernel_device_start");
    // ... and a script's (deviceId, start) query through the view uses it.
    const auto plan = queryPlan(path, "SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = 0 AND start > 5");
    EXPECT_NE(plan.find("USING INDEX kernel_device_start"), std::string::npos) << plan;
    // A closed capture is one self-contained file.
    EXPECT_EQ(querySql(path, "PRAGMA journal_mode"), "delete");
    EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

TEST(CaptureIoWriter, StreamingRowsReadBackWithTheirNullsAndKinds) {
    TempDir dir;
    const auto path = dir / "stream.sqlite";
    const uint64_t gpid = schema::packGlobalPid(77);
    {
        auto w = CaptureWriter::create(path, 1000);
        w->setMeta("rank", "0");
        w->addProcess({gpid, 77, "worker"});
        KernelRow k;
        k.globalPid = gpid;
        k.demangledName = "kernelA";
        k.shortName = "A";
        // More rows than one multi-row INSERT holds, plus a partial batch.
        for (int i = 0; i < 2500; ++i) {
            k.start = i * 10;
            k.end = i * 10 + 5;
            k.deviceId = static_cast<uint32_t>(i % 2);
            k.correlationId = static_cast<uint32_t>(i);
            w->addKernel(k);
            if (i == 1500) w->commit();
        }
        const uint32_t b = w->internString("kernelB");
        EXPECT_EQ(w->internString("kernelB"), b);
        k.demangledNameId = b;
        k.shortNameId = b;
        k.start = 99'999;
        k.end = 100'000;
        k.deviceId = 0;
        w->addKernel(k);
        SyncRow s;
        s.globalPid = gpid;
        s.start = 5;
        s.end = 6;
        w->addSync(s);  // stream and event "not applicable"
        RangeRow mark;
        mark.kind = RangeKind::Mark;
        mark.start = 42;
        mark.end = 99;  // ignored for marks
        mark.text = "here";
        mark.globalTid = gpid | 78;
        w->addRange(mark);
        w->close(CaptureEnd::Signal);
        w->close(CaptureEnd::Stopped);  // idempotent: the first reason stays
        EXPECT_EQ(w->rowsWritten(), 2503u);
    }
    Capture c;
    readSqliteCapture(path, {}, c);
    ASSERT_EQ(c.processes.size(), 1u);
    const auto& p = c.processes[0];
    EXPECT_EQ(p.name, "worker");
    EXPECT_EQ(p.rank, 0);
    EXPECT_EQ(p.meta.at("end_reason"), "signal");
    EXPECT_EQ(p.sessionStartUtcNs, 1000);
    ASSERT_EQ(p.devices.size(), 2u);
    const auto& k0 = p.devices[0].kernels;
    const auto& k1 = p.devices[1].kernels;
    ASSERT_EQ(k0.size(), 1251u);
    ASSERT_EQ(k1.size(), 1250u);
    for (size_t i = 0; i < 1250; ++i) {
        ASSERT_EQ(k0.start[i], static_cast<TimeNs>(i * 20));
        ASSERT_EQ(k1.start[i], static_cast<TimeNs>(i * 20 + 10));
        ASSERT_EQ(k1.correlation[i], i * 2 + 1);
    }
    EXPECT_EQ(c.strings.at(k0.name[0]), "kernelA");
    EXPECT_EQ(c.strings.at(k0.shortName[0]), "A");
    EXPECT_EQ(c.strings.at(k0.name.back()), "kernelB");
    EXPECT_EQ(p.devices[0].syncs.stream, std::vector<uint32_t>{kNoId});
    EXPECT_EQ(p.devices[0].syncs.eventId, std::vector<uint32_t>{kNoId});
    ASSERT_EQ(p.ranges.size(), 1u);
    EXPECT_EQ(p.ranges.kind[0], RangeKind::Mark);
    EXPECT_EQ(p.ranges.end[0], 42);
    EXPECT_EQ(c.strings.at(p.ranges.name[0]), "here");
}

TEST(CaptureIoWriter, LiveFileShowsCommittedRowsToAReader) {
    // A viewer opening a capture that is still being written sees every
    // committed batch, and its open connection does not stop close().
    TempDir dir;
    const auto path = dir / "live.sqlite";
    auto w = CaptureWriter::create(path, 0);
    KernelRow k;
    k.demangledName = "live";
    for (int i = 0; i < 10; ++i) {
        k.start = i;
        w->addKernel(k);
    }
    w->commit();
    for (int i = 0; i < 5; ++i) w->addKernel(k);  // not committed yet
    Capture first;
    readSqliteCapture(path, {}, first);
    ASSERT_EQ(first.processes.size(), 1u);
    EXPECT_EQ(first.kernelCount(), 10u);
    w->close();
    Capture second;
    readSqliteCapture(path, {}, second);
    EXPECT_EQ(second.kernelCount(), 15u);
    EXPECT_EQ(second.processes[0].meta.at("end_reason"), "stopped");
}

TEST(CaptureIoWriter, RefusesAnExistingFileUnlessAskedToOverwrite) {
    TempDir dir;
    const auto path = dir / "mine.sqlite";
    { std::ofstream(path) << "precious"; }
    try {
        CaptureWriter::create(path, 0);
        FAIL() << "overwrote an existing file";
    } catch (const CaptureError& e) {
        EXPECT_EQ(e.path(), path);
        EXPECT_NE(std::string(e.what()).find("already exists"), std::string::npos) << e.what();
    }
    std::string content;
    std::getline(std::ifstream(path), content);
    EXPECT_EQ(content, "precious");

    // Asked to: replaced, and a stale -wal from the old file is not replayed.
    { std::ofstream(path + "-wal") << "stale"; }
    CaptureWriter::create(path, 0, true)->close();
    Capture c;
    readSqliteCapture(path, {}, c);
    EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

TEST(CaptureIoWriter, UnwritablePlaceIsOneClearError) {
    try {
        CaptureWriter::create("/nonexistent-dir/x.sqlite", 0);
        FAIL();
    } catch (const CaptureError& e) {
        EXPECT_EQ(e.path(), "/nonexistent-dir/x.sqlite");
        EXPECT_NE(std::string(e.what()).find("cannot create"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace osc
