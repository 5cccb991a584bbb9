// Hand-built analyses for the report and check tests: the numbers are chosen
// so the expected words can be worked out by hand (see each test).
#pragma once

#include "analyzer/metrics/analysis.h"

#include <string>

namespace osc::fixture {

inline OverlapMetrics metrics(TimeNs window, TimeNs compute, TimeNs comm, TimeNs overlap, TimeNs busy) {
    OverlapMetrics m;
    m.window_ns = window;
    m.compute_ns = compute;
    m.comm_ns = comm;
    m.overlap_ns = overlap;
    m.exposed_comm_ns = comm - overlap;
    m.busy_ns = busy;
    m.idle_ns = window - busy;
    if (comm > 0) m.overlap_ratio = static_cast<double>(overlap) / static_cast<double>(comm);
    const TimeNs unionCM = compute + comm - overlap;
    if (unionCM > 0) m.achieved_speedup = static_cast<double>(compute + comm) / static_cast<double>(unionCM);
    const TimeNs mx = compute > comm ? compute : comm;
    if (mx > 0) m.ideal_speedup = static_cast<double>(compute + comm) / static_cast<double>(mx);
    return m;
}

inline CollectiveInstance allReduce(TimeNs start, TimeNs duration, TimeNs exposed, int step) {
    CollectiveInstance c;
    c.name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    c.collective = "AllReduce";
    c.datatype = "f32";
    c.start_ns = start;
    c.end_ns = start + duration;
    c.stream = 13;
    c.duration_ns = duration;
    c.exposed_ns = exposed;
    c.overlapped_ns = duration - exposed;
    c.bytes = 32ull << 20;
    c.bandwidth_gbps = static_cast<double>(*c.bytes) / static_cast<double>(duration);
    c.commHash = 0xabcdef0123456789ull;
    c.seqNumber = static_cast<uint64_t>(start / 1000);
    c.algo = "RING";
    c.proto = "SIMPLE";
    c.step = step;
    return c;
}

// One device: 37.5 ms of communication of which 23.3 ms hidden (62%), 14.2 ms
// exposed, 50 ms compute (compute-bound). Two steps, two collectives each;
// the second collective of each step ("bucket #1") is exposed 2.0 + 1.1 =
// 3.1 ms in total, more than bucket #0's 1.0 + 0.5 ms: 3.1 / 14.2 = 22%.
inline Analysis oneDeviceAnalysis() {
    Analysis a;
    DeviceAnalysis d;
    d.rank = 0;
    d.host = "node";
    d.pid = 100;
    d.device = 0;
    d.totals = metrics(60'000'000, 50'000'000, 37'500'000, 23'300'000, 58'000'000);
    d.collectives = {allReduce(1'000'000, 5'000'000, 1'000'000, 0), allReduce(8'000'000, 4'000'000, 2'000'000, 0),
                     allReduce(31'000'000, 5'000'000, 500'000, 1), allReduce(38'000'000, 4'000'000, 1'100'000, 1)};
    StepAnalysis s0;
    s0.name = "step 0";
    s0.start_ns = 0;
    s0.end_ns = 30'000'000;
    s0.metrics = metrics(30'000'000, 25'000'000, 9'000'000, 6'000'000, 29'000'000);
    s0.bottleneck.collective = 1;
    s0.bottleneck.exposed_ns = 2'000'000;
    s0.bottleneck.share = 2.0 / 3.0;
    s0.bottleneck.findings.push_back(
        Finding{FindingKind::CommAfterLastCompute, "bucket issued after the last compute kernel", 2'000'000});
    StepAnalysis s1 = s0;
    s1.name = "step 1";
    s1.start_ns = 30'000'000;
    s1.end_ns = 60'000'000;
    s1.bottleneck.collective = 3;
    s1.bottleneck.exposed_ns = 1'100'000;
    s1.bottleneck.share = 1.1 / 1.6;
    d.steps = {s0, s1};
    a.devices.push_back(d);
    a.summary = d.totals;
    return a;
}

// Two ranks; rank 1 has no communication at all (null ratio).
inline Analysis twoDeviceAnalysis() {
    Analysis a = oneDeviceAnalysis();
    DeviceAnalysis d;
    d.rank = 1;
    d.host = "node";
    d.pid = 101;
    d.device = 1;
    d.totals = metrics(60'000'000, 40'000'000, 0, 0, 40'000'000);
    a.devices.push_back(d);
    a.summary = metrics(120'000'000, 90'000'000, 37'500'000, 23'300'000, 98'000'000);
    MatchedCollective m;
    m.collective = "AllReduce";
    m.commHash = 0xabcdef0123456789ull;
    m.seqNumber = 7;
    m.instances = {{0, 1}, {1, 0}};
    m.skew_ns = 250'000;
    m.transfer_ns = 3'000'000;
    a.matched.push_back(m);
    a.total_skew_ns = 250'000;
    RankSpread sp;
    sp.step_time_min_ns = 29'000'000;
    sp.step_time_median_ns = 30'000'000;
    sp.step_time_max_ns = 31'000'000;
    sp.overlap_ratio_min = 0.5;
    sp.overlap_ratio_median = 0.6;
    sp.overlap_ratio_max = 0.7;
    a.spread = sp;
    return a;
}

}  // namespace osc::fixture
