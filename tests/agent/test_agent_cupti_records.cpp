// The CUPTI records that describe objects rather than time activity
// (DEVICE, CUDA_EVENT, NAME), built by hand from the real structs of the
// CUDA headers, decoded into a real capture file and read back with SQL:
// every field must land in its column. Also the driver query's pure parts.
#include "agent/cupti/cupti_decoder.h"
#include "agent/cupti/cupti_records.h"
#include "agent/cupti/driver_info.h"
#include "analyzer/capture/row_sink.h"
#include "analyzer/capture/schema.h"
#include "analyzer/load/load_capture.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/cupti_record_fixture.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <dlfcn.h>

#include <cstring>
#include <string>
#include <vector>

namespace osc::agent::cupti {
namespace {

const uint64_t kGlobalPid = schema::packGlobalPid(kPid);

CUuuid uuidOf(std::initializer_list<int> bytes) {
    CUuuid u{};
    int i = 0;
    for (int b : bytes) u.bytes[i++] = static_cast<char>(b);
    return u;
}

using Rows = std::vector<std::vector<std::string>>;

// Every value as text, NULL as "NULL".
Rows query(const std::string& path, const std::string& sql) {
    Rows rows;
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        ADD_FAILURE() << "cannot open " << path;
        sqlite3_close(db);
        return rows;
    }
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
        ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
    } else {
        while (sqlite3_step(st) == SQLITE_ROW) {
            std::vector<std::string> row;
            for (int c = 0; c < sqlite3_column_count(st); ++c) {
                const auto* text = sqlite3_column_text(st, c);
                row.emplace_back(sqlite3_column_type(st, c) == SQLITE_NULL ? "NULL"
                                                                           : reinterpret_cast<const char*>(text));
            }
            rows.push_back(std::move(row));
        }
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rows;
}

class CuptiRecordsTest : public ::testing::Test {
protected:
    void SetUp() override {
        path = dir / "records.sqlite";
        writer = CaptureWriter::create(path, kOrigin);
        writer->addProcess(ProcessRow{kGlobalPid, kPid, "job"});
        sink = std::make_unique<WriterRowSink>(*writer);
        ctx.sourceOriginNs = kOrigin;
        ctx.pid = kPid;
        ctx.globalPid = kGlobalPid;
    }
    void feed(const void* record) { decoder.decode(static_cast<const CUpti_Activity*>(record), ctx, *sink); }
    void close() {
        writer->close(CaptureEnd::Stopped);
        writer.reset();
    }
    Rows sql(const std::string& text) { return query(path, text); }
    // Activity that makes a GPU one the process used.
    void kernelOn(uint32_t deviceId) {
        auto k = zeroed<KernelRecord>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        k.start = kOrigin + 100;
        k.end = kOrigin + 200;
        k.deviceId = deviceId;
        k.contextId = 10 + deviceId;
        k.name = "_Z6kernelv";
        feed(&k);
    }

    test::TempDir dir;
    std::string path;
    std::unique_ptr<CaptureWriter> writer;
    std::unique_ptr<WriterRowSink> sink;
    DecodeContext ctx;
    CuptiDecoder decoder{[](ApiKind, uint32_t cbid) { return "api" + std::to_string(cbid); }};
};

DeviceRecord h100Record(uint32_t id) {
    auto d = zeroed<DeviceRecord>(CUPTI_ACTIVITY_KIND_DEVICE);
    d.id = id;
    d.name = "NVIDIA H100 80GB HBM3";
    d.uuid = uuidOf({0x5e, 0x1f, 0x00, 0xa1, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89});
    d.globalMemorySize = 85'520'809'984ull;
    d.numMultiprocessors = 132;
    d.computeCapabilityMajor = 9;
    d.computeCapabilityMinor = 0;
    d.isCudaVisible = 1;
    return d;
}

TEST_F(CuptiRecordsTest, DeviceRecordsAndTheDriverFillTargetInfoGpu) {
    // Device 1: its record, then the driver's view, which adds the PCI location
    // but must not override what the record says.
    kernelOn(1);
    const auto one = h100Record(1);
    feed(&one);
    GpuInfo driverOne{1, "driver's name", "0000:1b:00.0", "GPU-00000000-0000-0000-0000-000000000001", 1, 2, 3, 4};
    decoder.addDriverGpu(driverOne, *sink);
    // Device 3: the driver first, then a record that knows no uuid.
    decoder.addDriverGpu(GpuInfo{3, "NVIDIA A100-SXM4-40GB", "0001:c2:00.0", "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
                                 42'298'834'944ull, 108, 8, 0},
                         *sink);
    auto three = h100Record(3);
    three.name = "NVIDIA A100-SXM4-40GB";
    three.uuid = CUuuid{};
    three.globalMemorySize = 42'949'672'960ull;
    three.numMultiprocessors = 108;
    three.computeCapabilityMajor = 8;
    feed(&three);
    kernelOn(3);  // described before it was used
    // Device 2: only the driver knows it (capture attached after cuInit).
    decoder.addDriverGpu(GpuInfo{2, "NVIDIA L4", "0000:3d:00.0", "GPU-12345678-9abc-def0-1234-56789abcdef0",
                                 24'152'899'584ull, 58, 8, 9},
                         *sink);
    auto copy = zeroed<MemcpyRecord>(CUPTI_ACTIVITY_KIND_MEMCPY);  // copies count as use too
    copy.start = kOrigin + 300;
    copy.end = kOrigin + 400;
    copy.deviceId = 2;
    feed(&copy);
    // Hidden by CUDA_VISIBLE_DEVICES: its id is no ordinal of this process.
    auto hidden = h100Record(0);
    hidden.isCudaVisible = 0;
    feed(&hidden);
    kernelOn(0);
    // Seen by the process but never used (another rank's GPU): no row, or
    // the reader would show it as an idle device of this rank.
    const auto unused = h100Record(5);
    feed(&unused);
    decoder.addDriverGpu(GpuInfo{6, "NVIDIA H100 80GB HBM3", "0000:9a:00.0", "", 1, 1, 9, 0}, *sink);
    close();

    const Rows gpus =
        sql("SELECT id, name, busLocation, uuid, totalMemory, smCount, computeMajor, computeMinor "
            "FROM TARGET_INFO_GPU ORDER BY id");
    ASSERT_EQ(gpus.size(), 3u);
    EXPECT_EQ(gpus[0],
              (std::vector<std::string>{"1", "NVIDIA H100 80GB HBM3", "0000:1b:00.0",
                                        "GPU-5e1f00a1-2345-6789-abcd-ef0123456789", "85520809984", "132", "9", "0"}));
    EXPECT_EQ(gpus[1],
              (std::vector<std::string>{"2", "NVIDIA L4", "0000:3d:00.0", "GPU-12345678-9abc-def0-1234-56789abcdef0",
                                        "24152899584", "58", "8", "9"}));
    EXPECT_EQ(gpus[2],
              (std::vector<std::string>{"3", "NVIDIA A100-SXM4-40GB", "0001:c2:00.0",
                                        "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "42949672960", "108", "8", "0"}));
}

TEST_F(CuptiRecordsTest, CudaEventFieldsLandInTheirColumns) {
    auto e = zeroed<CudaEventRecord>(CUPTI_ACTIVITY_KIND_CUDA_EVENT);
    e.correlationId = 501;
    e.contextId = 4;
    e.streamId = 13;
    e.eventId = 77;
#if CUPTI_API_VERSION >= 130000
    e.deviceId = 2;
    e.deviceTimestamp = kOrigin + 12'345;
    e.cudaEventSyncId = 0x100000009ull;
#endif
    feed(&e);
    auto uncollected = e;  // device timestamps off; CUPTI's "no stream"
    uncollected.correlationId = 502;
    uncollected.streamId = 0xFFFFFFFFu;
#if CUPTI_API_VERSION >= 130000
    uncollected.deviceTimestamp = 0;
#endif
    feed(&uncollected);
    close();

    const Rows events =
        sql("SELECT deviceTimestamp, deviceId, contextId, streamId, correlationId, globalPid, "
            "eventId, cudaEventSyncId FROM OVERLAPSCOPE_CUDA_EVENT ORDER BY correlationId");
    ASSERT_EQ(events.size(), 2u);
    const std::string pid = std::to_string(kGlobalPid);
#if CUPTI_API_VERSION >= 130000
    EXPECT_EQ(events[0], (std::vector<std::string>{"12345", "2", "4", "13", "501", pid, "77", "4294967305"}));
    EXPECT_EQ(events[1], (std::vector<std::string>{"NULL", "2", "4", "NULL", "502", pid, "77", "4294967305"}));
#else
    // The CUDA 12 struct has no device, timestamp or sync id; the device of an
    // unknown context is 0.
    EXPECT_EQ(events[0], (std::vector<std::string>{"NULL", "0", "4", "13", "501", pid, "77", "NULL"}));
#endif
}

TEST_F(CuptiRecordsTest, CudaEventDeviceTellsTheDeviceOfLaterSyncs) {
#if CUPTI_API_VERSION < 130000
    GTEST_SKIP() << "the CUDA 12 event record carries no device";
#else
    auto e = zeroed<CudaEventRecord>(CUPTI_ACTIVITY_KIND_CUDA_EVENT);
    e.contextId = 6;
    e.deviceId = 3;
    e.streamId = 1;
    feed(&e);
    auto y = zeroed<SyncRecord>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;
    y.start = kOrigin + 10;
    y.end = kOrigin + 20;
    y.contextId = 6;
    y.streamId = 0xFFFFFFFFu;
    y.cudaEventId = 9;
    feed(&y);
    close();
    EXPECT_EQ(sql("SELECT deviceId FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"), (Rows{{"3"}}));
#endif
}

TEST_F(CuptiRecordsTest, NamesGoToStreamThreadAndObjectTables) {
    auto stream = zeroed<NameRecord>(CUPTI_ACTIVITY_KIND_NAME);
    stream.objectKind = CUPTI_ACTIVITY_OBJECT_STREAM;
    stream.objectId.dcs.deviceId = 1;
    stream.objectId.dcs.contextId = 4;
    stream.objectId.dcs.streamId = 13;
    stream.name = "nccl comm stream";
    feed(&stream);

    auto thread = zeroed<NameRecord>(CUPTI_ACTIVITY_KIND_NAME);
    thread.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    thread.objectId.pt.processId = kPid;
    thread.objectId.pt.threadId = 99;
    thread.name = "first name";
    feed(&thread);
    thread.name = "dataloader";  // named again: only the newest name stays
    feed(&thread);
    auto otherThread = thread;  // no process id given: this process
    otherThread.objectId.pt.processId = 0;
    otherThread.objectId.pt.threadId = 100;
    otherThread.name = "pt_autograd_0";
    feed(&otherThread);

    auto device = zeroed<NameRecord>(CUPTI_ACTIVITY_KIND_NAME);
    device.objectKind = CUPTI_ACTIVITY_OBJECT_DEVICE;
    device.objectId.dcs.deviceId = 2;
    device.name = "trainer GPU";
    feed(&device);
    auto context = zeroed<NameRecord>(CUPTI_ACTIVITY_KIND_NAME);
    context.objectKind = CUPTI_ACTIVITY_OBJECT_CONTEXT;
    context.objectId.dcs.deviceId = 2;
    context.objectId.dcs.contextId = 7;
    context.name = "primary";
    feed(&context);
    auto process = zeroed<NameRecord>(CUPTI_ACTIVITY_KIND_NAME);
    process.objectKind = CUPTI_ACTIVITY_OBJECT_PROCESS;
    process.objectId.pt.processId = 555;
    process.name = "launcher";
    feed(&process);
    auto unnamed = device;  // nothing to store
    unnamed.name = nullptr;
    feed(&unnamed);
    unnamed.name = "";
    feed(&unnamed);
    close();

    EXPECT_EQ(sql("SELECT globalPid, deviceId, streamId, name FROM OVERLAPSCOPE_STREAM_NAME"),
              (Rows{{std::to_string(kGlobalPid), "1", "13", "nccl comm stream"}}));
    EXPECT_EQ(sql("SELECT t.globalTid, s.value, t.priority FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId "
                  "ORDER BY t.globalTid"),
              (Rows{{std::to_string(schema::packGlobalTid(kPid, 99)), "dataloader", "0"},
                    {std::to_string(schema::packGlobalTid(kPid, 100)), "pt_autograd_0", "0"}}));
    EXPECT_EQ(sql("SELECT globalPid, objectKind, deviceId, contextId, name FROM OVERLAPSCOPE_OBJECT_NAME "
                  "ORDER BY rowid"),
              (Rows{{std::to_string(kGlobalPid), "device", "2", "NULL", "trainer GPU"},
                    {std::to_string(kGlobalPid), "context", "2", "7", "primary"},
                    {std::to_string(schema::packGlobalPid(555)), "process", "NULL", "NULL", "launcher"}}));

    // The analyzer's reader shows the stream's name and tolerates the rest.
    const Capture cap = loadCapture(path);
    ASSERT_EQ(cap.processes.size(), 1u);
    const Device* d = cap.processes[0].findDevice(1);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->streamNames.at(13), "nccl comm stream");
}

TEST_F(CuptiRecordsTest, ApiCallsOfTheAgentsOwnThreadAreDropped) {
    auto a = zeroed<ApiRecord>(CUPTI_ACTIVITY_KIND_DRIVER);
    a.cbid = 17;
    a.start = kOrigin + 10;
    a.end = kOrigin + 20;
    a.processId = kPid;
    a.threadId = 555;  // the writer thread querying the driver
    a.correlationId = 1;
    decoder.ignoreApiCallsOf(555);
    feed(&a);
    auto app = a;
    app.threadId = 99;
    app.correlationId = 2;
    feed(&app);
    decoder.reset();  // a new capture: the id may now be an application thread's
    auto later = a;
    later.correlationId = 3;
    feed(&later);
    close();
    EXPECT_EQ(sql("SELECT correlationId, globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY correlationId"),
              (Rows{{"2", std::to_string(schema::packGlobalTid(kPid, 99))},
                    {"3", std::to_string(schema::packGlobalTid(kPid, 555))}}));
}

TEST_F(CuptiRecordsTest, ReaderLoadsAFileWithEveryNewTableFilled) {
    auto k = zeroed<KernelRecord>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    k.start = kOrigin + 100;
    k.end = kOrigin + 900;
    k.deviceId = 1;
    k.contextId = 4;
    k.streamId = 13;
    k.name = "_Z6kernelv";
    feed(&k);
    const auto gpu = h100Record(1);
    feed(&gpu);
    const auto otherRanksGpu = h100Record(2);
    feed(&otherRanksGpu);
    auto e = zeroed<CudaEventRecord>(CUPTI_ACTIVITY_KIND_CUDA_EVENT);
    e.contextId = 4;
    e.streamId = 13;
    e.eventId = 1;
    feed(&e);
    auto n = zeroed<NameRecord>(CUPTI_ACTIVITY_KIND_NAME);
    n.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    n.objectId.pt.processId = kPid;
    n.objectId.pt.threadId = 99;
    n.name = "main";
    feed(&n);
    n.objectKind = CUPTI_ACTIVITY_OBJECT_CONTEXT;
    n.name = "ctx";
    feed(&n);
    close();

    const Capture cap = loadCapture(path);
    ASSERT_EQ(cap.processes.size(), 1u);
    const Device* d = cap.processes[0].findDevice(1);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->kernels.size(), 1u);
    EXPECT_EQ(d->gpu.name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(d->gpu.uuid, "GPU-5e1f00a1-2345-6789-abcd-ef0123456789");
    EXPECT_EQ(d->gpu.smCount, 132);
    EXPECT_EQ(cap.processes[0].findDevice(2), nullptr);
}

TEST(DriverInfo, UuidTextIsNvidiaSmiStyle) {
    EXPECT_EQ(gpuUuidText(uuidOf(
                  {0x5e, 0x1f, 0x00, 0xa1, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89})),
              "GPU-5e1f00a1-2345-6789-abcd-ef0123456789");
    EXPECT_EQ(gpuUuidText(uuidOf({0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01})),
              "GPU-ff000000-0000-0000-0000-000000000001");
    EXPECT_EQ(gpuUuidText(CUuuid{}), "") << "all zero: not reported";
}

TEST(DriverInfo, BusLocationIsNsysStyle) {
    EXPECT_EQ(pciBusLocation(0, 0x1b, 0), "0000:1b:00.0");
    EXPECT_EQ(pciBusLocation(1, 0xc2, 0x1f), "0001:c2:1f.0");
    EXPECT_EQ(pciBusLocation(0x10000, 3, 2), "10000:03:02.0");  // VMD domains go past 16 bits
    EXPECT_EQ(pciBusLocation(-1, 0x1b, 0), "");
    EXPECT_EQ(pciBusLocation(0, -1, 0), "");
    EXPECT_EQ(pciBusLocation(0, 0x1b, -1), "");
}

TEST(DriverInfo, DriverAnswersBecomeAGpuRow) {
    DriverDevice d;
    d.ordinal = 3;
    d.name = "NVIDIA H200";
    d.totalMemory = 150'754'820'096ull;
    d.uuid = uuidOf({0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88});
    d.smCount = 132;
    d.computeMajor = 9;
    d.computeMinor = 0;
    d.pciDomain = 0;
    d.pciBus = 0x9a;
    d.pciDevice = 0;
    const GpuInfo g = gpuInfoOf(d);
    EXPECT_EQ(g.id, 3u);
    EXPECT_EQ(g.name, "NVIDIA H200");
    EXPECT_EQ(g.busLocation, "0000:9a:00.0");
    EXPECT_EQ(g.uuid, "GPU-12345678-9abc-def0-1122-334455667788");
    EXPECT_EQ(g.totalMemory, 150'754'820'096ull);
    EXPECT_EQ(g.smCount, 132);
    EXPECT_EQ(g.computeMajor, 9);
    EXPECT_EQ(g.computeMinor, 0);

    const GpuInfo unknown = gpuInfoOf(DriverDevice{});  // every query failed
    EXPECT_EQ(unknown.busLocation, "");
    EXPECT_EQ(unknown.uuid, "");
}

TEST(DriverInfo, MergeKeepsPreferredFieldsAndFillsTheRest) {
    const GpuInfo record{1, "from record", "", "GPU-record", 100, 0, 0, 0};
    const GpuInfo driver{1, "from driver", "0000:1b:00.0", "GPU-driver", 200, 132, 9, 0};
    const GpuInfo m = mergeGpuInfo(record, driver);
    EXPECT_EQ(m.id, 1u);
    EXPECT_EQ(m.name, "from record");
    EXPECT_EQ(m.busLocation, "0000:1b:00.0");
    EXPECT_EQ(m.uuid, "GPU-record");
    EXPECT_EQ(m.totalMemory, 100u);
    EXPECT_EQ(m.smCount, 132);
    EXPECT_EQ(m.computeMajor, 9);
    EXPECT_EQ(m.computeMinor, 0);
    // A known capability is kept whole, minor included.
    const GpuInfo m2 = mergeGpuInfo(GpuInfo{1, "", "", "", 0, 0, 8, 0}, GpuInfo{1, "", "", "", 0, 0, 9, 5});
    EXPECT_EQ(m2.computeMajor, 8);
    EXPECT_EQ(m2.computeMinor, 0);
}

TEST(DriverInfo, CudaVersionText) {
    EXPECT_EQ(cudaVersionText(13000), "13.0");
    EXPECT_EQ(cudaVersionText(12080), "12.8");
    EXPECT_EQ(cudaVersionText(12010), "12.1");
    EXPECT_EQ(cudaVersionText(0), "");
}

// Whatever machine runs it: with no driver in the process nothing is
// reported; with one (a GPU machine) a plausible version is.
TEST(DriverInfo, ReportsExactlyWhatTheProcessHas) {
    if (void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)) {
        ::dlclose(driver);
        const auto version = queryDriverVersion();
        ASSERT_TRUE(version.has_value());
        EXPECT_GE(*version, 12000);
        return;
    }
    EXPECT_FALSE(queryDriverVersion().has_value());
    const auto devices = queryDriverDevices();
    ASSERT_TRUE(devices.has_value()) << "no driver is final, not 'ask again later'";
    EXPECT_TRUE(devices->empty());
}

}  // namespace
}  // namespace osc::agent::cupti
