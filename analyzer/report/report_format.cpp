#include "analyzer/report/report_format.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

namespace osc::report {
namespace {

std::string printf1(const char* fmt, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, v);
    return buf;
}

// Three significant digits read well in a terminal column.
std::string scaled(double v, const char* unit) {
    const char* fmt = v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s";
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, v, unit);
    return buf;
}

}  // namespace

std::string deviceLabel(const DeviceAnalysis& d) {
    const std::string gpu = " gpu " + std::to_string(d.device);
    if (d.rank >= 0) return "rank " + std::to_string(d.rank) + gpu;
    const std::string where = d.host.empty() ? "pid " + std::to_string(d.pid) : d.host + ":" + std::to_string(d.pid);
    return where + gpu;
}

std::string formatDuration(TimeNs ns) {
    const double v = static_cast<double>(ns);
    const double a = std::fabs(v);
    if (a >= 1e9) return scaled(v / 1e9, "s");
    if (a >= 1e6) return scaled(v / 1e6, "ms");
    if (a >= 1e3) return scaled(v / 1e3, "us");
    return std::to_string(ns) + " ns";
}

std::string formatPercent(std::optional<double> ratio) {
    if (!ratio) return "n/a";
    return printf1("%.0f%%", *ratio * 100.0);
}

std::string formatFactor(std::optional<double> value) {
    if (!value) return "n/a";
    return printf1("%.2fx", *value);
}

std::string formatBytes(std::optional<uint64_t> bytes) {
    if (!bytes) return "n/a";
    const double v = static_cast<double>(*bytes);
    if (v >= 1024.0 * 1024 * 1024) return scaled(v / (1024.0 * 1024 * 1024), "GiB");
    if (v >= 1024.0 * 1024) return scaled(v / (1024.0 * 1024), "MiB");
    if (v >= 1024.0) return scaled(v / 1024.0, "KiB");
    return std::to_string(*bytes) + " B";
}

std::string describeCollective(const CollectiveInstance& c) {
    if (c.collective.empty()) {
        // Kernel names can be long templates; the part before '(' says enough.
        const std::string_view name = c.name;
        return std::string(name.substr(0, name.find('(')));
    }
    return c.datatype.empty() ? c.collective.str() : c.collective + " " + c.datatype.str();
}

std::string verdict(const OverlapMetrics& m) {
    if (m.comm_ns == 0) return "no communication";
    return m.comm_ns > m.compute_ns ? "communication-bound" : "compute-bound";
}

std::string stepVerdict(const StepAnalysis& step) {
    return step.bottleneck.communicationBound ? "communication-bound" : verdict(step.metrics);
}

std::string toString(FindingKind kind) {
    switch (kind) {
        case FindingKind::CommOnComputeStream:
            return "comm-on-compute-stream";
        case FindingKind::CommAfterLastCompute:
            return "comm-after-last-compute";
        case FindingKind::ManySmallCollectives:
            return "many-small-collectives";
        case FindingKind::IdleGap:
            return "idle-gap";
        case FindingKind::CommunicationBound:
            return "communication-bound";
        case FindingKind::PipelineBubble:
            return "pipeline-bubble";
        case FindingKind::AllToAllImbalance:
            return "alltoall-imbalance";
        case FindingKind::BandwidthLimit:
            return "bandwidth-limit";
        case FindingKind::ScheduleLimit:
            return "schedule-limit";
        case FindingKind::Straggler:
            return "straggler";
        case FindingKind::SharedGpu:
            return "shared-gpu";
    }
    return "unknown";
}

std::string toString(BusBwBasis basis) {
    switch (basis) {
        case BusBwBasis::Transfer:
            return "transfer";
        case BusBwBasis::Duration:
            return "duration";
        case BusBwBasis::None:
            break;
    }
    return {};
}

FindingKind parseFindingKind(const std::string& name) {
    for (auto k : {FindingKind::CommOnComputeStream, FindingKind::CommAfterLastCompute,
                   FindingKind::ManySmallCollectives, FindingKind::IdleGap, FindingKind::CommunicationBound,
                   FindingKind::PipelineBubble, FindingKind::AllToAllImbalance, FindingKind::BandwidthLimit,
                   FindingKind::ScheduleLimit, FindingKind::Straggler, FindingKind::SharedGpu})
        if (toString(k) == name) return k;
    throw std::invalid_argument("unknown finding kind '" + name + "'");
}

DeviceBottleneck deviceBottleneck(const DeviceAnalysis& d) {
    DeviceBottleneck best;
    const auto& cs = d.collectives;
    if (cs.empty()) return best;
    const bool bySteps = !d.steps.empty();
    if (bySteps) {
        // Position of each collective within its step, in issue (start) order.
        std::map<int, int> seenInStep;
        std::map<int, TimeNs> exposedAt;
        std::map<int, int> firstAt;
        for (size_t i = 0; i < cs.size(); ++i) {
            if (cs[i].step < 0) continue;
            const int pos = seenInStep[cs[i].step]++;
            exposedAt[pos] += cs[i].exposed_ns;
            firstAt.emplace(pos, static_cast<int>(i));
        }
        for (const auto& [pos, exposed] : exposedAt) {
            if (exposed > best.exposed_ns) {
                best.found = true;
                best.position = pos;
                best.exposed_ns = exposed;
                best.collective = firstAt[pos];
            }
        }
        if (best.found)
            best.label = describeCollective(cs[static_cast<size_t>(best.collective)]) + " bucket #" +
                         std::to_string(best.position);
    }
    if (!best.found) {
        for (size_t i = 0; i < cs.size(); ++i) {
            if (cs[i].exposed_ns > best.exposed_ns) {
                best.found = true;
                best.exposed_ns = cs[i].exposed_ns;
                best.collective = static_cast<int>(i);
            }
        }
        if (best.found)
            best.label =
                describeCollective(cs[static_cast<size_t>(best.collective)]) + " #" + std::to_string(best.collective);
    }
    if (best.found && d.totals.exposed_comm_ns > 0)
        best.share = static_cast<double>(best.exposed_ns) / static_cast<double>(d.totals.exposed_comm_ns);
    return best;
}

namespace {
std::string metricsClause(const OverlapMetrics& m) {
    if (m.comm_ns == 0)
        return "no communication; compute " + formatDuration(m.compute_ns) + " of " + formatDuration(m.window_ns);
    return formatPercent(m.overlap_ratio) + " of communication hidden, " + formatDuration(m.exposed_comm_ns) +
           " exposed of " + formatDuration(m.comm_ns) + "; " + verdict(m);
}
}  // namespace

std::string headline(const DeviceAnalysis& d) {
    std::string line = deviceLabel(d) + ": " + metricsClause(d.totals);
    if (d.totals.comm_ns == 0) return line;
    const auto b = deviceBottleneck(d);
    if (b.found)
        line += "; bottleneck: " + b.label + " (" + formatDuration(b.exposed_ns) + " exposed" +
                (b.share ? ", " + formatPercent(b.share) : std::string()) + ")";
    else
        line += "; nothing exposed";
    return line;
}

std::string summaryHeadline(const Analysis& a) { return summaryHeadline(a.devices.size(), a.summary); }

std::string summaryHeadline(size_t n, const OverlapMetrics& summary) {
    return (n == 1 ? std::string("1 device") : "all " + std::to_string(n) + " devices") + ": " + metricsClause(summary);
}

}  // namespace osc::report
