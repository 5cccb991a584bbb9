// The Kineto importer: exact times, field mapping, gzip, progress, bad input.
#include "analyzer/capture/capture_error.h"
#include "analyzer/import/decimal_time.h"
#include "analyzer/import/kineto_names.h"
#include "analyzer/load/load_capture.h"
#include "tests/analyzer/test_kineto_fixture.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace osc;
using osc::testing::KEvent;

namespace {

class KinetoReaderTest : public ::testing::Test {
protected:
    std::string path(const std::string& name) const { return dir_ / name; }
    const testsupport::TempDir dir_;
};

// 1.7e15 µs: an epoch-µs timestamp of 2023, the largest kind real traces hold.
constexpr int64_t kBase = 1'700'000'000'123'456'789LL;

}  // namespace

TEST(DecimalTime, HandWorkedValues) {
    EXPECT_EQ(microsToNs(std::string_view("1718000000123.456")), 1718000000123456LL);
    EXPECT_EQ(microsToNs(std::string_view("12")), 12000);
    EXPECT_EQ(microsToNs(std::string_view("-3.5")), -3500);
    EXPECT_EQ(microsToNs(std::string_view("0.0005")), 1);  // half rounds away from zero
    EXPECT_EQ(microsToNs(std::string_view("0.0004")), 0);
    EXPECT_EQ(microsToNs(std::string_view("0.0")), 0);
    EXPECT_EQ(microsToNs(std::string_view("1.7e15")), 1'700'000'000'000'000'000LL);
    EXPECT_EQ(microsToNs(std::string_view("1.5E-3")), 2);
    EXPECT_EQ(microsToNs(std::string_view("2.5e+2")), 250000);
    EXPECT_EQ(microsToNs(std::string_view("000123.4560000000000000000000000000000000001")), 123456);
    EXPECT_FALSE(microsToNs(std::string_view("1e300")));
    EXPECT_FALSE(microsToNs(std::string_view("-1e300")));
    EXPECT_FALSE(microsToNs(std::string_view("99999999999999999999")));
    EXPECT_FALSE(microsToNs(std::string_view("abc")));
    EXPECT_FALSE(microsToNs(std::string_view("1.2.3")));
    EXPECT_FALSE(microsToNs(std::string_view("12e")));
    EXPECT_FALSE(microsToNs(std::string_view("")));
    EXPECT_FALSE(microsToNs(int64_t{9'000'000'000'000'000LL}));
    EXPECT_EQ(microsToNs(int64_t{-7}), -7000);
}

TEST(DecimalTime, RandomNanosecondsSurviveTheirDecimalText) {
    std::mt19937_64 rng(42);
    for (int i = 0; i < 20000; ++i) {
        const int64_t ns = static_cast<int64_t>(rng() % 2'300'000'000'000'000'000ULL) * (rng() % 5 == 0 ? -1 : 1);
        ASSERT_EQ(microsToNs(osc::testing::nsAsMicros(ns)), ns) << osc::testing::nsAsMicros(ns);
        // The same value in scientific notation: d.ddd...e+K
        std::string digits = std::to_string(ns < 0 ? -ns : ns);
        const std::string sci = std::string(ns < 0 ? "-" : "") + digits.substr(0, 1) + "." + digits.substr(1) + "e" +
                                std::to_string(int(digits.size()) - 1 - 3);
        ASSERT_EQ(microsToNs(sci), ns) << sci;
    }
}

TEST(KinetoNames, CopyAndSyncNames) {
    auto k = kineto::parseCopyName("Memcpy DtoH (Device -> Pinned)");
    EXPECT_EQ(k.copy, CopyKind::DtoH);
    EXPECT_EQ(k.src, MemKind::Device);
    EXPECT_EQ(k.dst, MemKind::Pinned);
    k = kineto::parseCopyName("Memcpy PtoP (Device -> Device)");
    EXPECT_EQ(k.copy, CopyKind::PtoP);
    k = kineto::parseCopyName("Memcpy HtoD (Pageable -> Device)");
    EXPECT_EQ(k.copy, CopyKind::HtoD);
    EXPECT_EQ(k.src, MemKind::Pageable);
    k = kineto::parseCopyName("Memcpy DtoD");
    EXPECT_EQ(k.copy, CopyKind::DtoD);
    EXPECT_EQ(k.src, MemKind::Unknown);
    EXPECT_EQ(kineto::parseCopyName("cudaMemcpyAsync").copy, CopyKind::Unknown);
    EXPECT_EQ(kineto::parseSyncName("Stream Sync"), SyncType::StreamSynchronize);
    EXPECT_EQ(kineto::parseSyncName("Stream Wait Event"), SyncType::StreamWaitEvent);
    EXPECT_EQ(kineto::parseSyncName("Context Sync"), SyncType::ContextSynchronize);
    EXPECT_EQ(kineto::parseSyncName("Event Sync"), SyncType::EventSynchronize);
}

TEST_F(KinetoReaderTest, MapsEveryCategory) {
    std::vector<KEvent> ev;
    auto add = [&](std::string cat, std::string name, int64_t off, int64_t dur) -> KEvent& {
        KEvent e;
        e.cat = std::move(cat);
        e.name = std::move(name);
        e.startNs = kBase + off;
        e.durNs = dur;
        ev.push_back(e);
        return ev.back();
    };
    auto& rt = add("cuda_runtime", "cudaLaunchKernel", 0, 4'321);
    rt.pid = 4242;
    rt.tid = 4243;
    rt.correlation = 77;
    auto& drv = add("cuda_driver", "cuLaunchKernel", 100, 1'000);
    drv.pid = 4242;
    drv.tid = 4243;
    drv.correlation = 78;
    auto& k = add("kernel", "void gemm_kernel<float>(int)", 10'001, 20'002);
    k.device = 1;
    k.stream = 7;
    k.correlation = 77;
    k.pid = 1;
    k.tid = 7;
    auto& c1 = add("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 40'000, 500);
    c1.device = 1;
    c1.stream = 13;
    c1.correlation = 79;
    c1.bytes = 4096;
    auto& c2 = add("gpu_memcpy", "Memcpy PtoP (Device -> Device)", 41'000, 700);
    c2.device = 1;
    c2.stream = 14;
    c2.bytes = 1 << 20;
    auto& ms = add("gpu_memset", "Memset (Device)", 42'000, 300);
    ms.device = 1;
    ms.stream = 7;
    ms.bytes = 256;
    auto& step = add("user_annotation", "ProfilerStep#3", -5'000, 90'000);
    step.pid = 4242;
    step.tid = 4243;
    auto& gstep = add("gpu_user_annotation", "ProfilerStep#3", 10'000, 30'000);
    gstep.pid = 1;
    gstep.tid = 7;
    auto& sync = add("cuda_sync", "Stream Sync", 50'000, 1'234);
    sync.device = 1;
    sync.stream = 7;
    sync.correlation = 80;
    // CPU operators are kept apart (for the GUI's CPU lanes) and do not move
    // the time origin even when they start first; python functions, flows
    // and metadata are ignored.
    auto& op = add("cpu_op", "aten::mm", -9'000, 10);
    op.pid = 4242;
    op.tid = 4243;
    add("python_function", "forward", -9'500, 10).pid = 4242;
    const std::string extra =
        R"({"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "GPU 1"}},)"
        R"({"ph": "s", "cat": "ac2g", "id": 77, "pid": 4242, "tid": 4243, "ts": 1.5},)"
        R"({"ph": "X", "cat": "Trace", "name": "PyTorch Profiler", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 1, "dur": 2})";
    const std::string header =
        R"("distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8, "pg_config": [{"ranks": [0,1]}]},)"
        R"( "deviceProperties": [{"id": 1, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85000000000, "computeMajor": 9, "computeMinor": 0, "numSms": 132}],)"
        R"( "baseTimeNanoseconds": 1000)";
    osc::testing::writeText(path("t.json"), osc::testing::traceJson(ev, header, extra));

    const Capture cap = loadCapture(path("t.json"));
    ASSERT_EQ(cap.processes.size(), 1u);
    const Process& p = cap.processes[0];
    EXPECT_EQ(p.rank, 3);
    EXPECT_EQ(p.worldSize, 8);
    EXPECT_EQ(p.pid, 4242);
    // Times relative to the earliest event (the step at -5000 ns, the
    // "Trace" span is ignored); session start = base + that event's ts.
    const int64_t origin = kBase - 5'000;
    EXPECT_EQ(p.sessionStartUtcNs, 1000 + origin);
    ASSERT_EQ(p.devices.size(), 1u);
    const Device& d = p.devices[0];
    EXPECT_EQ(d.id, 1u);
    EXPECT_EQ(d.gpu.name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(d.gpu.smCount, 132);
    EXPECT_EQ(d.gpu.computeMajor, 9);
    ASSERT_EQ(d.kernels.size(), 1u);
    EXPECT_EQ(d.kernels.start[0], kBase + 10'001 - origin);
    EXPECT_EQ(d.kernels.end[0], kBase + 30'003 - origin);
    EXPECT_EQ(d.kernels.stream[0], 7u);
    EXPECT_EQ(d.kernels.correlation[0], 77u);
    EXPECT_EQ(cap.strings.at(d.kernels.name[0]), "void gemm_kernel<float>(int)");
    EXPECT_EQ(d.kernels.gridX[0], 4u);
    EXPECT_EQ(d.kernels.gridY[0], 2u);
    EXPECT_EQ(d.kernels.blockX[0], 128u);
    EXPECT_EQ(d.kernels.registersPerThread[0], 32u);
    ASSERT_EQ(d.copies.size(), 2u);
    EXPECT_EQ(d.copies.copyKind[0], CopyKind::DtoH);
    EXPECT_EQ(d.copies.srcKind[0], MemKind::Device);
    EXPECT_EQ(d.copies.dstKind[0], MemKind::Pinned);
    EXPECT_EQ(d.copies.bytes[0], 4096u);
    EXPECT_EQ(d.copies.stream[0], 13u);
    EXPECT_EQ(d.copies.copyKind[1], CopyKind::PtoP);
    EXPECT_EQ(d.copies.bytes[1], 1u << 20);
    ASSERT_EQ(d.memsets.size(), 1u);
    EXPECT_EQ(d.memsets.bytes[0], 256u);
    ASSERT_EQ(d.syncs.size(), 1u);
    EXPECT_EQ(d.syncs.type[0], SyncType::StreamSynchronize);
    EXPECT_EQ(d.syncs.stream[0], 7u);
    EXPECT_EQ(d.syncs.end[0] - d.syncs.start[0], 1'234);
    ASSERT_EQ(p.apiCalls.size(), 2u);
    EXPECT_EQ(p.apiCalls.kind[0], ApiKind::Runtime);
    EXPECT_EQ(p.apiCalls.correlation[0], 77u);
    EXPECT_EQ(p.apiCalls.globalTid[0], (uint64_t{4242} << 24) | 4243u);
    EXPECT_EQ(p.apiCalls.start[0], kBase - origin);
    EXPECT_EQ(p.apiCalls.kind[1], ApiKind::Driver);
    ASSERT_EQ(p.ranges.size(), 2u);
    EXPECT_EQ(cap.strings.at(p.ranges.name[0]), "ProfilerStep#3");
    EXPECT_EQ(p.ranges.start[0], 0);
    EXPECT_EQ(p.ranges.onGpu[0], 0);
    EXPECT_EQ(p.ranges.onGpu[1], 1);
    ASSERT_EQ(p.cpuOps.size(), 1u);
    EXPECT_EQ(cap.strings.at(p.cpuOps.name[0]), "aten::mm");
    EXPECT_EQ(p.cpuOps.start[0], kBase - 9'000 - origin);  // before the origin: negative
    EXPECT_EQ(p.cpuOps.end[0] - p.cpuOps.start[0], 10);
    EXPECT_EQ(p.cpuOps.globalTid[0], (uint64_t{4242} << 24) | 4243u);
}

TEST_F(KinetoReaderTest, LegacyCategoriesAndPidTidLanes) {
    std::vector<KEvent> ev(3);
    ev[0] = {"Kernel", "k", kBase + 10, 20, 2, 9};  // no args.device: pid is the device
    ev[1] = {"Memcpy", "Memcpy HtoD (Pageable -> Device)", kBase, 5, 2, 9};
    ev[2] = {"Runtime", "cudaLaunchKernel", kBase + 1, 3, 100, 101};
    osc::testing::writeText(path("legacy.json"), osc::testing::traceJson(ev));
    const Capture cap = loadCapture(path("legacy.json"));
    const Device& d = cap.processes.at(0).devices.at(0);
    EXPECT_EQ(d.id, 2u);
    EXPECT_EQ(d.kernels.stream.at(0), 9u);
    EXPECT_EQ(d.kernels.start.at(0), 10);
    EXPECT_EQ(d.copies.copyKind.at(0), CopyKind::HtoD);
    EXPECT_EQ(cap.processes[0].apiCalls.size(), 1u);
}

TEST_F(KinetoReaderTest, OutOfOrderEventsAreSortedAndExact) {
    auto ev = osc::testing::randomKernels(7, 300, 3, 4, kBase);
    osc::testing::writeText(path("r.json"), osc::testing::traceJson(ev));
    const Capture cap = loadCapture(path("r.json"));
    int64_t minNs = INT64_MAX;
    for (const auto& e : ev) minNs = std::min(minNs, e.startNs);
    size_t total = 0;
    for (const auto& d : cap.processes.at(0).devices) {
        EXPECT_TRUE(std::is_sorted(d.kernels.start.begin(), d.kernels.start.end()));
        for (size_t i = 0; i < d.kernels.size(); ++i) {
            // Find the generated event with this correlation id and compare exactly.
            const auto& src = ev.at(d.kernels.correlation[i] - 1000);
            EXPECT_EQ(static_cast<int64_t>(d.id), src.device);
            EXPECT_EQ(static_cast<int64_t>(d.kernels.stream[i]), src.stream);
            EXPECT_EQ(d.kernels.start[i], src.startNs - minNs);
            EXPECT_EQ(d.kernels.end[i], src.startNs + src.durNs - minNs);
        }
        total += d.kernels.size();
    }
    EXPECT_EQ(total, ev.size());
}

TEST_F(KinetoReaderTest, GzipGivesTheSameModelAndReportsProgress) {
    auto ev = osc::testing::randomKernels(9, 2000, 2, 3, kBase);
    const std::string text = osc::testing::traceJson(ev);
    osc::testing::writeText(path("a.json"), text);
    osc::testing::writeGz(path("a.json.gz"), text);
    LoadOptions opts;
    std::vector<double> fractions;
    opts.progress = [&](double f, std::string_view) { fractions.push_back(f); };
    const Capture plain = loadCapture(path("a.json"));
    const Capture gz = loadCapture(path("a.json.gz"), opts);
    ASSERT_EQ(plain.processes[0].devices.size(), gz.processes[0].devices.size());
    for (size_t i = 0; i < plain.processes[0].devices.size(); ++i) {
        EXPECT_EQ(plain.processes[0].devices[i].kernels.start, gz.processes[0].devices[i].kernels.start);
        EXPECT_EQ(plain.processes[0].devices[i].kernels.end, gz.processes[0].devices[i].kernels.end);
    }
    ASSERT_FALSE(fractions.empty());
    EXPECT_DOUBLE_EQ(fractions.back(), 1.0);
    EXPECT_TRUE(std::is_sorted(fractions.begin(), fractions.end()));
}

TEST_F(KinetoReaderTest, CancellationStopsTheRead) {
    auto ev = osc::testing::randomKernels(3, 20000, 1, 1, kBase);
    osc::testing::writeText(path("c.json"), osc::testing::traceJson(ev));
    std::atomic<bool> cancel{true};
    LoadOptions opts;
    opts.cancel = &cancel;
    EXPECT_THROW(loadCapture(path("c.json"), opts), LoadCancelled);
}

TEST_F(KinetoReaderTest, TopLevelArrayFormat) {
    KEvent k{"kernel", "k", 5000, 1000, 0, 7, 0, 7, 1};
    osc::testing::writeText(path("arr.json"), "[" + osc::testing::eventJson(k) + "]");
    const Capture cap = loadCapture(path("arr.json"));
    EXPECT_EQ(cap.processes.at(0).devices.at(0).kernels.size(), 1u);
}

// Each malformed input must give exactly one line naming the file and the problem.
struct BadInput {
    const char* label;
    std::string text;
    const char* expect;  // substring of the message
};

class KinetoBadInputTest : public KinetoReaderTest, public ::testing::WithParamInterface<BadInput> {};

TEST_P(KinetoBadInputTest, OneClearLine) {
    const auto& bad = GetParam();
    const std::string file = path(std::string(bad.label) + ".json");
    osc::testing::writeText(file, bad.text);
    try {
        loadCapture(file);
        FAIL() << "no error for " << bad.label;
    } catch (const CaptureError& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.rfind(file + ": ", 0), 0u) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        EXPECT_NE(what.find(bad.expect), std::string::npos) << what;
    }
}

const std::string kGoodKernel =
    R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1.5,"dur":2,"args":{"device":0,"stream":7}})";

INSTANTIATE_TEST_SUITE_P(
    Malformed, KinetoBadInputTest,
    ::testing::Values(
        BadInput{"truncated", "{\"traceEvents\": [\n" + kGoodKernel + ",\n{\"ph\":\"X\",\"ts\":1", "line 3"},
        BadInput{"syntax", "{\"traceEvents\": [\n" + kGoodKernel + " " + kGoodKernel + "]}", "line 2"},
        BadInput{"tsString", "{\"traceEvents\": [\n\n{\"ph\":\"X\",\"cat\":\"kernel\",\"ts\":\"12\",\"dur\":1}]}",
                 "line 3: event field \"ts\" is not a number"},
        BadInput{"tsHuge", "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"kernel\",\"ts\":1e300}]}", "out of range"},
        BadInput{"tsInf", "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"kernel\",\"ts\":1e999}]}", "line 1"},
        BadInput{"tsBigInt", "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"kernel\",\"ts\":99999999999999999999999}]}",
                 "out of range"},
        BadInput{"negativeDur", "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"kernel\",\"ts\":1,\"dur\":-5}]}",
                 "negative event duration"},
        BadInput{
            "missingDur",
            "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"args\":{\"device\":0}}]}",
            "lacks \"dur\""},
        BadInput{
            "noDevice",
            "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":\"gpu\",\"ts\":1,\"dur\":1}]}",
            "args.device"},
        BadInput{"eventNotObject", "{\"traceEvents\": [" + kGoodKernel + ", 5]}", "traceEvents[1] is not an object"},
        BadInput{"catNumber", "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":5}]}", "\"cat\" is not a string"},
        BadInput{"tsObject", "{\"traceEvents\": [{\"ph\":\"X\",\"ts\":{}}]}", "\"ts\" is an object"},
        BadInput{"noTraceEvents", "{\"schemaVersion\": 1}", "no \"traceEvents\""},
        BadInput{"scalar", "  42", "not a capture"}, BadInput{"empty", "   ", "not a capture"},
        BadInput{"scalarString", "[\"x\"]", "traceEvents[0] is not an object"},
        BadInput{"baseTimeBad", "{\"baseTimeNanoseconds\": -5, \"traceEvents\": []}", "baseTimeNanoseconds"}),
    [](const ::testing::TestParamInfo<BadInput>& p) { return std::string(p.param.label); });

TEST_F(KinetoReaderTest, TruncatedGzipIsOneLine) {
    auto ev = osc::testing::randomKernels(5, 3000, 1, 2, kBase);
    osc::testing::writeGz(path("full.json.gz"), osc::testing::traceJson(ev));
    std::string bytes;
    {
        std::ifstream in(path("full.json.gz"), std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    osc::testing::writeText(path("cut.json.gz"), bytes.substr(0, bytes.size() / 2));
    try {
        loadCapture(path("cut.json.gz"));
        FAIL();
    } catch (const CaptureError& e) {
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("cut.json.gz: "), std::string::npos);
    }
}

// PyTorch's (group, Seq) on operators and kernels (formats.md, "Process
// groups and Seq"). Rank 3 is rank 1 of group "5" ([1, 3]). The trace's time
// 0 is its first non-operator event, the launch at 1050 ns.
TEST_F(KinetoReaderTest, GroupCallsJoinOperatorsToTheirKernels) {
    const std::string group = R"("Process Group Name": "5", "Process Group Ranks": "[1, 3]", "Group size": 2)";
    const auto ev = [](const std::string& cat, const std::string& name, int64_t ns, int64_t dur, int tid,
                       const std::string& args) {
        return R"({"ph": "X", "cat": ")" + cat + R"(", "name": ")" + name + R"(", "pid": 1, "tid": )" +
               std::to_string(tid) + R"(, "ts": )" + osc::testing::nsAsMicros(ns) + R"(, "dur": )" +
               osc::testing::nsAsMicros(dur) + R"(, "args": {)" + args + "}}";
    };
    const std::vector<std::string> events = {
        // Seq 12: the operator, its launch inside it on its thread, the kernel (no arguments).
        ev("cpu_op", "record_param_comms", 1000, 100, 7,
           R"("Collective name": "allgather", "In msg nelems": 256, "Out msg nelems": 512, "dtype": "BFloat16", )" +
               group + R"(, "Seq": 12)"),
        ev("cuda_driver", "cuLaunchKernelEx", 1050, 20, 7, R"("correlation": 9)"),
        ev("kernel", "ncclDevKernel_AllGather_RING_LL", 2000, 500, 0, R"("device": 0, "stream": 20, "correlation": 9)"),
        // Seq 13: the kernel alone carries the arguments.
        ev("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 3000, 300, 0,
           R"("device": 0, "stream": 20, "correlation": 10, "Collective name": "allreduce", "In msg nelems": 100, )"
           R"("dtype": "Float", )" +
               group + R"(, "Seq": 13)"),
        // Seq 14: its thread's next launch comes after it ends: no kernel of its own.
        ev("cpu_op", "record_param_comms", 4000, 100, 7,
           R"("Collective name": "reduce_scatter", "In msg nelems": 400, "Out msg nelems": 200, "dtype": "Float", )" +
               group + R"(, "Seq": 14)"),
        ev("cuda_runtime", "cudaLaunchKernel", 4200, 20, 7, R"("correlation": 11)"),
        ev("kernel", "gemm", 5000, 100, 0, R"("device": 0, "stream": 7, "correlation": 11)"),
        // PyTorch numbers sends and receives apart: not a group call.
        ev("cpu_op", "record_param_comms", 6000, 100, 7,
           R"("Collective name": "send", "In msg nelems": 8, "dtype": "Float", "Dst Rank": 1, )" + group +
               R"(, "Seq": 15)"),
    };
    std::string text = R"({"distributedInfo": {"rank": 3, "world_size": 4}, "traceEvents": [)";
    for (size_t i = 0; i < events.size(); ++i) text += (i ? ",\n" : "") + events[i];
    osc::testing::writeText(path("seq.json"), text + "]}");
    const Capture cap = loadCapture(path("seq.json"));
    const auto& calls = cap.processes.at(0).groupCalls;
    ASSERT_EQ(calls.size(), 3u);
    for (const auto& c : calls) {
        EXPECT_EQ(cap.strings.at(c.group), "5");
        EXPECT_EQ(c.groupSize, 2);
        EXPECT_EQ(c.groupRank, 1);
    }
    EXPECT_EQ(calls[0].seq, 12u);
    EXPECT_EQ(cap.strings.at(calls[0].collective), "AllGather");
    EXPECT_EQ(calls[0].bytes, 512u);  // 256 BFloat16 in
    EXPECT_EQ(calls[0].entered, -50);
    EXPECT_EQ(calls[0].device, 0u);
    EXPECT_EQ(calls[0].gpuStart, std::optional<TimeNs>(950));
    EXPECT_EQ(calls[0].gpuEnd, std::optional<TimeNs>(1450));
    EXPECT_EQ(calls[1].seq, 13u);
    EXPECT_EQ(cap.strings.at(calls[1].collective), "AllReduce");
    EXPECT_EQ(calls[1].bytes, 400u);
    EXPECT_EQ(calls[1].entered, 1950);
    EXPECT_EQ(calls[1].gpuStart, std::optional<TimeNs>(1950));
    EXPECT_EQ(calls[2].seq, 14u);
    EXPECT_EQ(cap.strings.at(calls[2].collective), "ReduceScatter");
    EXPECT_EQ(calls[2].bytes, 800u);  // NCCL's count of a reduce-scatter is its output: 200 Float
    EXPECT_EQ(calls[2].entered, 2950);
    EXPECT_FALSE(calls[2].gpuStart);
    EXPECT_EQ(calls[2].device, kNoId);
}
