// The synthetic workload model on its own (no analyzer): bucket plans, the
// generated timeline against times worked out by hand, and the properties
// real captures have (correlation ids, step ranges, NCCL rows).
#include "analyzer/synth/generic_synth.h"
#include "analyzer/synth/workload_synth.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

using namespace osc;
using namespace osc::synth;

namespace {

constexpr uint64_t MiB = 1ull << 20;

std::string nameOf(const Capture& c, uint32_t id) { return std::string(c.strings.at(id)); }

bool isNccl(const Capture& c, uint32_t id) { return nameOf(c, id).rfind("nccl", 0) == 0; }

// Kernel indexes on a device, in start order, filtered.
template <typename Pred>
std::vector<size_t> kernelsWhere(const Device& d, Pred pred) {
    std::vector<size_t> out;
    for (size_t i = 0; i < d.kernels.size(); ++i)
        if (pred(i)) out.push_back(i);
    return out;
}

}  // namespace

TEST(SynthBuckets, DefaultsGiveThreeBucketsOfFourLayers) {
    const auto b = planBuckets(WorkloadSpec{});
    ASSERT_EQ(b.size(), 3u);
    EXPECT_EQ(b[0].firstLayer, 11);
    EXPECT_EQ(b[0].lastLayer, 8);
    EXPECT_EQ(b[1].lastLayer, 4);
    EXPECT_EQ(b[2].firstLayer, 3);
    EXPECT_EQ(b[2].lastLayer, 0);
    for (const auto& x : b) EXPECT_EQ(x.bytes, 32 * MiB);
}

TEST(SynthBuckets, LastBucketTakesTheRemainder) {
    WorkloadSpec s;
    s.layers = 5;
    s.gradBytesPerLayer = 10 * MiB;
    s.bucketMb = 25;
    const auto b = planBuckets(s);
    ASSERT_EQ(b.size(), 2u);
    EXPECT_EQ(b[0].bytes, 30 * MiB);  // 10, 20, 30 >= 25: layers 4, 3, 2
    EXPECT_EQ(b[0].lastLayer, 2);
    EXPECT_EQ(b[1].bytes, 20 * MiB);  // layers 1, 0
}

TEST(SynthSpec, CommTimeIsAlphaPlusBytesOverBandwidth) {
    WorkloadSpec s;
    s.alphaNs = 20'000;
    s.bandwidthGBps = 25;
    EXPECT_EQ(s.commNs(32 * MiB), 20'000 + 1'342'177);  // 33554432 / 25 = 1342177.28
    s.algoFactor = 1.5;                                 // 2(n-1)/n for n = 4
    EXPECT_EQ(s.commNs(1'000'000), 20'000 + 60'000);
}

TEST(SynthSpec, RejectsBadValues) {
    WorkloadSpec s;
    s.layers = 0;
    EXPECT_THROW(s.validate(), std::invalid_argument);
    s = WorkloadSpec{};
    s.jitter = 1.0;
    EXPECT_THROW(s.validate(), std::invalid_argument);
    s = WorkloadSpec{};
    s.bandwidthGBps = 0;
    EXPECT_THROW(s.validate(), std::invalid_argument);
    EXPECT_THROW(parseOverlapMode("overlapped"), std::invalid_argument);
    EXPECT_EQ(parseOverlapMode("per-param"), OverlapMode::PerParam);
}

TEST(SynthWorkload, BucketedTimelineMatchesHandWorkedTimes) {
    WorkloadSpec s;  // defaults: 12 layers, 0.5 ms forward, 1 ms backward, 3 buckets
    s.steps = 2;
    const Capture c = synthesizeWorkload(s);
    ASSERT_EQ(c.processes.size(), 1u);
    const auto& p = c.processes[0];
    ASSERT_EQ(p.devices.size(), 1u);
    const auto& d = p.devices[0];
    EXPECT_EQ(d.kernels.size(), 2u * (24 + 3));
    const TimeNs comm = 1'362'177;
    // Step 0 starts at 1 ms: forward 6 ms, buckets close after 4, 8, 12 ms of backward.
    const auto nccl = kernelsWhere(d, [&](size_t i) { return isNccl(c, d.kernels.name[i]); });
    ASSERT_EQ(nccl.size(), 6u);
    const TimeNs t0 = 1'000'000;
    const TimeNs expectStart[3] = {t0 + 10'000'000, t0 + 14'000'000, t0 + 18'000'000};
    for (int b = 0; b < 3; ++b) {
        EXPECT_EQ(d.kernels.start[nccl[b]], expectStart[b]) << b;
        EXPECT_EQ(d.kernels.end[nccl[b]], expectStart[b] + comm) << b;
        EXPECT_EQ(d.kernels.stream[nccl[b]], kCommStream);
    }
    // Step 1 starts after the last all-reduce and the 0.1 ms gap.
    const TimeNs t1 = t0 + 18'000'000 + comm + 100'000;
    EXPECT_EQ(d.kernels.start[nccl[3]], t1 + 10'000'000);
    const auto compute = kernelsWhere(d, [&](size_t i) { return !isNccl(c, d.kernels.name[i]); });
    ASSERT_EQ(compute.size(), 48u);
    EXPECT_EQ(d.kernels.start[compute[24]], t1);
    for (size_t i : compute) EXPECT_EQ(d.kernels.stream[i], kComputeStream);
}

TEST(SynthWorkload, SequentialIssuesAllBucketsAfterBackward) {
    WorkloadSpec s;
    s.mode = OverlapMode::Sequential;
    s.steps = 1;
    const Capture c = synthesizeWorkload(s);
    const auto& d = c.processes[0].devices[0];
    const auto nccl = kernelsWhere(d, [&](size_t i) { return isNccl(c, d.kernels.name[i]); });
    ASSERT_EQ(nccl.size(), 3u);
    TimeNs lastCompute = 0;
    for (size_t i = 0; i < d.kernels.size(); ++i)
        if (!isNccl(c, d.kernels.name[i])) lastCompute = std::max(lastCompute, d.kernels.end[i]);
    EXPECT_EQ(lastCompute, 1'000'000 + 18'000'000);
    EXPECT_EQ(d.kernels.start[nccl[0]], lastCompute);
    EXPECT_EQ(d.kernels.start[nccl[1]], d.kernels.end[nccl[0]]);
    EXPECT_EQ(d.kernels.start[nccl[2]], d.kernels.end[nccl[1]]);
}

TEST(SynthWorkload, PerParamReducesEveryLayer) {
    WorkloadSpec s;
    s.mode = OverlapMode::PerParam;
    s.steps = 1;
    const Capture c = synthesizeWorkload(s);
    const auto& d = c.processes[0].devices[0];
    const auto nccl = kernelsWhere(d, [&](size_t i) { return isNccl(c, d.kernels.name[i]); });
    ASSERT_EQ(nccl.size(), 12u);
    const auto& coll = c.processes[0].collectives;
    ASSERT_EQ(coll.size(), 12u);
    for (size_t i = 0; i < coll.size(); ++i) {
        EXPECT_EQ(coll.bytes[i], 8 * MiB);
        EXPECT_EQ(coll.count[i], 2 * MiB);  // f32
    }
    // Each all-reduce starts right when its layer's backward ends: 355544 ns < 1 ms, no queueing.
    for (int l = 0; l < 12; ++l)
        EXPECT_EQ(d.kernels.start[nccl[static_cast<size_t>(l)]], 1'000'000 + 6'000'000 + (l + 1) * 1'000'000);
}

TEST(SynthWorkload, CommOnComputeStreamSerializes) {
    WorkloadSpec s;
    s.commOnComputeStream = true;
    s.steps = 2;
    const Capture c = synthesizeWorkload(s);
    const auto& d = c.processes[0].devices[0];
    for (size_t i = 0; i < d.kernels.size(); ++i) EXPECT_EQ(d.kernels.stream[i], kComputeStream);
    for (size_t i = 1; i < d.kernels.size(); ++i) EXPECT_GE(d.kernels.start[i], d.kernels.end[i - 1]);
}

TEST(SynthWorkload, HostSideLooksLikeARealCapture) {
    WorkloadSpec s;
    s.steps = 3;
    s.optimizerNs = 300'000;
    const Capture c = synthesizeWorkload(s);
    const auto& p = c.processes[0];
    const auto& d = p.devices[0];
    ASSERT_EQ(p.ranges.size(), 3u);
    ASSERT_EQ(p.apiCalls.size(), d.kernels.size());
    std::map<uint32_t, size_t> callOf;
    for (size_t i = 0; i < p.apiCalls.size(); ++i) callOf[p.apiCalls.correlation[i]] = i;
    ASSERT_EQ(callOf.size(), d.kernels.size());  // unique correlation ids
    // Every kernel's launch call lies inside exactly one step range, and that
    // range's GPU work starts after the previous range's work ended.
    std::vector<TimeNs> firstStart(3, INT64_MAX), lastEnd(3, 0);
    for (size_t k = 0; k < d.kernels.size(); ++k) {
        const auto it = callOf.find(d.kernels.correlation[k]);
        ASSERT_NE(it, callOf.end());
        const TimeNs t = p.apiCalls.start[it->second];
        int in = -1;
        for (size_t r = 0; r < 3; ++r)
            if (t >= p.ranges.start[r] && p.apiCalls.end[it->second] <= p.ranges.end[r]) in = static_cast<int>(r);
        ASSERT_GE(in, 0);
        EXPECT_EQ(nameOf(c, p.ranges.name[static_cast<size_t>(in)]), "step " + std::to_string(in));
        firstStart[static_cast<size_t>(in)] = std::min(firstStart[static_cast<size_t>(in)], d.kernels.start[k]);
        lastEnd[static_cast<size_t>(in)] = std::max(lastEnd[static_cast<size_t>(in)], d.kernels.end[k]);
        const std::string api = nameOf(c, p.apiCalls.name[it->second]);
        EXPECT_EQ(api, isNccl(c, d.kernels.name[k]) ? "cuLaunchKernelEx" : "cudaLaunchKernel_v7000");
    }
    for (size_t r = 0; r + 1 < 3; ++r) {
        EXPECT_LE(p.ranges.end[r], p.ranges.start[r + 1]);
        EXPECT_EQ(firstStart[r + 1], lastEnd[r] + 100'000);  // the step gap
    }
    // The optimizer runs after the last all-reduce of its step.
    EXPECT_EQ(nameOf(c, d.kernels.name[d.kernels.size() - 1]), "multi_tensor_apply_kernel");
    // NCCL plugin rows: one per collective, numbered in order.
    const auto& coll = p.collectives;
    ASSERT_EQ(coll.size(), 9u);
    for (size_t i = 0; i < coll.size(); ++i) {
        EXPECT_EQ(coll.seqNumber[i], i);
        EXPECT_EQ(coll.commHash[i], kCommHash);
        EXPECT_EQ(nameOf(c, coll.func[i]), "AllReduce");
        EXPECT_GE(coll.gpuStart[i], coll.enqueue[i]);
    }
}

TEST(SynthWorkload, RanksFinishEachCollectiveTogether) {
    WorkloadSpec s;
    s.ranks = 4;
    s.steps = 2;
    s.jitter = 0.1;
    s.seed = 7;
    const Capture c = synthesizeWorkload(s);
    ASSERT_EQ(c.processes.size(), 4u);
    std::map<uint64_t, std::set<TimeNs>> ends, starts;
    for (const auto& p : c.processes) {
        EXPECT_EQ(p.worldSize, 4);
        EXPECT_EQ(p.pid, 4000 + p.rank);
        ASSERT_EQ(p.devices.size(), 1u);
        EXPECT_EQ(p.devices[0].id, static_cast<uint32_t>(p.rank));
        for (size_t i = 0; i < p.collectives.size(); ++i) {
            ends[p.collectives.seqNumber[i]].insert(p.collectives.gpuEnd[i]);
            starts[p.collectives.seqNumber[i]].insert(p.collectives.gpuStart[i]);
        }
    }
    ASSERT_EQ(ends.size(), 6u);
    size_t skewed = 0;
    for (const auto& [seq, e] : ends) {
        EXPECT_EQ(e.size(), 1u) << seq;  // all ranks end together
        if (starts[seq].size() > 1) ++skewed;
    }
    EXPECT_GT(skewed, 0u);  // jitter makes ranks arrive at different times
    EXPECT_EQ(rankFileName("h", 4002, 2), "h-4002-rank2.sqlite");
}

TEST(SynthWorkload, SeedMakesJitterReproducible) {
    WorkloadSpec s;
    s.jitter = 0.2;
    s.seed = 3;
    const auto a = synthesizeWorkload(s), b = synthesizeWorkload(s);
    s.seed = 4;
    const auto other = synthesizeWorkload(s);
    EXPECT_EQ(a.processes[0].devices[0].kernels.end, b.processes[0].devices[0].kernels.end);
    EXPECT_NE(a.processes[0].devices[0].kernels.end, other.processes[0].devices[0].kernels.end);
    // Durations stay within the jitter band.
    const auto& k = a.processes[0].devices[0].kernels;
    for (size_t i = 0; i < k.size(); ++i) {
        if (nameOf(a, k.name[i]) != "ampere_sgemm_128x64_nt") continue;
        EXPECT_GE(k.end[i] - k.start[i], 800'000);
        EXPECT_LE(k.end[i] - k.start[i], 1'200'000);
    }
}

TEST(SynthGeneric, KernelsSpreadOverStreamsInStartOrder) {
    GenericSpec g;
    g.kernels = 10'000;
    g.streams = 8;
    const Capture c = synthesizeGeneric(g);
    const auto& d = c.processes[0].devices[0];
    ASSERT_EQ(d.kernels.size(), 10'000u);
    std::map<uint32_t, TimeNs> lastEnd;
    std::set<uint32_t> ncclStreams;
    for (size_t i = 0; i < d.kernels.size(); ++i) {
        if (i) {
            EXPECT_LE(d.kernels.start[i - 1], d.kernels.start[i]);
        }
        EXPECT_LT(d.kernels.start[i], d.kernels.end[i]);
        const uint32_t s = d.kernels.stream[i];
        EXPECT_GE(d.kernels.start[i], lastEnd[s]);  // a stream runs one kernel at a time
        lastEnd[s] = d.kernels.end[i];
        if (isNccl(c, d.kernels.name[i])) ncclStreams.insert(s);
    }
    EXPECT_EQ(lastEnd.size(), 8u);
    EXPECT_EQ(ncclStreams, std::set<uint32_t>{kComputeStream + 7});
}
