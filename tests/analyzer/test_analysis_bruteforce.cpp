// analyze() against a brute-force model: time is cut into 1 ns cells, each
// cell is marked compute / communication / memory by looking at every event,
// and every metric is a count of cells. Step windows and operations are
// recomputed by scanning all events. Nothing here shares code with the
// sweep-and-prefix-sum implementation.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/metrics/analysis.h"
#include "test_metrics_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace osc {
namespace {

constexpr TimeNs kEnd = 400;

struct Ev {  // one GPU record, as the brute force sees it
    TimeNs start, end;
    bool isKernel;
    std::string name;
    CopyKind kind = CopyKind::Unknown;
    bool isMemset = false;
    uint32_t corr;
    int order;  // insertion order among kernels / copies
};

struct DevTruth {
    int rank;
    uint32_t dev;
    std::vector<Ev> events;
};

struct RandomTrace {
    testing::TraceBuilder b;
    std::vector<DevTruth> devices;
    struct Api {
        int rank;
        TimeNs start;
        uint32_t corr;
    };
    std::vector<Api> apis;
    struct Range {
        int rank;
        std::string name;
        TimeNs start, end;
    };
    std::vector<Range> ranges;
    AnalysisSettings settings;
};

const char* kNames[] = {"gemm_kernel", "void elementwise<float>(float*)", "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                        "void ncclDevKernel_SendRecv(ncclDevKernelArgs4K)", "custom_ar_kernel"};

RandomTrace makeTrace(std::mt19937& rng) {
    RandomTrace t;
    std::uniform_int_distribution<int> coin(0, 1), pick(0, 4), ndev(1, 2), nev(0, 14);
    std::uniform_int_distribution<TimeNs> at(0, kEnd - 40), len(-2, 40);
    t.settings.commCopies = coin(rng);
    if (coin(rng)) t.settings.commKernelPatterns = {"custom_ar"};
    const int ranks = ndev(rng);
    uint32_t corr = 1;
    for (int rank = 0; rank < ranks; ++rank) {
        // Step ranges: non-overlapping, in order, plus a non-step range.
        TimeNs cursor = 0;
        const int nsteps = std::uniform_int_distribution<int>(0, 3)(rng);
        for (int s = 0; s < nsteps; ++s) {
            const TimeNs st = cursor + std::uniform_int_distribution<TimeNs>(0, 30)(rng);
            const TimeNs en = st + std::uniform_int_distribution<TimeNs>(1, 120)(rng);
            const std::string name = "ProfilerStep#" + std::to_string(s);
            t.b.range(rank, name, st, en);
            t.ranges.push_back({rank, name, st, en});
            cursor = en;
        }
        t.b.range(rank, "forward", 10, 200);
        const int devices = ndev(rng);
        for (uint32_t d = 0; d < static_cast<uint32_t>(devices); ++d) {
            DevTruth truth{rank, d, {}};
            t.b.device(rank, d);  // present even when it records nothing
            const int n = nev(rng);
            for (int i = 0; i < n; ++i) {
                const TimeNs s = at(rng);
                const TimeNs e = s + len(rng);
                const uint32_t c = coin(rng) || coin(rng) ? corr++ : 0;
                if (c) {
                    const TimeNs launch = std::uniform_int_distribution<TimeNs>(0, kEnd)(rng);
                    t.b.api(rank, launch, launch + 2, c);
                    t.apis.push_back({rank, launch, c});
                }
                const int kind = std::uniform_int_distribution<int>(0, 5)(rng);
                Ev ev{s, e, kind < 4, "", CopyKind::Unknown, false, c, i};
                const uint32_t stream = static_cast<uint32_t>(pick(rng) % 3);
                if (kind < 4) {
                    ev.name = kNames[pick(rng)];
                    t.b.kernel(rank, d, ev.name, s, e, stream, c);
                } else if (kind == 4) {
                    const CopyKind kinds[] = {CopyKind::PtoP, CopyKind::HtoD, CopyKind::DtoD, CopyKind::DtoH};
                    ev.kind = kinds[pick(rng) % 4];
                    t.b.copy(rank, d, ev.kind, s, e, 4096, stream, c);
                } else {
                    ev.isMemset = true;
                    t.b.memset(rank, d, s, e, stream, c);
                }
                truth.events.push_back(ev);
            }
            t.devices.push_back(std::move(truth));
        }
    }
    t.b.finalized();
    return t;
}

enum Cat { kCompute, kComm, kMemory };

Cat categoryOf(const Ev& e, const AnalysisSettings& s) {
    if (e.isMemset) return kMemory;
    if (!e.isKernel) {
        if (e.kind == CopyKind::PtoP) return kComm;
        if (s.commCopies && (e.kind == CopyKind::HtoD || e.kind == CopyKind::DtoH)) return kComm;
        return kMemory;
    }
    std::string n = e.name;
    if (n.rfind("void ", 0) == 0) n = n.substr(5);
    if (n.rfind("nccl", 0) == 0) return kComm;
    if (!s.commKernelPatterns.empty() && e.name.find("custom_ar") != std::string::npos) return kComm;
    return kCompute;
}

struct Cells {
    std::vector<char> c, m, x;
};

Cells cellsOf(const DevTruth& d, const AnalysisSettings& s) {
    Cells cells{std::vector<char>(kEnd + 64), std::vector<char>(kEnd + 64), std::vector<char>(kEnd + 64)};
    for (const auto& e : d.events) {
        auto& lane = categoryOf(e, s) == kCompute ? cells.c : categoryOf(e, s) == kComm ? cells.m : cells.x;
        for (TimeNs t = e.start; t < e.end; ++t) lane[static_cast<size_t>(t)] = 1;
    }
    return cells;
}

OverlapMetrics bruteMetrics(const Cells& k, TimeNs a, TimeNs b) {
    OverlapMetrics m;
    TimeNs cm = 0;
    for (TimeNs t = a; t < b; ++t) {
        const size_t i = static_cast<size_t>(t);
        m.compute_ns += k.c[i];
        m.comm_ns += k.m[i];
        m.overlap_ns += k.c[i] && k.m[i];
        m.busy_ns += k.c[i] || k.m[i] || k.x[i];
        cm += k.c[i] || k.m[i];
    }
    m.window_ns = b - a;
    m.exposed_comm_ns = m.comm_ns - m.overlap_ns;
    m.idle_ns = m.window_ns - m.busy_ns;
    if (m.comm_ns) m.overlap_ratio = double(m.overlap_ns) / double(m.comm_ns);
    if (cm) m.achieved_speedup = double(m.compute_ns + m.comm_ns) / double(cm);
    if (m.compute_ns || m.comm_ns)
        m.ideal_speedup = double(m.compute_ns + m.comm_ns) / double(std::max(m.compute_ns, m.comm_ns));
    return m;
}

void expectMetrics(const OverlapMetrics& got, const OverlapMetrics& want, const std::string& where) {
    EXPECT_EQ(got.window_ns, want.window_ns) << where;
    EXPECT_EQ(got.compute_ns, want.compute_ns) << where;
    EXPECT_EQ(got.comm_ns, want.comm_ns) << where;
    EXPECT_EQ(got.overlap_ns, want.overlap_ns) << where;
    EXPECT_EQ(got.exposed_comm_ns, want.exposed_comm_ns) << where;
    EXPECT_EQ(got.busy_ns, want.busy_ns) << where;
    EXPECT_EQ(got.idle_ns, want.idle_ns) << where;
    ASSERT_EQ(got.overlap_ratio.has_value(), want.overlap_ratio.has_value()) << where;
    if (want.overlap_ratio) {
        EXPECT_DOUBLE_EQ(*got.overlap_ratio, *want.overlap_ratio) << where;
    }
    ASSERT_EQ(got.achieved_speedup.has_value(), want.achieved_speedup.has_value()) << where;
    if (want.achieved_speedup) {
        EXPECT_DOUBLE_EQ(*got.achieved_speedup, *want.achieved_speedup) << where;
    }
    ASSERT_EQ(got.ideal_speedup.has_value(), want.ideal_speedup.has_value()) << where;
    if (want.ideal_speedup) {
        EXPECT_DOUBLE_EQ(*got.ideal_speedup, *want.ideal_speedup) << where;
    }
}

struct StepTruth {
    std::string name;
    TimeNs start, end;
    std::vector<uint32_t> corrs;
};

TEST(AnalysisBruteForce, RandomTracesMatchCellCounts) {
    std::mt19937 rng(20261122);
    size_t stepsChecked = 0, opsChecked = 0, opsInSteps = 0;
    for (int round = 0; round < 400; ++round) {
        RandomTrace t = makeTrace(rng);
        const Analysis a = analyze(t.b.capture, t.settings);
        ASSERT_EQ(a.devices.size(), t.devices.size());
        OverlapMetrics sum;
        TimeNs sumCM = 0;
        for (size_t di = 0; di < t.devices.size(); ++di) {
            const DevTruth& d = t.devices[di];
            const DeviceAnalysis& got = a.devices[di];
            const std::string where = "round " + std::to_string(round) + " device " + std::to_string(di);
            ASSERT_EQ(got.rank, d.rank) << where;
            ASSERT_EQ(got.device, d.dev) << where;
            const Cells cells = cellsOf(d, t.settings);

            // Totals over the span of non-empty activity.
            TimeNs lo = INT64_MAX, hi = INT64_MIN;
            for (const auto& e : d.events)
                if (e.end > e.start) {
                    lo = std::min(lo, e.start);
                    hi = std::max(hi, e.end);
                }
            const OverlapMetrics totals = lo < hi ? bruteMetrics(cells, lo, hi) : OverlapMetrics{};
            expectMetrics(got.totals, totals, where + " totals");
            sum.compute_ns += totals.compute_ns;
            sum.comm_ns += totals.comm_ns;
            sum.overlap_ns += totals.overlap_ns;
            sum.busy_ns += totals.busy_ns;
            sum.window_ns += totals.window_ns;
            sum.idle_ns += totals.idle_ns;
            sum.exposed_comm_ns += totals.exposed_comm_ns;
            sumCM += totals.compute_ns + totals.comm_ns - totals.overlap_ns;

            // Steps: ranges of this rank, projected through correlation ids.
            std::vector<StepTruth> steps;
            for (const auto& r : t.ranges) {
                if (r.rank != d.rank) continue;
                StepTruth s{r.name, INT64_MAX, INT64_MIN, {}};
                for (const auto& api : t.apis)
                    if (api.rank == d.rank && api.start >= r.start && api.start < r.end) s.corrs.push_back(api.corr);
                for (const auto& e : d.events)
                    if (e.end > e.start && e.corr && std::count(s.corrs.begin(), s.corrs.end(), e.corr)) {
                        s.start = std::min(s.start, e.start);
                        s.end = std::max(s.end, e.end);
                    }
                if (s.start < s.end) steps.push_back(s);
            }
            ASSERT_EQ(got.steps.size(), steps.size()) << where;
            stepsChecked += steps.size();
            for (size_t s = 0; s < steps.size(); ++s) {
                EXPECT_EQ(got.steps[s].name, steps[s].name) << where;
                EXPECT_EQ(got.steps[s].start_ns, steps[s].start) << where;
                EXPECT_EQ(got.steps[s].end_ns, steps[s].end) << where;
                expectMetrics(got.steps[s].metrics, bruteMetrics(cells, steps[s].start, steps[s].end),
                              where + " step " + std::to_string(s));
            }

            // Operations: communication kernels and copies, start-sorted, kernels first on ties.
            std::vector<const Ev*> ops;
            for (const auto& e : d.events)
                if (!e.isMemset && categoryOf(e, t.settings) == kComm) ops.push_back(&e);
            std::stable_sort(ops.begin(), ops.end(), [](const Ev* x, const Ev* y) {
                if (x->start != y->start) return x->start < y->start;
                return x->isKernel && !y->isKernel;
            });
            ASSERT_EQ(got.collectives.size(), ops.size()) << where;
            std::vector<TimeNs> bestExposed(steps.size(), 0);
            for (size_t i = 0; i < ops.size(); ++i) {
                const Ev& e = *ops[i];
                const CollectiveInstance& op = got.collectives[i];
                EXPECT_EQ(op.start_ns, e.start) << where;
                EXPECT_EQ(op.end_ns, e.end) << where;
                TimeNs overlapped = 0;
                for (TimeNs x = e.start; x < e.end; ++x) overlapped += cells.c[static_cast<size_t>(x)];
                EXPECT_EQ(op.duration_ns, std::max<TimeNs>(0, e.end - e.start)) << where;
                EXPECT_EQ(op.overlapped_ns, overlapped) << where;
                EXPECT_EQ(op.exposed_ns, op.duration_ns - overlapped) << where;
                // Step of the op: by launch correlation for kernels, else the
                // earliest-starting step window containing its start.
                int step = -1;
                if (e.isKernel) {
                    for (size_t s = 0; s < steps.size(); ++s)
                        if (e.corr && std::count(steps[s].corrs.begin(), steps[s].corrs.end(), e.corr))
                            step = static_cast<int>(s);
                } else {
                    for (size_t s = 0; s < steps.size(); ++s)
                        if (e.start >= steps[s].start && e.start < steps[s].end &&
                            (step < 0 || steps[s].start < steps[static_cast<size_t>(step)].start))
                            step = static_cast<int>(s);
                }
                EXPECT_EQ(op.step, step) << where << " op " << i;
                ++opsChecked;
                opsInSteps += step >= 0;
                if (step >= 0) {
                    const auto& w = steps[static_cast<size_t>(step)];
                    TimeNs exposed = 0;
                    for (TimeNs x = std::max(e.start, w.start); x < std::min(e.end, w.end); ++x)
                        exposed += !cells.c[static_cast<size_t>(x)];
                    bestExposed[static_cast<size_t>(step)] = std::max(bestExposed[static_cast<size_t>(step)], exposed);
                }
            }
            for (size_t s = 0; s < steps.size(); ++s) {
                const Bottleneck& bn = got.steps[s].bottleneck;
                EXPECT_EQ(bn.exposed_ns, bestExposed[s]) << where;
                EXPECT_EQ(bn.collective >= 0, bestExposed[s] > 0) << where;
                const TimeNs stepExposed = got.steps[s].metrics.exposed_comm_ns;
                EXPECT_EQ(bn.share.has_value(), stepExposed > 0) << where;
                if (stepExposed > 0) {
                    EXPECT_DOUBLE_EQ(*bn.share, double(bestExposed[s]) / double(stepExposed)) << where;
                }
                EXPECT_EQ(bn.communicationBound, got.steps[s].metrics.comm_ns > got.steps[s].metrics.compute_ns)
                    << where;
            }
        }
        sum.computeRatios(sumCM);
        expectMetrics(a.summary, sum, "round " + std::to_string(round) + " summary");
        if (::testing::Test::HasFailure()) break;
    }
    // The random traces must exercise what they claim to check.
    EXPECT_GT(stepsChecked, 200u);
    EXPECT_GT(opsChecked, 1000u);
    EXPECT_GT(opsInSteps, 200u);
}

}  // namespace
}  // namespace osc
