#include "gui/model/analysis_csv.h"

#include "gui/model/csv_text.h"
#include "gui/model/rank_collectives.h"

#include <cstdio>
#include <optional>
#include <sstream>
#include <vector>

namespace osc::gui {

namespace {

using csv::deviceFields;
using csv::line;
using csv::number;
using csv::quoted;

}  // namespace

std::string stepsCsv(const Analysis& analysis) {
    std::ostringstream out;
    line(out, {"rank", "host", "pid", "device", "name", "start_ns", "end_ns", "window_ns", "compute_ns", "comm_ns",
               "overlap_ns", "exposed_comm_ns", "busy_ns", "idle_ns", "overlap_ratio", "verdict"});
    for (const DeviceAnalysis& d : analysis.devices)
        for (const StepAnalysis& s : d.steps) {
            std::vector<std::string> f = deviceFields(d);
            const OverlapMetrics& m = s.metrics;
            for (std::string v :
                 {quoted(s.name), std::to_string(s.start_ns), std::to_string(s.end_ns), std::to_string(m.window_ns),
                  std::to_string(m.compute_ns), std::to_string(m.comm_ns), std::to_string(m.overlap_ns),
                  std::to_string(m.exposed_comm_ns), std::to_string(m.busy_ns), std::to_string(m.idle_ns),
                  number(m.overlap_ratio),
                  std::string(s.bottleneck.communicationBound ? "communication-bound" : "compute-bound")})
                f.push_back(std::move(v));
            line(out, f);
        }
    return out.str();
}

std::string collectivesCsv(const Analysis& analysis) {
    std::ostringstream out;
    line(out, {"rank", "host", "pid", "device", "name", "collective", "start_ns", "end_ns", "duration_ns",
               "overlapped_ns", "exposed_ns", "bytes", "bandwidth_gbps", "step"});
    for (const DeviceAnalysis& d : analysis.devices)
        for (const CollectiveInstance& c : d.collectives) {
            std::vector<std::string> f = deviceFields(d);
            for (std::string v :
                 {quoted(c.name), quoted(c.collective), std::to_string(c.start_ns), std::to_string(c.end_ns),
                  std::to_string(c.duration_ns), std::to_string(c.overlapped_ns), std::to_string(c.exposed_ns),
                  number(c.bytes), number(c.bandwidth_gbps), c.step >= 0 ? std::to_string(c.step) : std::string()})
                f.push_back(std::move(v));
            line(out, f);
        }
    return out.str();
}

std::string rankCollectivesCsv(const Analysis& analysis) {
    std::ostringstream out;
    line(out, {"matched", "step", "collective", "comm_hash", "seq_number", "bucket", "bytes", "ranks", "skew_ns",
               "last_rank", "waiting_ns", "rank_time_ns", "transfer_ns", "busbw_gbps", "start_ns", "end_ns"});
    for (const RankCollectiveRow& r : rankCollectiveRows(analysis)) {
        const MatchedCollective& m = analysis.matched[static_cast<size_t>(r.matched)];
        char hash[24] = "";
        // Hex, as the report writes communicator hashes.
        if (m.commHash) std::snprintf(hash, sizeof hash, "0x%016llx", static_cast<unsigned long long>(*m.commHash));
        line(out, {std::to_string(r.matched), quoted(r.step), quoted(r.collective), hash, number(r.seqNumber),
                   std::to_string(r.bucket), number(r.bytes), std::to_string(r.ranks), std::to_string(r.skew_ns),
                   r.lastRank >= 0 ? std::to_string(r.lastRank) : std::string(), std::to_string(r.waiting_ns),
                   std::to_string(r.rankTime_ns), std::to_string(r.transfer_ns), number(r.busbw_gbps),
                   std::to_string(r.start_ns), std::to_string(r.end_ns)});
    }
    return out.str();
}

}  // namespace osc::gui
