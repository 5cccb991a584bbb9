// docs/design.md 4d against a brute force: bus bandwidth (per operation,
// the device's medians per collective and size class, the busy/idle-link
// split of exposed time) and why the last rank was late (each straggler's
// sums and its worst arrival, with the kernels and host ranges named), on
// random jobs. Time is cut into 1 ns cells: transfer times, lead-ups, idle
// time and which host range covered each idle instant are counted cell by
// cell from the events as generated; nothing here shares code with
// bandwidth_pass.cpp, lead_up.cpp or straggler_pass.cpp. The same jobs are
// also written as an Nsight Systems export (no plugin rows: no bytes), as one
// with NCCL's NVTX payloads instead (bytes and communicator sizes from NCCL's
// own ranges, each round in another payload layout) and as PyTorch profiler
// traces (one per rank: the sizes on the kernels) and read back, so that each
// input format is held to the same brute force.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/export/chrome_export.h"
#include "analyzer/load/load_capture.h"
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
#include <set>
#include <sstream>

namespace osc {
namespace {

// Steps begin at kFirstStepNs, and every rank marks time 0 with a range: its
// PyTorch trace, which starts at its first event, keeps the job's time 0.
constexpr TimeNs kStepNs = 1200, kFirstStepNs = 500, kCells = 6500;
const char* kCompute[] = {"gemm_a", "gemm_b", "layernorm"};
const char* kHostNames[] = {"DataLoader.__next__", "forward", "h2d_copy"};
const char* kGpus[] = {"NVIDIA H100 80GB HBM3", "NVIDIA A100-PCIE-40GB", "Mystery GPU 9000"};
const double kPeaks[] = {450, 32, 0};  // the documented table's; 0: unknown

struct Kern {
    TimeNs start, end;
    int name;  // into kCompute
    int step;  // launched in this step's range
};
struct Op {
    std::string coll;
    TimeNs start, end;
    uint64_t bytes;
    int step;
    int key;  // the group it belongs to, -1 matched on no other rank
};
struct HostRange {
    TimeNs start, end;
    std::string name;
};
struct Dev {
    std::vector<Kern> compute;
    std::vector<Op> ops;
    std::vector<HostRange> host;  // launch calls and non-step NVTX ranges
};
struct Job {
    testing::TraceBuilder b;
    std::vector<Dev> devs;
    int gpu = 0;
    int groups = 0;
    std::vector<std::string> groupColl;
};

std::string kernelOf(const std::string& coll) { return "ncclDevKernel_" + coll + "_Sum_f32_RING_LL"; }

Job makeJob(std::mt19937& rng) {
    Job j;
    const auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const int ranks = U(2, 5), steps = U(1, 3);
    j.gpu = U(0, 2);
    j.devs.resize(static_cast<size_t>(ranks));
    const bool twoHosts = U(0, 3) == 0;
    std::vector<TimeNs> cursor(static_cast<size_t>(ranks)), commFree(static_cast<size_t>(ranks), 0);
    std::vector<std::map<std::string, uint64_t>> seq(static_cast<size_t>(ranks));
    uint32_t corr = 1;
    // One thread launches one kernel at a time, and NCCL's kernels in the
    // order they run (an export's NCCL ranges number the calls by launch):
    // an NCCL range then holds its own launch alone, in kernel order.
    std::vector<std::set<TimeNs>> launchedAt(static_cast<size_t>(ranks));
    std::vector<TimeNs> lastNcclAt(static_cast<size_t>(ranks), 0);
    const auto launch = [&](int r, int step, const std::string& name, TimeNs s, TimeNs e, uint32_t stream) {
        const uint32_t c = corr++;
        TimeNs at = kFirstStepNs + step * kStepNs + U(1, 1000);
        const bool nccl = name.starts_with("nccl");
        if (nccl) at = std::max(at, lastNcclAt[static_cast<size_t>(r)] + 1);
        while (!launchedAt[static_cast<size_t>(r)].insert(at).second) ++at;
        if (nccl) lastNcclAt[static_cast<size_t>(r)] = at;
        const TimeNs len = U(1, 6);
        j.b.api(r, at, at + len, c);
        j.devs[static_cast<size_t>(r)].host.push_back({at, at + len, "cudaLaunchKernel"});
        j.b.kernel(r, 0, name, s, e, stream, c);
    };
    for (int r = 0; r < ranks; ++r) {
        j.b.range(r, "init", 0, 10);
        j.b.process(r).host = twoHosts ? "node" + std::to_string(r % 2) : "node";
        j.b.device(r, 0).gpu.name = kGpus[j.gpu];
    }
    for (int s = 0; s < steps; ++s) {
        const TimeNs base = kFirstStepNs + s * kStepNs;
        for (int r = 0; r < ranks; ++r) {
            j.b.range(r, "ProfilerStep#" + std::to_string(s), base, base + 1100);
            for (int h = U(0, 3); h > 0; --h) {
                const TimeNs at = base - 150 + U(0, 1100), len = U(5, 300);
                const std::string name = kHostNames[U(0, 2)];
                j.b.range(r, name, at, at + len);
                j.devs[static_cast<size_t>(r)].host.push_back({at, at + len, name});
            }
            // The GPU starts the step at its own moment, after an idle stretch.
            cursor[static_cast<size_t>(r)] = std::max(cursor[static_cast<size_t>(r)], base) + U(20, 200);
        }
        for (int k = U(1, 3); k > 0; --k) {
            const std::string coll = std::vector<std::string>{"AllReduce", "AllGather", "ReduceScatter"}[U(0, 2)];
            const uint64_t bytes = static_cast<uint64_t>(U(1, 64)) << 10;
            std::vector<TimeNs> start(static_cast<size_t>(ranks));
            for (int r = 0; r < ranks; ++r) {
                Dev& d = j.devs[static_cast<size_t>(r)];
                TimeNs& at = cursor[static_cast<size_t>(r)];
                for (int n = U(1, 3); n > 0; --n) {
                    const Kern kern{at, at + U(5, 60), U(0, 2), s};
                    d.compute.push_back(kern);
                    launch(r, s, kCompute[kern.name], kern.start, kern.end, 7);
                    at = kern.end + U(0, 25);
                }
                start[static_cast<size_t>(r)] = std::max(at + U(0, 10), commFree[static_cast<size_t>(r)]);
            }
            const TimeNs last = *std::max_element(start.begin(), start.end()), transfer = U(1, 80);
            for (int r = 0; r < ranks; ++r) {
                const TimeNs end = last + transfer + U(0, 3);
                const Op op{coll, start[static_cast<size_t>(r)], end, bytes, s, j.groups};
                j.devs[static_cast<size_t>(r)].ops.push_back(op);
                launch(r, s, kernelOf(coll), op.start, op.end, 13);
                j.b.pluginRow(r, 0, 0xC0FFEE, seq[static_cast<size_t>(r)][coll]++, coll, bytes, -1, op.start, op.end);
                j.b.process(r).collectives.nranks.back() = ranks;
                commFree[static_cast<size_t>(r)] = end;
            }
            j.groupColl.push_back(coll);
            ++j.groups;
        }
        // Compute after the step's collectives, overlapping the last one.
        for (int r = 0; r < ranks; ++r)
            for (int n = U(0, 2); n > 0; --n) {
                TimeNs& at = cursor[static_cast<size_t>(r)];
                const Kern kern{at, at + U(5, 40), U(0, 2), s};
                j.devs[static_cast<size_t>(r)].compute.push_back(kern);
                launch(r, s, kCompute[kern.name], kern.start, kern.end, 7);
                at = kern.end;
            }
    }
    // A collective only rank 0 ran, after everything else: matched with nothing.
    if (U(0, 2) == 0) {
        Dev& d = j.devs[0];
        const TimeNs s = std::max(cursor[0], commFree[0]) + U(0, 30);
        const Op op{"Broadcast", s, s + U(1, 50), static_cast<uint64_t>(U(1, 8)) << 10, steps - 1, -1};
        d.ops.push_back(op);
        launch(0, steps - 1, kernelOf("Broadcast"), op.start, op.end, 13);
        j.b.pluginRow(0, 0, 0xC0FFEE, 0, "Broadcast", op.bytes, -1, op.start, op.end);
        j.b.process(0).collectives.nranks.back() = ranks;
    }
    j.b.finalized();
    return j;
}

enum class Format { Memory, Nsys, NsysPayloads, Pytorch };

// Each round's export holds NCCL's payloads in one of the layouts the reader
// takes, in turn.
test::PayloadLayout layoutOf(int round) {
    using test::ncclpayload::Encoding;
    using test::ncclpayload::Nccl;
    const test::PayloadLayout layouts[] = {{Nccl::V2_25, Encoding::HeaderedBlob}, {Nccl::V2_25, Encoding::BareBlob},
                                           {Nccl::V2_25, Encoding::Json},         {Nccl::V2_16, Encoding::HeaderedBlob},
                                           {Nccl::V2_16, Encoding::BareBlob},     {Nccl::V2_16, Encoding::Json}};
    return layouts[round % 6];
}

Capture reread(const Capture& c, Format format, const std::filesystem::path& dir, int round) {
    std::vector<std::string> files;
    if (format == Format::Nsys || format == Format::NsysPayloads) {
        std::vector<size_t> all(c.processes.size());
        for (size_t p = 0; p < all.size(); ++p) all[p] = p;
        files.push_back((dir / "node.sqlite").string());
        std::filesystem::remove(files.back());
        const auto payloads = format == Format::NsysPayloads ? std::optional(layoutOf(round)) : std::nullopt;
        test::NsysShapedWriter(files.back(), payloads).write(c, all, /*mergeDevices=*/false, /*shift=*/0);
    } else {
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

double factorOf(const std::string& coll, int n) {
    if (coll == "AllReduce") return 2.0 * (n - 1) / n;
    if (coll == "AllGather" || coll == "ReduceScatter") return double(n - 1) / n;
    return 1.0;
}

std::optional<double> lowerMedian(std::vector<double> v) {
    if (v.empty()) return std::nullopt;
    std::sort(v.begin(), v.end());
    return v[(v.size() - 1) / 2];
}

uint64_t pow2Floor(uint64_t b) {
    uint64_t c = 1;
    while (c * 2 <= b) c *= 2;
    return c;
}

void expectNear(const std::optional<double>& got, const std::optional<double>& want, const std::string& where) {
    ASSERT_EQ(got.has_value(), want.has_value()) << where;
    if (want) {
        EXPECT_NEAR(*got, *want, 1e-9 * std::max(1.0, std::abs(*want))) << where;
    }
}

// The lead-up of an operation on one device, counted cell by cell.
struct Lead {
    TimeNs from = 0, compute = 0, idle = 0;
    std::map<std::string, TimeNs> kernels, host;
};

Lead leadOf(const Dev& d, const Op& op) {
    std::vector<char> compute(kCells), busy(kCells);
    for (const auto& k : d.compute)
        for (TimeNs t = k.start; t < k.end; ++t) compute[size_t(t)] = busy[size_t(t)] = 1;
    for (const auto& o : d.ops)
        for (TimeNs t = o.start; t < o.end; ++t) busy[size_t(t)] = 1;
    // The step's GPU window: the earliest of the work it launched.
    TimeNs w = INT64_MAX;
    for (const auto& k : d.compute)
        if (k.step == op.step) w = std::min(w, k.start);
    for (const auto& o : d.ops)
        if (o.step == op.step) w = std::min(w, o.start);
    Lead l;
    TimeNs t = w - 1;
    while (t >= 0 && !busy[size_t(t)]) --t;
    l.from = t < 0 ? w : t + 1;
    for (TimeNs x = l.from; x < op.start; ++x) {
        l.compute += compute[size_t(x)];
        if (busy[size_t(x)]) continue;
        ++l.idle;
        const HostRange* best = nullptr;
        for (const auto& h : d.host) {
            if (h.start > x || h.end <= x) continue;
            if (!best || h.start > best->start || (h.start == best->start && h.end < best->end) ||
                (h.start == best->start && h.end == best->end && h.name < best->name))
                best = &h;
        }
        ++l.host[best ? best->name : ""];
    }
    for (const auto& k : d.compute) {
        const TimeNs a = std::max(k.start, l.from), b = std::min(k.end, op.start);
        if (b > a) l.kernels[kCompute[k.name]] += b - a;
    }
    return l;
}

std::vector<NamedTime> longer(const std::map<std::string, TimeNs>& mine, const std::map<std::string, TimeNs>& theirs) {
    std::vector<NamedTime> out;
    for (const auto& [name, ns] : mine) {
        const auto it = theirs.find(name);
        const TimeNs d = ns - (it == theirs.end() ? 0 : it->second);
        if (d > 0) out.push_back({name, d});
    }
    std::sort(out.begin(), out.end(),
              [](const NamedTime& a, const NamedTime& b) { return a.ns != b.ns ? a.ns > b.ns : a.name < b.name; });
    if (out.size() > 3) out.resize(3);
    return out;
}

void expectNames(const std::vector<NamedTime>& got, const std::vector<NamedTime>& want, const std::string& where) {
    ASSERT_EQ(got.size(), want.size()) << where;
    for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(got[i].name, want[i].name) << where << " #" << i;
        EXPECT_EQ(got[i].ns, want[i].ns) << where << " #" << i;
    }
}

class CollectiveHealthBruteForce : public ::testing::TestWithParam<Format> {};

TEST_P(CollectiveHealthBruteForce, RandomJobsMatchCellCounts) {
    std::mt19937 rng(4242);
    const testsupport::TempDir dir;
    ASSERT_FALSE(dir.path().empty());
    const Format format = GetParam();
    const int rounds = format == Format::Memory ? 250 : 50;
    AnalysisSettings settings;
    settings.stragglerLateNs = 40;
    size_t opsMeasured = 0, busyLink = 0, idleLink = 0, stragglers = 0, hostNamed = 0, kernelsNamed = 0;
    for (int round = 0; round < rounds; ++round) {
        Job job = makeJob(rng);
        const Capture read = format == Format::Memory ? Capture{} : reread(job.b.capture, format, dir.path(), round);
        const Analysis whole = analyze(format == Format::Memory ? job.b.capture : read, settings);
        const size_t n = job.devs.size();
        ASSERT_EQ(whole.devices.size(), n);
        std::vector<const DeviceAnalysis*> dev(n);
        for (const auto& d : whole.devices) dev[static_cast<size_t>(d.rank)] = &d;
        // Plain nsys exports carry no plugin rows; NCCL's payloads give bytes and sizes.
        const bool bytesKnown = format != Format::Nsys;
        const double peak = kPeaks[job.gpu];
        bool multiHost = false;
        for (size_t d = 1; d < n; ++d) multiHost |= dev[d]->host != dev[0]->host;

        // Groups: last arrival, second latest, the median rank.
        struct Group {
            TimeNs first = INT64_MAX, last = INT64_MIN, second = INT64_MIN;
            int lastDevice = -1, atLast = 0, median = -1;
            std::vector<std::pair<TimeNs, int>> arrivals;
        };
        std::vector<Group> groups(static_cast<size_t>(job.groups));
        for (size_t d = 0; d < n; ++d)
            for (const auto& op : job.devs[d].ops) {
                if (op.key < 0) continue;
                Group& g = groups[static_cast<size_t>(op.key)];
                g.arrivals.emplace_back(op.start, static_cast<int>(d));
            }
        for (auto& g : groups) {
            std::sort(g.arrivals.begin(), g.arrivals.end());
            g.first = g.arrivals.front().first;
            g.last = g.arrivals.back().first;
            g.second = g.arrivals[g.arrivals.size() - 2].first;
            g.lastDevice = g.arrivals.back().second;
            g.atLast = g.second == g.last ? 2 : 1;
            g.median = g.arrivals[(g.arrivals.size() - 1) / 2].second;
        }

        for (size_t d = 0; d < n; ++d) {
            const std::string where = "round " + std::to_string(round) + " rank " + std::to_string(d);
            const Dev& mine = job.devs[d];
            const DeviceAnalysis& got = *dev[d];
            ASSERT_EQ(got.collectives.size(), mine.ops.size()) << where;
            ASSERT_TRUE(got.busbw.has_value()) << where;
            EXPECT_EQ(got.busbw->peak_busbw_gbps, peak > 0 ? std::optional<double>(peak) : std::nullopt) << where;

            // Bus bandwidth per operation.
            std::vector<char> compute(kCells);
            for (const auto& k : mine.compute)
                for (TimeNs t = k.start; t < k.end; ++t) compute[size_t(t)] = 1;
            std::vector<double> algbw, busbw, fraction;
            std::map<std::pair<std::string, uint64_t>, std::vector<double>> classAlg;
            TimeNs busyExposed = 0, idleExposed = 0;
            std::vector<TimeNs> stepBusy(3, 0), stepIdle(3, 0);
            for (size_t i = 0; i < mine.ops.size(); ++i) {
                const Op& op = mine.ops[i];
                const CollectiveInstance& c = got.collectives[i];
                const std::string at = where + " op " + std::to_string(i);
                ASSERT_EQ(c.start_ns, op.start) << at;
                const bool matched = op.key >= 0;
                const TimeNs t = matched ? op.end - std::max(op.start, groups[size_t(op.key)].last) : op.end - op.start;
                const uint64_t B = op.coll == "AllGather" || op.coll == "ReduceScatter" ? op.bytes * n : op.bytes;
                std::optional<double> alg, bus, frac;
                if (bytesKnown && t > 0) {
                    alg = double(B) / double(t);
                    bus = *alg * factorOf(op.coll, static_cast<int>(n));
                    // No fraction past twice the link's peak (docs/design.md 4d).
                    if (peak > 0 && !(matched && multiHost) && *bus <= 2 * peak) frac = *bus / peak;
                }
                expectNear(c.algbw_gbps, alg, at + " algbw");
                expectNear(c.busbw_gbps, bus, at + " busbw");
                expectNear(c.busbw_fraction, frac, at + " fraction");
                EXPECT_EQ(c.busbw_basis, !alg      ? BusBwBasis::None
                                         : matched ? BusBwBasis::Transfer
                                                   : BusBwBasis::Duration)
                    << at;
                if (!alg) continue;
                ++opsMeasured;
                algbw.push_back(*alg);
                busbw.push_back(*bus);
                classAlg[{op.coll, pow2Floor(B)}].push_back(*alg);
                if (!frac) continue;
                fraction.push_back(*frac);
                TimeNs exposed = 0;
                for (TimeNs x = op.start; x < op.end; ++x) exposed += !compute[size_t(x)];
                (*frac >= 0.8 ? busyExposed : idleExposed) += exposed;
                (*frac >= 0.8 ? stepBusy : stepIdle)[size_t(op.step)] += exposed;
            }
            const BusBandwidth& b = *got.busbw;
            EXPECT_EQ(b.measured, static_cast<int>(algbw.size())) << where;
            expectNear(b.median_algbw_gbps, lowerMedian(algbw), where + " median algbw");
            expectNear(b.median_busbw_gbps, lowerMedian(busbw), where + " median busbw");
            expectNear(b.median_busbw_fraction, lowerMedian(fraction), where + " median fraction");
            EXPECT_EQ(b.bandwidth_limit_exposed_ns, busyExposed) << where;
            EXPECT_EQ(b.schedule_limit_exposed_ns, idleExposed) << where;
            busyLink += busyExposed > 0;
            idleLink += idleExposed > 0;
            ASSERT_EQ(b.classes.size(), classAlg.size()) << where;
            size_t ci = 0;
            for (const auto& [key, values] : classAlg) {
                EXPECT_EQ(b.classes[ci].collective, key.first) << where;
                EXPECT_EQ(b.classes[ci].size_class, key.second) << where;
                EXPECT_EQ(b.classes[ci].count, static_cast<int>(values.size())) << where;
                expectNear(b.classes[ci].median_algbw_gbps, lowerMedian(values), where + " class");
                ++ci;
            }
            const auto findingOf = [](const std::vector<Finding>& f, FindingKind k) -> const Finding* {
                for (const auto& x : f)
                    if (x.kind == k) return &x;
                return nullptr;
            };
            const auto expectFinding = [&](const std::vector<Finding>& f, FindingKind k, TimeNs ns,
                                           const std::string& w) {
                const Finding* x = findingOf(f, k);
                ASSERT_EQ(x != nullptr, ns > 0) << w;
                if (x) {
                    EXPECT_EQ(x->exposed_ns, ns) << w;
                }
            };
            expectFinding(got.findings, FindingKind::BandwidthLimit, busyExposed, where + " busy-link finding");
            expectFinding(got.findings, FindingKind::ScheduleLimit, idleExposed, where + " idle-link finding");
            for (size_t s = 0; s < got.steps.size(); ++s) {
                expectFinding(got.steps[s].bottleneck.findings, FindingKind::BandwidthLimit, stepBusy[s],
                              where + " step busy-link finding");
                expectFinding(got.steps[s].bottleneck.findings, FindingKind::ScheduleLimit, stepIdle[s],
                              where + " step idle-link finding");
            }

            // Why it was late, over the groups it arrived at strictly last.
            int lateCount = 0;
            TimeNs lateSum = 0, startSum = 0, computeSum = 0, idleSum = 0, otherSum = 0;
            int worst = -1;
            TimeNs worstLate = 0;
            std::vector<int> order(groups.size());
            for (size_t g = 0; g < groups.size(); ++g) order[g] = static_cast<int>(g);
            // Matched order: first start, then the key (collective, its number).
            std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
                const Group &a = groups[size_t(x)], &c = groups[size_t(y)];
                if (a.first != c.first) return a.first < c.first;
                return job.groupColl[size_t(x)] < job.groupColl[size_t(y)];
            });
            const auto opOf = [&](size_t device, int key) -> const Op& {
                for (const auto& o : job.devs[device].ops)
                    if (o.key == key) return o;
                throw std::logic_error("no op");
            };
            for (int k : order) {
                const Group& g = groups[size_t(k)];
                if (g.atLast != 1 || g.lastDevice != static_cast<int>(d)) continue;
                const Op& op = opOf(d, k);
                const Op& med = opOf(size_t(g.median), k);
                const Lead a = leadOf(mine, op), m = leadOf(job.devs[size_t(g.median)], med);
                const TimeNs late = op.start - med.start;
                ++lateCount;
                lateSum += late;
                startSum += a.from - m.from;
                computeSum += a.compute - m.compute;
                idleSum += a.idle - m.idle;
                otherSum += late - (a.from - m.from) - (a.compute - m.compute) - (a.idle - m.idle);
                if (worst < 0 || late > worstLate) {
                    worst = k;
                    worstLate = late;
                }
            }
            if (lateCount == 0) {
                EXPECT_FALSE(got.straggler.has_value()) << where;
                EXPECT_EQ(findingOf(got.findings, FindingKind::Straggler), nullptr) << where;
                continue;
            }
            ++stragglers;
            ASSERT_TRUE(got.straggler.has_value()) << where;
            const StragglerMetrics& s = *got.straggler;
            EXPECT_EQ(s.late_arrivals, lateCount) << where;
            EXPECT_EQ(s.late_ns, lateSum) << where;
            EXPECT_EQ(s.late_start_ns, startSum) << where;
            EXPECT_EQ(s.compute_ns, computeSum) << where;
            EXPECT_EQ(s.host_idle_ns, idleSum) << where;
            EXPECT_EQ(s.other_ns, otherSum) << where;
            const Group& g = groups[size_t(worst)];
            const Op& op = opOf(d, worst);
            const Op& med = opOf(size_t(g.median), worst);
            const Lead a = leadOf(mine, op), m = leadOf(job.devs[size_t(g.median)], med);
            const LateArrival& w = s.worst;
            EXPECT_EQ(w.collective, op.coll) << where;
            EXPECT_EQ(got.collectives[size_t(w.collectiveIndex)].start_ns, op.start) << where;
            EXPECT_EQ(w.step, "ProfilerStep#" + std::to_string(op.step)) << where;
            EXPECT_EQ(w.medianDevice, g.median) << where;
            EXPECT_EQ(w.late_ns, op.start - med.start) << where;
            EXPECT_EQ(w.delay_ns, g.last - g.second) << where;
            EXPECT_EQ(w.late_start_ns, a.from - m.from) << where;
            EXPECT_EQ(w.compute_ns, a.compute - m.compute) << where;
            EXPECT_EQ(w.host_idle_ns, a.idle - m.idle) << where;
            EXPECT_EQ(w.other_ns, w.late_ns - (a.from - m.from) - (a.compute - m.compute) - (a.idle - m.idle)) << where;
            expectNames(w.kernels, longer(a.kernels, m.kernels), where + " kernels");
            expectNames(w.host, longer(a.host, m.host), where + " host");
            kernelsNamed += !w.kernels.empty();
            hostNamed += !w.host.empty() && !w.host[0].name.empty();
            const Finding* f = findingOf(got.findings, FindingKind::Straggler);
            ASSERT_EQ(f != nullptr, w.late_ns >= settings.stragglerLateNs) << where;
            if (f) {
                EXPECT_EQ(f->exposed_ns, w.delay_ns) << where;
                EXPECT_NE(f->message.find(op.coll + " #"), std::string::npos) << f->message;
            }
        }
        if (::testing::Test::HasFailure()) break;
    }
    // The jobs really exercised both links, stragglers and names.
    const size_t scale = static_cast<size_t>(rounds);
    EXPECT_GT(stragglers, scale);
    EXPECT_GT(kernelsNamed, scale / 4);
    EXPECT_GT(hostNamed, scale / 8);
    if (format != Format::Nsys) {
        EXPECT_GT(opsMeasured, 4 * scale);
        EXPECT_GT(busyLink, scale / 10);
        EXPECT_GT(idleLink, scale / 10);
    }
}

INSTANTIATE_TEST_SUITE_P(Formats, CollectiveHealthBruteForce,
                         ::testing::Values(Format::Memory, Format::Nsys, Format::NsysPayloads, Format::Pytorch),
                         [](const ::testing::TestParamInfo<Format>& param) {
                             return param.param == Format::Memory         ? std::string("InMemory")
                                    : param.param == Format::Nsys         ? std::string("NsightSystemsExport")
                                    : param.param == Format::NsysPayloads ? std::string("NsightSystemsNcclPayloads")
                                                                          : std::string("PytorchTraces");
                         });

}  // namespace
}  // namespace osc
