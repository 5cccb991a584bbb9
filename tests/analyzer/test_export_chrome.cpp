// Chrome/Perfetto export: structure (processes, stream lanes, overlap lane,
// flows) against hand-worked answers, and the round trip capture -> export
// -> Kineto import, which must give back the same events and metrics.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/export/chrome_export.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/metrics/analysis.h"
#include "tests/analyzer/test_metrics_support.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <random>
#include <sstream>

using namespace osc;
using nlohmann::json;

namespace {

const char* kGemm = "void gemm_kernel(float*)";
const char* kNccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

std::string exportText(const Capture& c) {
    std::ostringstream out;
    writeChromeTrace(c, out);
    return out.str();
}

std::vector<json> eventsWhere(const json& trace, const std::function<bool(const json&)>& pred) {
    std::vector<json> out;
    for (const auto& e : trace.at("traceEvents"))
        if (pred(e)) out.push_back(e);
    return out;
}

// The hand-worked capture: compute [0,100) and [150,250) on stream 7, NCCL
// [50,200) on stream 13. Overlap C∩M = [50,100) + [150,200); exposed M∖C = [100,150).
Capture handWorked() {
    osc::testing::TraceBuilder b;
    b.launched(0, 0, kGemm, -20, 0, 100'000, 7, 4243);
    b.launched(0, 0, kNccl, -10, 50'000, 200'000, 13, 4243);
    b.launched(0, 0, kGemm, 10, 150'000, 250'000, 7, 4243);
    b.range(0, "ProfilerStep#0", -30, 5000, 4243);
    b.process(0).pid = 4242;
    b.capture.originUtcNs = 1'700'000'000'000'000'000LL;
    return b.finalized();
}

}  // namespace

TEST(ChromeExport, ProcessesLanesOverlapAndFlows) {
    const Capture c = handWorked();
    const json trace = json::parse(exportText(c));
    EXPECT_EQ(trace.at("baseTimeNanoseconds").get<int64_t>(), 1'700'000'000'000'000'000LL);

    auto meta = [&](const std::string& name) {
        return eventsWhere(trace,
                           [&](const json& e) { return e.value("ph", "") == "M" && e.value("name", "") == name; });
    };
    const auto procs = meta("process_name");
    ASSERT_EQ(procs.size(), 1u);
    EXPECT_EQ(procs[0].at("pid").get<int64_t>(), 4242);
    EXPECT_EQ(procs[0].at("args").at("name").get<std::string>(), c.processes[0].label());

    std::map<std::string, int64_t> threadTid;
    for (const auto& t : meta("thread_name"))
        threadTid[t.at("args").at("name").get<std::string>()] = t.at("tid").get<int64_t>();
    ASSERT_TRUE(threadTid.count("stream 7 (compute)"));
    ASSERT_TRUE(threadTid.count("stream 13 (communication)"));
    ASSERT_TRUE(threadTid.count("overlap / exposed comm"));
    ASSERT_TRUE(threadTid.count("CPU thread 4243"));
    EXPECT_EQ(threadTid["stream 7 (compute)"], chromeStreamTid(0, 7));

    // Overlap lane: the hand-worked windows, in µs.
    const int64_t lane = threadTid["overlap / exposed comm"];
    std::vector<std::tuple<std::string, double, double>> windows;
    for (const auto& e : eventsWhere(
             trace, [&](const json& e) { return e.value("tid", int64_t{-1}) == lane && e.value("ph", "") == "X"; }))
        windows.emplace_back(e.at("name"), e.at("ts").get<double>(), e.at("dur").get<double>());
    std::sort(windows.begin(), windows.end(), [](auto& a, auto& b) { return std::get<1>(a) < std::get<1>(b); });
    ASSERT_EQ(windows.size(), 3u);
    EXPECT_EQ(windows[0], std::make_tuple(std::string("overlap (C∩M)"), 50.0, 50.0));
    EXPECT_EQ(windows[1], std::make_tuple(std::string("exposed comm (M∖C)"), 100.0, 50.0));
    EXPECT_EQ(windows[2], std::make_tuple(std::string("overlap (C∩M)"), 150.0, 50.0));

    // One s/f flow pair per launched kernel, id = correlation, from the call to the kernel.
    const auto starts = eventsWhere(trace, [](const json& e) { return e.value("ph", "") == "s"; });
    const auto finishes = eventsWhere(trace, [](const json& e) { return e.value("ph", "") == "f"; });
    ASSERT_EQ(starts.size(), 3u);
    ASSERT_EQ(finishes.size(), 3u);
    for (const auto& s : starts) {
        EXPECT_EQ(s.at("cat"), "ac2g");
        EXPECT_EQ(s.at("tid").get<int64_t>(), 4243);
        const auto id = s.at("id").get<uint64_t>();
        const auto f = std::find_if(finishes.begin(), finishes.end(),
                                    [&](const json& x) { return x.at("id").get<uint64_t>() == id; });
        ASSERT_NE(f, finishes.end());
        // Correlations 1,2,3 launch at -20, -10, 10 ns and start at 0, 50, 150 µs.
        const double launch[] = {-0.020, -0.010, 0.010}, start[] = {0, 50, 150};
        EXPECT_DOUBLE_EQ(s.at("ts").get<double>(), launch[id - 1]);
        EXPECT_DOUBLE_EQ(f->at("ts").get<double>(), start[id - 1]);
    }
    // Kernels carry Kineto's argument names.
    const auto kernels = eventsWhere(trace, [](const json& e) { return e.value("cat", "") == "kernel"; });
    ASSERT_EQ(kernels.size(), 3u);
    for (const auto& k : kernels) {
        EXPECT_EQ(k.at("args").at("device"), 0);
        EXPECT_TRUE(k.at("args").contains("stream"));
        EXPECT_TRUE(k.at("args").contains("correlation"));
    }
}

namespace {

// Random multi-rank capture with steps, copies, memsets and odd ns values.
Capture randomCapture(uint32_t seed) {
    std::mt19937_64 rng(seed);
    osc::testing::TraceBuilder b;
    for (int rank = 0; rank < 2; ++rank) {
        b.process(rank).pid = 500 + rank;
        b.process(rank).worldSize = 2;
        for (int step = 0; step < 3; ++step) {
            const TimeNs s0 = step * 3'000'000 + rank * 777;
            b.range(rank, "ProfilerStep#" + std::to_string(step), s0, s0 + 2'000'000, 9);
            for (int i = 0; i < 40; ++i) {
                const uint32_t dev = static_cast<uint32_t>(rng() % 2);
                const bool comm = rng() % 3 == 0;
                const TimeNs start = s0 + static_cast<TimeNs>(rng() % 2'500'000);
                b.launched(rank, dev, comm ? kNccl : kGemm, s0 + 1 + i * 3, start,
                           start + 1 + static_cast<TimeNs>(rng() % 300'001), comm ? 13 : 7, 9);
            }
            b.copy(rank, 0, CopyKind::PtoP, s0 + 5, s0 + 90'005, 1 << 20, 21);
            b.copy(rank, 1, CopyKind::DtoH, s0 + 15, s0 + 10'015, 4096, 22);
            b.memset(rank, 1, s0 + 3, s0 + 999, 23);
        }
    }
    b.capture.originUtcNs = 1'699'999'999'999'999'999LL;
    return b.finalized();
}

void expectSameMetrics(const OverlapMetrics& a, const OverlapMetrics& b) {
    EXPECT_EQ(a.window_ns, b.window_ns);
    EXPECT_EQ(a.compute_ns, b.compute_ns);
    EXPECT_EQ(a.comm_ns, b.comm_ns);
    EXPECT_EQ(a.overlap_ns, b.overlap_ns);
    EXPECT_EQ(a.exposed_comm_ns, b.exposed_comm_ns);
    EXPECT_EQ(a.busy_ns, b.busy_ns);
    EXPECT_EQ(a.idle_ns, b.idle_ns);
    EXPECT_EQ(a.overlap_ratio, b.overlap_ratio);
}

}  // namespace

TEST(ChromeExport, RoundTripGivesTheSameEventsAndMetrics) {
    const Capture original = randomCapture(11);
    const testsupport::TempDir dir;
    const std::string file = dir / "rt.json";
    {
        std::ofstream out(file);
        writeChromeTrace(original, out);
    }
    const Capture back = loadCapture(file);

    ASSERT_EQ(back.processes.size(), original.processes.size());
    for (size_t p = 0; p < original.processes.size(); ++p) {
        const Process& a = original.processes[p];
        const Process& b = back.processes[p];
        EXPECT_EQ(b.rank, a.rank);
        EXPECT_EQ(b.worldSize, a.worldSize);
        EXPECT_EQ(b.pid, a.pid);
        ASSERT_EQ(b.devices.size(), a.devices.size());
        for (size_t d = 0; d < a.devices.size(); ++d) {
            const auto& ka = a.devices[d].kernels;
            const auto& kb = b.devices[d].kernels;
            ASSERT_EQ(kb.size(), ka.size());
            for (size_t i = 0; i < ka.size(); ++i) {
                // Absolute wall-clock time of each kernel must be identical.
                EXPECT_EQ(kb.start[i] + back.originUtcNs, ka.start[i] + original.originUtcNs);
                EXPECT_EQ(kb.end[i] - kb.start[i], ka.end[i] - ka.start[i]);
                EXPECT_EQ(kb.stream[i], ka.stream[i]);
                EXPECT_EQ(kb.correlation[i], ka.correlation[i]);
                EXPECT_EQ(back.strings.at(kb.name[i]), original.strings.at(ka.name[i]));
            }
            EXPECT_EQ(b.devices[d].copies.copyKind, a.devices[d].copies.copyKind);
            EXPECT_EQ(b.devices[d].copies.bytes, a.devices[d].copies.bytes);
            EXPECT_EQ(b.devices[d].memsets.size(), a.devices[d].memsets.size());
        }
        EXPECT_EQ(b.apiCalls.correlation, a.apiCalls.correlation);
        EXPECT_EQ(b.ranges.size(), a.ranges.size());
    }

    const Analysis x = analyze(original), y = analyze(back);
    ASSERT_EQ(x.devices.size(), y.devices.size());
    ASSERT_GT(x.devices.size(), 0u);
    for (size_t i = 0; i < x.devices.size(); ++i) {
        expectSameMetrics(x.devices[i].totals, y.devices[i].totals);
        ASSERT_EQ(x.devices[i].steps.size(), y.devices[i].steps.size());
        EXPECT_EQ(x.devices[i].steps.size(), 3u);
        for (size_t s = 0; s < x.devices[i].steps.size(); ++s)
            expectSameMetrics(x.devices[i].steps[s].metrics, y.devices[i].steps[s].metrics);
        // docs/design.md 4b/4c from a Kineto trace: grid and block travel in args.
        const auto& dx = x.devices[i];
        const auto& dy = y.devices[i];
        EXPECT_EQ(dx.interference.overlapped_compute_ns, dy.interference.overlapped_compute_ns);
        EXPECT_EQ(dx.interference.interference_ns, dy.interference.interference_ns);
        EXPECT_EQ(dx.interference.net_overlap_gain_ns, dy.interference.net_overlap_gain_ns);
        ASSERT_EQ(dx.signatures.size(), dy.signatures.size());
        for (size_t k = 0; k < dx.signatures.size(); ++k) {
            EXPECT_EQ(dx.signatures[k].name, dy.signatures[k].name);
            EXPECT_EQ(dx.signatures[k].grid, dy.signatures[k].grid);
            EXPECT_EQ(dx.signatures[k].block, dy.signatures[k].block);
            EXPECT_EQ(dx.signatures[k].baseline_ns, dy.signatures[k].baseline_ns);
        }
        ASSERT_TRUE(dx.wait && dy.wait);
        EXPECT_EQ(dx.wait->comm_wait_ns, dy.wait->comm_wait_ns);
        EXPECT_EQ(dx.wait->exposed_wait_ns, dy.wait->exposed_wait_ns);
        EXPECT_EQ(dx.last_arrivals, dy.last_arrivals);
        EXPECT_EQ(dx.delay_caused_ns, dy.delay_caused_ns);
    }
    size_t withInterference = 0;
    for (const auto& d : x.devices) withInterference += d.interference.overlapped_compute_ns > 0;
    EXPECT_GT(withInterference, 0u);
    expectSameMetrics(x.summary, y.summary);
    EXPECT_GT(x.summary.comm_ns, 0);
    EXPECT_GT(x.summary.overlap_ns, 0);
}
