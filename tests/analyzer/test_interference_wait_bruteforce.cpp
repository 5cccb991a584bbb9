// docs/design.md sections 4b and 4c against a brute force: time is cut into 1 ns
// cells; a kernel's overlap with communication, the waiting and transfer
// parts of matched collectives and every window sum are counted cell by cell
// from the events as generated. Nothing here shares code with
// interference.cpp or wait_transfer.cpp. The same traces are also written as
// an Nsight Systems export and as PyTorch profiler traces (one per rank) and
// read back, so that each input format is held to the same brute force.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/export/chrome_export.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/metrics/analysis.h"
#include "nsys_shaped.h"
#include "test_metrics_support.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

namespace osc {
namespace {

constexpr TimeNs kEnd = 600;
const char* kCompute[] = {"gemm_a", "gemm_b", "layernorm"};
const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";

struct K {
    TimeNs start, end;
    int name;  // index into kCompute, or -1 for the all-reduce
    uint32_t grid, block;
    int step;  // launched inside step range `step`
};
struct Dev {
    std::vector<K> kernels;
    std::vector<std::pair<TimeNs, TimeNs>> p2p;  // communication that matches nothing
};

TimeNs lowerMedian(std::vector<TimeNs> v) {
    std::sort(v.begin(), v.end());
    return v[(v.size() - 1) / 2];
}

struct Trace {
    testing::TraceBuilder b;
    std::vector<Dev> devs;
};

// Ranks 2-4, one device each, two steps; the all-reduces start at distinct
// times per device so that matching by order is unambiguous.
Trace makeTrace(std::mt19937& rng) {
    Trace t;
    std::uniform_int_distribution<int> ranksOf(1, 4), nCompute(3, 24), nAr(0, 5), pickName(0, 2), small(0, 1);
    std::uniform_int_distribution<TimeNs> at(0, kEnd - 60), len(1, 50);
    const int ranks = ranksOf(rng);
    uint32_t corr = 1;
    for (int r = 0; r < ranks; ++r) {
        Dev d;
        t.b.range(r, "ProfilerStep#0", 0, 50);
        t.b.range(r, "ProfilerStep#1", 50, 100);
        t.b.device(r, 0);
        auto launch = [&](const K& k) {
            const uint32_t c = corr++;
            t.b.api(r, k.step * 50 + 10, k.step * 50 + 11, c);
            t.b.kernel(r, 0, k.name < 0 ? kAllReduce : kCompute[k.name], k.start, k.end, k.name < 0 ? 3 : 7, c);
            auto& kt = t.b.device(r, 0).kernels;
            kt.gridX.back() = k.grid;
            kt.blockX.back() = k.block;
        };
        const int nc = nCompute(rng);
        for (int i = 0; i < nc; ++i) {
            const TimeNs s = at(rng);
            K k{s, s + len(rng), pickName(rng), static_cast<uint32_t>(1 + small(rng)), 128, small(rng)};
            d.kernels.push_back(k);
            launch(k);
        }
        // Repeats of one kernel alone, so that baselines exist.
        for (int i = 0; i < 3; ++i) {
            K k{kEnd + 10 + 20 * i, kEnd + 10 + 20 * i + 5 + i, 0, 1, 128, 1};
            d.kernels.push_back(k);
            launch(k);
        }
        const int na = nAr(rng);
        std::vector<TimeNs> starts;
        while (static_cast<int>(starts.size()) < na) {
            const TimeNs s = at(rng);
            if (std::find(starts.begin(), starts.end(), s) == starts.end()) starts.push_back(s);
        }
        for (TimeNs s : starts) {
            K k{s, s + len(rng), -1, 1, 1, small(rng)};
            d.kernels.push_back(k);
            launch(k);
        }
        if (small(rng)) {
            const TimeNs s = at(rng);
            d.p2p.push_back({s, s + len(rng)});
            t.b.copy(r, 0, CopyKind::PtoP, s, d.p2p.back().second);
        }
        t.devs.push_back(std::move(d));
    }
    t.b.finalized();
    return t;
}

struct Cells {
    std::vector<char> c, m;
};

Cells cellsOf(const Dev& d) {
    Cells x{std::vector<char>(2 * kEnd), std::vector<char>(2 * kEnd)};
    for (const auto& k : d.kernels)
        for (TimeNs t = k.start; t < k.end; ++t) (k.name < 0 ? x.m : x.c)[static_cast<size_t>(t)] = 1;
    for (const auto& [s, e] : d.p2p)
        for (TimeNs t = s; t < e; ++t) x.m[static_cast<size_t>(t)] = 1;
    return x;
}

enum class Format { Memory, Nsys, Pytorch };

// The capture as another tool would have written it, read back.
Capture reread(const Capture& c, Format format, const std::filesystem::path& dir) {
    std::vector<std::string> files;
    if (format == Format::Nsys) {
        std::vector<size_t> all(c.processes.size());
        for (size_t p = 0; p < all.size(); ++p) all[p] = p;
        files.push_back((dir / "node.sqlite").string());
        std::filesystem::remove(files.back());  // the previous round's
        test::NsysShapedWriter(files.back()).write(c, all, /*mergeDevices=*/false, /*shift=*/0);
    } else {
        // torch.profiler writes one trace per rank: cut the export of the job.
        std::ostringstream whole;
        writeChromeTrace(c, whole);
        const auto trace = nlohmann::ordered_json::parse(whole.str());
        for (const auto& process : trace.at("overlapscopeProcesses")) {
            nlohmann::ordered_json one = trace;
            one["traceEvents"] = nlohmann::ordered_json::array();
            for (const auto& e : trace.at("traceEvents"))
                if (e.at("pid") == process.at("tracePid")) one["traceEvents"].push_back(e);
            one["overlapscopeProcesses"] = nlohmann::ordered_json::array({process});
            files.push_back((dir / ("rank" + process.at("rank").dump() + ".json")).string());
            std::ofstream(files.back()) << one.dump();
        }
    }
    return loadCaptures(files);
}

class InterferenceWaitBruteForce : public ::testing::TestWithParam<Format> {};

TEST_P(InterferenceWaitBruteForce, RandomTracesMatchCellCounts) {
    std::mt19937 rng(20261124);
    const testsupport::TempDir dir;
    ASSERT_FALSE(dir.path().empty());
    // Fewer rounds through files, which cost more than the analysis.
    const int rounds = GetParam() == Format::Memory ? 300 : 60;
    size_t withBaseline = 0, groupsSeen = 0, waitingSeen = 0;
    for (int round = 0; round < rounds; ++round) {
        Trace t = makeTrace(rng);
        const Capture read = GetParam() == Format::Memory ? Capture{} : reread(t.b.capture, GetParam(), dir.path());
        const Analysis whole = analyze(GetParam() == Format::Memory ? t.b.capture : read);
        ASSERT_EQ(whole.devices.size(), t.devs.size());
        // Device d of the trace is rank d, in whichever order a reader lists them.
        Analysis a = whole;
        for (const auto& dev : whole.devices) {
            ASSERT_GE(dev.rank, 0);
            ASSERT_LT(static_cast<size_t>(dev.rank), t.devs.size());
            a.devices[static_cast<size_t>(dev.rank)] = dev;
        }
        const size_t n = t.devs.size();

        // 4c truth: the g-th all-reduce of each device forms group g.
        std::vector<std::vector<const K*>> ars(n);
        for (size_t d = 0; d < n; ++d) {
            for (const auto& k : t.devs[d].kernels)
                if (k.name < 0) ars[d].push_back(&k);
            std::sort(ars[d].begin(), ars[d].end(), [](const K* x, const K* y) { return x->start < y->start; });
        }
        std::vector<std::vector<char>> wait(n, std::vector<char>(2 * kEnd)), transfer = wait;
        std::vector<int> lastArrivals(n, 0);
        std::vector<TimeNs> delay(n, 0);
        size_t maxAr = 0;
        for (const auto& v : ars) maxAr = std::max(maxAr, v.size());
        for (size_t g = 0; g < maxAr; ++g) {
            std::vector<size_t> members;
            for (size_t d = 0; d < n; ++d)
                if (g < ars[d].size()) members.push_back(d);
            if (members.size() < 2 || n < 2) {
                for (size_t d : members)
                    for (TimeNs x = ars[d][g]->start; x < ars[d][g]->end; ++x) transfer[d][static_cast<size_t>(x)] = 1;
                continue;
            }
            ++groupsSeen;
            std::vector<TimeNs> starts;
            for (size_t d : members) starts.push_back(ars[d][g]->start);
            std::sort(starts.begin(), starts.end());
            const TimeNs L = starts.back();
            for (size_t d : members) {
                const K& k = *ars[d][g];
                for (TimeNs x = k.start; x < k.end; ++x) (x < L ? wait : transfer)[d][static_cast<size_t>(x)] = 1;
                if (k.start == L && starts[starts.size() - 2] < L) {
                    ++lastArrivals[d];
                    delay[d] += L - starts[starts.size() - 2];
                }
            }
        }
        for (size_t d = 0; d < n; ++d)
            for (const auto& [s, e] : t.devs[d].p2p)
                for (TimeNs x = s; x < e; ++x) transfer[d][static_cast<size_t>(x)] = 1;

        for (size_t d = 0; d < n; ++d) {
            const std::string where = "round " + std::to_string(round) + " device " + std::to_string(d);
            const Dev& dev = t.devs[d];
            const DeviceAnalysis& got = a.devices[d];
            const Cells cells = cellsOf(dev);

            // 4b: classify every compute kernel by counting its cells under M.
            std::map<std::tuple<int, uint32_t, uint32_t>, std::vector<TimeNs>> isolated, overlapped;
            for (const auto& k : dev.kernels) {
                if (k.name < 0) continue;
                TimeNs ov = 0;
                for (TimeNs x = k.start; x < k.end; ++x) ov += cells.m[static_cast<size_t>(x)];
                const auto sig = std::make_tuple(k.name, k.grid, k.block);
                if (ov == 0)
                    isolated[sig].push_back(k.end - k.start);
                else if (2 * ov >= k.end - k.start)
                    overlapped[sig].push_back(k.end - k.start);
            }
            auto baselineOf = [&](const std::tuple<int, uint32_t, uint32_t>& sig) -> std::optional<TimeNs> {
                auto it = isolated.find(sig);
                if (it == isolated.end() || it->second.size() < 3) return std::nullopt;
                return lowerMedian(it->second);
            };
            auto windowSums = [&](TimeNs lo, TimeNs hi, TimeNs overlapNs, const InterferenceMetrics& m,
                                  const std::string& w) {
                TimeNs ovc = 0, inter = 0, ins = 0;
                for (const auto& k : dev.kernels) {
                    if (k.name < 0 || k.start < lo || k.start >= hi) continue;
                    TimeNs ov = 0;
                    for (TimeNs x = k.start; x < k.end; ++x) ov += cells.m[static_cast<size_t>(x)];
                    if (ov == 0 || 2 * ov < k.end - k.start) continue;
                    ovc += k.end - k.start;
                    if (auto b = baselineOf({k.name, k.grid, k.block})) {
                        inter += k.end - k.start;
                        ins += k.end - k.start - *b;
                    }
                }
                EXPECT_EQ(m.overlapped_compute_ns, ovc) << w;
                EXPECT_EQ(m.interfered_compute_ns, inter) << w;
                EXPECT_EQ(m.interference_ns, ins) << w;
                EXPECT_EQ(m.net_overlap_gain_ns, overlapNs - ins) << w;
                ASSERT_EQ(m.interference_coverage.has_value(), ovc > 0) << w;
                if (ovc > 0) {
                    EXPECT_DOUBLE_EQ(*m.interference_coverage, double(inter) / double(ovc)) << w;
                }
                ASSERT_EQ(m.compute_slowdown.has_value(), inter - ins > 0) << w;
                if (inter - ins > 0) {
                    EXPECT_DOUBLE_EQ(*m.compute_slowdown, double(ins) / double(inter - ins)) << w;
                }
                withBaseline += inter > 0;
            };
            windowSums(INT64_MIN, INT64_MAX, got.totals.overlap_ns, got.interference, where + " totals");
            for (const auto& s : got.steps)
                windowSums(s.start_ns, s.end_ns, s.metrics.overlap_ns, s.interference, where + " " + s.name);

            // Signature rows: those with overlapped kernels.
            ASSERT_EQ(got.signatures.size(), overlapped.size()) << where;
            for (const auto& row : got.signatures) {
                int name = -1;
                for (int i = 0; i < 3; ++i)
                    if (row.name == kCompute[i]) name = i;
                const auto sig = std::make_tuple(name, row.grid[0], row.block[0]);
                ASSERT_TRUE(overlapped.count(sig)) << where << " " << row.name;
                EXPECT_EQ(row.overlapped, static_cast<int>(overlapped[sig].size())) << where;
                EXPECT_EQ(row.isolated, static_cast<int>(isolated.count(sig) ? isolated[sig].size() : 0)) << where;
                EXPECT_EQ(row.median_overlapped_ns, lowerMedian(overlapped[sig])) << where;
                const auto b = baselineOf(sig);
                EXPECT_EQ(row.baseline_ns, b) << where;
                if (b) {
                    TimeNs sum = 0;
                    for (TimeNs v : overlapped[sig]) sum += v - *b;
                    EXPECT_EQ(row.slowdown_ns, sum) << where;
                }
            }
            for (size_t i = 1; i < got.signatures.size(); ++i)
                if (got.signatures[i].slowdown_ns) {
                    EXPECT_LE(*got.signatures[i].slowdown_ns, *got.signatures[i - 1].slowdown_ns) << where;
                }

            // 4c.
            if (n < 2) {
                EXPECT_FALSE(got.wait.has_value()) << where;
                EXPECT_FALSE(got.last_arrivals.has_value()) << where;
                continue;
            }
            ASSERT_TRUE(got.wait.has_value()) << where;
            EXPECT_EQ(got.last_arrivals, lastArrivals[d]) << where;
            EXPECT_EQ(got.delay_caused_ns, delay[d]) << where;
            auto waitSums = [&](TimeNs lo, TimeNs hi, const OverlapMetrics& m, const WaitTransferMetrics& w,
                                const std::string& at) {
                TimeNs cw = 0, ew = 0;
                for (TimeNs x = std::max<TimeNs>(lo, 0); x < std::min<TimeNs>(hi, 2 * kEnd); ++x) {
                    const auto i = static_cast<size_t>(x);
                    const bool waiting = wait[d][i] && !transfer[d][i];
                    cw += waiting;
                    ew += waiting && !cells.c[i];
                }
                EXPECT_EQ(w.comm_wait_ns, cw) << at;
                EXPECT_EQ(w.exposed_wait_ns, ew) << at;
                EXPECT_EQ(w.exposed_transfer_ns, m.exposed_comm_ns - ew) << at;
                waitingSeen += cw > 0;
            };
            waitSums(INT64_MIN, INT64_MAX, got.totals, *got.wait, where + " totals");
            for (const auto& s : got.steps) {
                ASSERT_TRUE(s.wait.has_value()) << where;
                waitSums(s.start_ns, s.end_ns, s.metrics, *s.wait, where + " " + s.name);
            }
        }
        if (::testing::Test::HasFailure()) break;
    }
    // The traces really exercised baselines, groups and waiting.
    EXPECT_GT(withBaseline, 100u * static_cast<size_t>(rounds) / 300);
    EXPECT_GT(groupsSeen, 200u * static_cast<size_t>(rounds) / 300);
    EXPECT_GT(waitingSeen, 100u * static_cast<size_t>(rounds) / 300);
}

INSTANTIATE_TEST_SUITE_P(Formats, InterferenceWaitBruteForce,
                         ::testing::Values(Format::Memory, Format::Nsys, Format::Pytorch),
                         [](const ::testing::TestParamInfo<Format>& param) {
                             return param.param == Format::Memory ? std::string("InMemory")
                                    : param.param == Format::Nsys ? std::string("NsightSystemsExport")
                                                                  : std::string("PytorchTraces");
                         });

TEST(InterferenceWaitAlign, AlignCollectivesShiftsByTheLowerMedianOfEndDifferences) {
    std::mt19937 rng(7);
    for (int round = 0; round < 100; ++round) {
        Trace t = makeTrace(rng);
        const size_t n = t.devs.size();
        AnalysisSettings aligned;
        aligned.alignCollectives = true;
        const Analysis a = analyze(t.b.capture, aligned);
        std::vector<std::vector<const K*>> ars(n);
        for (size_t d = 0; d < n; ++d) {
            for (const auto& k : t.devs[d].kernels)
                if (k.name < 0) ars[d].push_back(&k);
            std::sort(ars[d].begin(), ars[d].end(), [](const K* x, const K* y) { return x->start < y->start; });
        }
        for (size_t d = 0; d < n; ++d) {
            std::vector<TimeNs> diffs;
            for (size_t g = 0; g < std::min(ars[0].size(), ars[d].size()); ++g)
                diffs.push_back(ars[0][g]->end - ars[d][g]->end);
            const TimeNs want = d == 0 || diffs.empty() ? 0 : lowerMedian(diffs);
            EXPECT_EQ(a.devices[d].clock_shift_ns, want) << "round " << round << " device " << d;
            // Everything of the device moved by the shift.
            const Analysis plain = analyze(t.b.capture);
            for (size_t i = 0; i < plain.devices[d].collectives.size(); ++i)
                EXPECT_EQ(a.devices[d].collectives[i].end_ns, plain.devices[d].collectives[i].end_ns + want);
        }
    }
}

// A device of a million kernels (where the analysis builds the interference
// index on a thread of its own), worked by hand: "gemm" alone runs 10 ns,
// beside an all-reduce 14 ns, so each overlapped one is 4 ns slower than
// its signature's baseline.
TEST(InterferenceOfALargeDevice, AHandWorkedMillionKernels) {
    testing::TraceBuilder b;
    b.process(0);
    constexpr TimeNs kPairs = 350'000;  // 700,000 gemms and 350,000 all-reduces
    for (TimeNs i = 0; i < 2 * kPairs; ++i) {
        const TimeNs t = i * 100;
        const bool beside = i % 2 == 1;
        b.kernel(0, 0, "gemm", t, t + (beside ? 14 : 10), 7);
        if (beside) b.kernel(0, 0, kAllReduce, t, t + 20, 9);
    }
    const Analysis a = analyze(b.capture);
    ASSERT_EQ(a.devices.size(), 1u);
    const InterferenceMetrics& m = a.devices[0].interference;
    EXPECT_EQ(m.overlapped_compute_ns, kPairs * 14);
    EXPECT_EQ(m.interfered_compute_ns, kPairs * 14);
    EXPECT_EQ(m.interference_ns, kPairs * 4);
    EXPECT_DOUBLE_EQ(m.interference_coverage.value_or(-1), 1.0);
    EXPECT_DOUBLE_EQ(m.compute_slowdown.value_or(-1), 0.4);
    EXPECT_EQ(m.net_overlap_gain_ns, kPairs * 14 - kPairs * 4);
}

// Durations are kept in 32 bits when every one fits: a signature with
// kernels of several seconds (past 2^32 ns) keeps its exact baseline,
// median and slowdown, and so does the same device at a millionth of the
// scale. Three isolated gemms of 5, 6 and 7 units (baseline: the lower
// median, 6), one of 8 under an all-reduce (slowdown 2).
TEST(InterferenceOfLongKernels, SecondsLongKernelsKeepTheirNanoseconds) {
    for (const TimeNs unit : {TimeNs{1'000}, TimeNs{1'000'000'000}}) {
        testing::TraceBuilder b;
        b.process(0);
        TimeNs t = 0;
        for (const TimeNs n : {5, 6, 7}) {
            b.kernel(0, 0, "gemm", t, t + n * unit, 7);
            t += (n + 1) * unit;
        }
        b.kernel(0, 0, "gemm", t, t + 8 * unit, 7);
        b.kernel(0, 0, kAllReduce, t, t + 8 * unit, 9);
        const Analysis a = analyze(b.capture);
        ASSERT_EQ(a.devices.size(), 1u);
        ASSERT_EQ(a.devices[0].signatures.size(), 1u) << unit;
        const SignatureInterference& s = a.devices[0].signatures[0];
        EXPECT_EQ(s.isolated, 3) << unit;
        EXPECT_EQ(s.overlapped, 1) << unit;
        EXPECT_EQ(s.baseline_ns, 6 * unit);
        EXPECT_EQ(s.median_overlapped_ns, 8 * unit);
        EXPECT_EQ(s.slowdown_ns, 2 * unit);
        EXPECT_EQ(a.devices[0].interference.interference_ns, 2 * unit);
    }
}

}  // namespace
}  // namespace osc
