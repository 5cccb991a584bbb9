#include "analyzer/metrics/bottleneck.h"

#include <algorithm>
#include <cstdio>

namespace osc {

std::string findingDuration(TimeNs ns) {
    char buf[64];
    const double v = static_cast<double>(ns);
    if (ns >= 1'000'000'000 || ns <= -1'000'000'000)
        std::snprintf(buf, sizeof buf, "%.3f s", v / 1e9);
    else if (ns >= 1'000'000 || ns <= -1'000'000)
        std::snprintf(buf, sizeof buf, "%.3f ms", v / 1e6);
    else if (ns >= 1'000 || ns <= -1'000)
        std::snprintf(buf, sizeof buf, "%.1f us", v / 1e3);
    else
        std::snprintf(buf, sizeof buf, "%lld ns", static_cast<long long>(ns));
    return buf;
}

std::string findingDevice(const DeviceAnalysis& d) { return findingDevice(d.rank, d.host, d.pid, d.device); }

std::string findingDevice(int rank, const std::string& host, int64_t pid, uint32_t device) {
    const std::string gpu = " gpu " + std::to_string(device);
    if (rank >= 0) return "rank " + std::to_string(rank) + gpu;
    return (host.empty() ? "pid " : host + ":") + std::to_string(pid) + gpu;
}

std::string listInWords(const std::vector<std::string>& parts) {
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
    return out;
}

void addFinding(std::vector<Finding>& findings, Finding finding) {
    const auto at = std::upper_bound(findings.begin(), findings.end(), finding.exposed_ns,
                                     [](TimeNs v, const Finding& f) { return v > f.exposed_ns; });
    findings.insert(at, std::move(finding));
}

std::vector<uint32_t> computeStreamsOf(const Device& device, ActivityClassifier& classifier) {
    std::vector<uint32_t> streams;
    const auto& k = device.kernels;
    uint32_t last = kNoId;
    for (size_t i = 0; i < k.size(); ++i) {
        if (k.stream[i] == last) continue;  // consecutive kernels mostly share a stream
        if (classifier.kernel(kernelNameId(k, i)) != Category::Compute) continue;
        last = k.stream[i];
        if (std::find(streams.begin(), streams.end(), last) == streams.end()) streams.push_back(last);
    }
    std::sort(streams.begin(), streams.end());
    return streams;
}

TimeNs exposedWithin(const CollectiveInstance& op, Interval w, const DeviceCoverage& cov) {
    // Almost every operation lies inside its step: its own exposed time is the answer.
    if (op.start_ns >= w.start && op.end_ns <= w.end) return op.exposed_ns;
    const Interval part{std::max(op.start_ns, w.start), std::min(op.end_ns, w.end)};
    if (part.empty()) return 0;
    return part.length() - cov.compute.covered(part);
}

namespace {

void commOnComputeStream(const WindowContext& c, std::vector<Finding>& out) {
    int n = 0;
    TimeNs exposed = 0;
    std::vector<uint32_t> streams;
    for (size_t i : c.opIndices) {
        const auto& op = c.ops[i];
        if (op.kernelIndex == static_cast<size_t>(-1)) continue;
        if (!std::binary_search(c.computeStreams.begin(), c.computeStreams.end(), op.stream)) continue;
        ++n;
        exposed += exposedWithin(op, c.window, c.coverage);
        if (std::find(streams.begin(), streams.end(), op.stream) == streams.end()) streams.push_back(op.stream);
    }
    if (n == 0) return;
    std::string list;
    for (uint32_t s : streams) list += (list.empty() ? "" : ", ") + std::to_string(s);
    out.push_back({FindingKind::CommOnComputeStream,
                   std::to_string(n) + " communication kernel(s) run on stream(s) " + list +
                       ", which also run compute kernels, so they cannot overlap with it (" + findingDuration(exposed) +
                       " exposed); launch communication on a stream of its own.",
                   exposed});
}

void commAfterLastCompute(const WindowContext& c, std::vector<Finding>& out) {
    if (c.metrics.compute_ns == 0 || c.metrics.comm_ns == 0) return;
    // Last compute end and first communication start inside the window.
    const auto& C = c.coverage.compute.intervals();
    auto cEnd =
        std::lower_bound(C.begin(), C.end(), c.window.end, [](const Interval& i, TimeNs t) { return i.start < t; });
    if (cEnd == C.begin()) return;
    const TimeNs lastCompute = std::min(std::prev(cEnd)->end, c.window.end);
    const auto& M = c.coverage.comm.intervals();
    const size_t m = c.coverage.comm.firstEndingAfter(c.window.start);
    if (m >= M.size()) return;
    const TimeNs firstComm = std::max(M[m].start, c.window.start);
    if (firstComm < lastCompute) return;
    out.push_back({FindingKind::CommAfterLastCompute,
                   "Communication starts only after the last compute kernel has finished, so "
                   "nothing is left to hide it behind (" +
                       findingDuration(c.metrics.exposed_comm_ns) +
                       " exposed); issue collectives as soon as their inputs are ready (DDP "
                       "bucketing, FSDP prefetch).",
                   c.metrics.exposed_comm_ns});
}

void manySmallCollectives(const WindowContext& c, std::vector<Finding>& out) {
    int n = 0;
    TimeNs exposed = 0;
    for (size_t i : c.opIndices) {
        const auto& op = c.ops[i];
        const bool small =
            op.bytes ? *op.bytes < c.settings.smallCollectiveBytes : op.duration_ns < c.settings.smallCollectiveNs;
        if (!small) continue;
        ++n;
        exposed += exposedWithin(op, c.window, c.coverage);
    }
    if (n < c.settings.smallCollectiveCount) return;
    out.push_back({FindingKind::ManySmallCollectives,
                   std::to_string(n) + " small communication operations (under " +
                       std::to_string(c.settings.smallCollectiveBytes) + " bytes, or under " +
                       findingDuration(c.settings.smallCollectiveNs) +
                       " when the size is unknown) pay launch and latency costs each (" + findingDuration(exposed) +
                       " exposed); coalesce them (larger buckets, grouped calls).",
                   exposed});
}

void idleGaps(const WindowContext& c, std::vector<Finding>& out) {
    const auto& B = c.coverage.busy.intervals();
    size_t k = c.coverage.busy.firstEndingAfter(c.window.start);
    TimeNs cursor = c.window.start, total = 0, largest = 0, largestAt = 0;
    int n = 0;
    const auto gap = [&](TimeNs from, TimeNs to) {
        if (to - from < c.settings.idleGapNs || to <= from) return;
        ++n;
        total += to - from;
        if (to - from > largest) {
            largest = to - from;
            largestAt = from;
        }
    };
    for (; k < B.size() && B[k].start < c.window.end; ++k) {
        gap(cursor, B[k].start);
        cursor = std::max(cursor, B[k].end);
    }
    gap(cursor, c.window.end);
    if (n == 0) return;
    out.push_back({FindingKind::IdleGap,
                   std::to_string(n) + " idle gap(s) of at least " + findingDuration(c.settings.idleGapNs) +
                       " with no GPU activity, " + findingDuration(total) + " in all (largest " +
                       findingDuration(largest) + " at " + findingDuration(largestAt) +
                       "); the GPU waited for the host (data loading, synchronisation, launch).",
                   total, largestAt});
}

void communicationBound(const WindowContext& c, std::vector<Finding>& out) {
    const auto& m = c.metrics;
    if (m.comm_ns <= m.compute_ns) return;
    out.push_back({FindingKind::CommunicationBound,
                   "Communication (" + findingDuration(m.comm_ns) + ") exceeds compute (" +
                       findingDuration(m.compute_ns) + "): even perfect overlap leaves " +
                       findingDuration(m.comm_ns - m.compute_ns) +
                       " exposed; reduce the traffic (precision, sharding) or speed up the "
                       "interconnect.",
                   m.comm_ns - m.compute_ns});
}

}  // namespace

std::vector<Finding> explainWindow(const WindowContext& ctx) {
    std::vector<Finding> out;
    communicationBound(ctx, out);
    commOnComputeStream(ctx, out);
    commAfterLastCompute(ctx, out);
    manySmallCollectives(ctx, out);
    idleGaps(ctx, out);
    std::stable_sort(out.begin(), out.end(),
                     [](const Finding& a, const Finding& b) { return a.exposed_ns > b.exposed_ns; });
    return out;
}

Bottleneck bottleneckOf(const WindowContext& ctx) {
    Bottleneck b;
    for (size_t i : ctx.opIndices) {
        const TimeNs e = exposedWithin(ctx.ops[i], ctx.window, ctx.coverage);
        if (e > b.exposed_ns) {
            b.exposed_ns = e;
            b.collective = static_cast<int>(i);
        }
    }
    if (ctx.metrics.exposed_comm_ns > 0)
        b.share = static_cast<double>(b.exposed_ns) / static_cast<double>(ctx.metrics.exposed_comm_ns);
    b.communicationBound = ctx.metrics.comm_ns > ctx.metrics.compute_ns;
    b.findings = explainWindow(ctx);
    return b;
}

}  // namespace osc
