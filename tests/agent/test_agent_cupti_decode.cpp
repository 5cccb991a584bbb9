// Decoding of CUPTI activity records built by hand from the real structs of
// the CUDA 13 headers: every field must land in the right column when the
// capture file is read back with the analyzer's loader.
#include "agent/cupti/cupti_decoder.h"
#include "agent/cupti/cupti_records.h"
#include "analyzer/capture/row_sink.h"
#include "analyzer/capture/schema.h"
#include "analyzer/load/load_capture.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/cupti_record_fixture.h"

#include <gtest/gtest.h>

#include <cstring>

namespace osc::agent::cupti {
namespace {

const char* kMangled = "_ZN4gemm6kernelIfLi128EEEvPKT_PS1_i";

class CuptiDecodeTest : public ::testing::Test {
protected:
    void SetUp() override {
        writer = CaptureWriter::create(dir / "decoded.sqlite", kOrigin);
        writer->addProcess(ProcessRow{schema::packGlobalPid(kPid), kPid, "job"});
        sink = std::make_unique<WriterRowSink>(*writer);
        ctx.sourceOriginNs = kOrigin;
        ctx.pid = kPid;
        ctx.globalPid = schema::packGlobalPid(kPid);
    }
    void feed(const void* record) { decoder.decode(static_cast<const CUpti_Activity*>(record), ctx, *sink); }
    Capture finish() {
        writer->close(CaptureEnd::Stopped);
        writer.reset();
        return loadCapture(dir / "decoded.sqlite");
    }

    test::TempDir dir;
    std::unique_ptr<CaptureWriter> writer;
    std::unique_ptr<WriterRowSink> sink;
    DecodeContext ctx;
    CuptiDecoder decoder{[](ApiKind kind, uint32_t cbid) {
        return std::string(kind == ApiKind::Runtime ? "cudaLaunchKernel_v" : "cuLaunchKernel_v") + std::to_string(cbid);
    }};
};

TEST_F(CuptiDecodeTest, KernelFieldsLandInTheirColumns) {
    auto k = zeroed<KernelRecord>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    k.start = kOrigin + 1000;
    k.end = kOrigin + 5000;
    k.deviceId = 2;
    k.contextId = 9;
    k.streamId = 13;
    k.correlationId = 77;
    k.gridX = 128, k.gridY = 2, k.gridZ = 3;
    k.blockX = 256, k.blockY = 4, k.blockZ = 1;
    k.registersPerThread = 96;
    k.staticSharedMemory = 4096;
    k.dynamicSharedMemory = 8192;
    k.graphId = 5;
    k.graphNodeId = 0x100000002ull;
    k.name = kMangled;
    feed(&k);
    auto noTime = k;  // CUPTI ran out of device buffers: no timestamps
    noTime.start = noTime.end = 0;
    feed(&noTime);
    EXPECT_EQ(decoder.recordsWithoutTimestamps(), 1u);

    const Capture cap = finish();
    ASSERT_EQ(cap.processes.size(), 1u);
    const Device* d = cap.processes[0].findDevice(2);
    ASSERT_NE(d, nullptr);
    ASSERT_EQ(d->kernels.size(), 1u);
    const KernelTable& t = d->kernels;
    EXPECT_EQ(t.start[0], 1000);
    EXPECT_EQ(t.end[0], 5000);
    EXPECT_EQ(t.stream[0], 13u);
    EXPECT_EQ(t.correlation[0], 77u);
    EXPECT_EQ(cap.strings.at(t.name[0]), "void gemm::kernel<float, 128>(float const*, float*, int)");
    EXPECT_EQ(cap.strings.at(t.shortName[0]), "kernel");
    EXPECT_EQ(t.gridX[0], 128u);
    EXPECT_EQ(t.gridY[0], 2u);
    EXPECT_EQ(t.gridZ[0], 3u);
    EXPECT_EQ(t.blockX[0], 256u);
    EXPECT_EQ(t.blockY[0], 4u);
    EXPECT_EQ(t.blockZ[0], 1u);
    EXPECT_EQ(t.registersPerThread[0], 96u);
    EXPECT_EQ(t.staticSharedMemory[0], 4096u);
    EXPECT_EQ(t.dynamicSharedMemory[0], 8192u);
    EXPECT_EQ(t.graphId[0], 5u);
    EXPECT_EQ(t.graphNodeId[0], 0x100000002ull);
}

TEST_F(CuptiDecodeTest, CopiesMemsetsAndSyncs) {
    auto m = zeroed<MemcpyRecord>(CUPTI_ACTIVITY_KIND_MEMCPY);
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.bytes = 1 << 20;
    m.start = kOrigin + 100;
    m.end = kOrigin + 400;
    m.deviceId = 1;
    m.contextId = 4;
    m.streamId = 7;
    m.correlationId = 11;
    feed(&m);
    auto p = zeroed<MemcpyPtoPRecord>(CUPTI_ACTIVITY_KIND_MEMCPY2);
    p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    p.srcKind = p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    p.bytes = 4096;
    p.start = kOrigin + 500;
    p.end = kOrigin + 900;
    p.deviceId = 1;
    p.contextId = 4;
    p.streamId = 8;
    p.srcDeviceId = 1;
    p.dstDeviceId = 3;
    p.correlationId = 12;
    feed(&p);
    auto s = zeroed<MemsetRecord>(CUPTI_ACTIVITY_KIND_MEMSET);
    s.value = 0xFF;
    s.bytes = 256;
    s.start = kOrigin + 1000;
    s.end = kOrigin + 1100;
    s.deviceId = 1;
    s.contextId = 4;
    s.streamId = 7;
    s.correlationId = 13;
    feed(&s);
    auto y = zeroed<SyncRecord>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
    y.start = kOrigin + 2000;
    y.end = kOrigin + 2500;
    y.correlationId = 14;
    y.contextId = 4;  // device 1, learned from the copies above
    y.streamId = 7;
    y.cudaEventId = 42;
    feed(&y);

    const Capture cap = finish();
    const Device* d = cap.processes.at(0).findDevice(1);
    ASSERT_NE(d, nullptr);
    ASSERT_EQ(d->copies.size(), 2u);
    EXPECT_EQ(d->copies.start[0], 100);
    EXPECT_EQ(d->copies.end[0], 400);
    EXPECT_EQ(d->copies.bytes[0], 1u << 20);
    EXPECT_EQ(d->copies.copyKind[0], CopyKind::HtoD);
    EXPECT_EQ(d->copies.srcKind[0], MemKind::Pinned);
    EXPECT_EQ(d->copies.dstKind[0], MemKind::Device);
    EXPECT_EQ(d->copies.stream[0], 7u);
    EXPECT_EQ(d->copies.correlation[0], 11u);
    EXPECT_EQ(d->copies.copyKind[1], CopyKind::PtoP);
    EXPECT_EQ(d->copies.srcDevice[1], 1u);
    EXPECT_EQ(d->copies.dstDevice[1], 3u);
    EXPECT_EQ(d->copies.bytes[1], 4096u);
    EXPECT_EQ(d->copies.stream[1], 8u);
    ASSERT_EQ(d->memsets.size(), 1u);
    EXPECT_EQ(d->memsets.start[0], 1000);
    EXPECT_EQ(d->memsets.end[0], 1100);
    EXPECT_EQ(d->memsets.value[0], 0xFFu);
    EXPECT_EQ(d->memsets.bytes[0], 256u);
    EXPECT_EQ(d->memsets.correlation[0], 13u);
    ASSERT_EQ(d->syncs.size(), 1u);
    EXPECT_EQ(d->syncs.start[0], 2000);
    EXPECT_EQ(d->syncs.end[0], 2500);
    EXPECT_EQ(d->syncs.type[0], SyncType::StreamWaitEvent);
    EXPECT_EQ(d->syncs.eventId[0], 42u);
    EXPECT_EQ(d->syncs.stream[0], 7u);
    EXPECT_EQ(d->syncs.correlation[0], 14u);
}

TEST_F(CuptiDecodeTest, ApiCallsAndNvtxRanges) {
    auto a = zeroed<ApiRecord>(CUPTI_ACTIVITY_KIND_RUNTIME);
    a.cbid = 211;
    a.start = kOrigin + 10;
    a.end = kOrigin + 60;
    a.processId = kPid;
    a.threadId = 99;
    a.correlationId = 77;
    a.returnValue = 0;
    feed(&a);
    auto dr = a;
    dr.kind = CUPTI_ACTIVITY_KIND_DRIVER;
    dr.cbid = 307;
    dr.returnValue = 700;
    dr.start = kOrigin + 20;
    feed(&dr);

    auto style = zeroed<MarkerDataRecord>(CUPTI_ACTIVITY_KIND_MARKER_DATA);
    style.id = 5;
    style.flags = CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB;
    style.color = 0xFF00FF00u;
    style.category = 3;
    auto start = zeroed<MarkerRecord>(CUPTI_ACTIVITY_KIND_MARKER);
    start.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
    start.timestamp = kOrigin + 100;
    start.id = 5;
    start.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    start.objectId.pt.processId = kPid;
    start.objectId.pt.threadId = 99;
    start.name = "ProfilerStep#3";
    start.domain = "torch";
    feed(&start);
    feed(&style);
    auto end = zeroed<MarkerRecord>(CUPTI_ACTIVITY_KIND_MARKER);
    end.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
    end.timestamp = kOrigin + 900;
    end.id = 5;
    end.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    end.objectId.pt.processId = kPid;
    end.objectId.pt.threadId = 99;
    feed(&end);
    auto orphanEnd = end;  // its START came before the capture
    orphanEnd.id = 6;
    feed(&orphanEnd);
    auto mark = zeroed<MarkerRecord>(CUPTI_ACTIVITY_KIND_MARKER);
    mark.flags = CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS;
    mark.timestamp = kOrigin + 950;
    mark.id = 7;
    mark.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    mark.objectId.pt.processId = kPid;
    mark.objectId.pt.threadId = 98;
    mark.name = "checkpoint";
    feed(&mark);

    const Capture cap = finish();
    const Process& p = cap.processes.at(0);
    ASSERT_EQ(p.apiCalls.size(), 2u);
    EXPECT_EQ(p.apiCalls.start[0], 10);
    EXPECT_EQ(p.apiCalls.end[0], 60);
    EXPECT_EQ(p.apiCalls.kind[0], ApiKind::Runtime);
    EXPECT_EQ(cap.strings.at(p.apiCalls.name[0]), "cudaLaunchKernel_v211");
    EXPECT_EQ(p.apiCalls.correlation[0], 77u);
    EXPECT_EQ(p.apiCalls.globalTid[0], schema::packGlobalTid(kPid, 99));
    EXPECT_EQ(p.apiCalls.kind[1], ApiKind::Driver);
    EXPECT_EQ(cap.strings.at(p.apiCalls.name[1]), "cuLaunchKernel_v307");
    EXPECT_EQ(p.apiCalls.returnValue[1], 700);

    ASSERT_EQ(p.ranges.size(), 2u);
    EXPECT_EQ(cap.strings.at(p.ranges.name[0]), "ProfilerStep#3");
    EXPECT_EQ(p.ranges.start[0], 100);
    EXPECT_EQ(p.ranges.end[0], 900);
    EXPECT_EQ(p.ranges.kind[0], RangeKind::PushPop);
    EXPECT_EQ(cap.strings.at(p.ranges.domain[0]), "torch");
    EXPECT_EQ(p.ranges.color[0], 0xFF00FF00u);
    EXPECT_EQ(p.ranges.category[0], 3u);
    EXPECT_EQ(p.ranges.globalTid[0], schema::packGlobalTid(kPid, 99));
    EXPECT_EQ(cap.strings.at(p.ranges.name[1]), "checkpoint");
    EXPECT_EQ(p.ranges.kind[1], RangeKind::Mark);
    EXPECT_EQ(p.ranges.start[1], 950);
}

}  // namespace
}  // namespace osc::agent::cupti
