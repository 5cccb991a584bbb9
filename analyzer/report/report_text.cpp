#include "analyzer/report/report_text.h"

#include "analyzer/report/report_costs.h"
#include "analyzer/report/report_format.h"
#include "analyzer/report/report_patterns.h"
#include "analyzer/report/report_tables.h"

namespace osc::report {
namespace {

std::string inputsLine(const ReportOptions& o, size_t devices) {
    std::string line = "overlapscope report: " + std::to_string(devices) +
                       (devices == 1 ? " device" : " devices") + " from ";
    for (size_t i = 0; i < o.inputs.size(); ++i) line += (i ? ", " : "") + o.inputs[i];
    if (o.inputs.empty()) line += "(no inputs)";
    return line + "\n";
}

std::string multiRankSection(const Analysis& a, const ReportOptions& o) {
    if (!a.spread && a.matched.empty()) return {};
    std::string out = "\nAcross ranks:\n";
    if (!a.matched.empty())
        out += "  " + formatDuration(a.total_skew_ns) + " spent waiting for the slowest rank over " +
               std::to_string(a.matched.size()) + " matched collectives\n";
    if (const auto late = stragglerSentence(a); !late.empty()) out += "  " + late + "\n";
    if (a.spread) {
        const auto& s = *a.spread;
        out += "  step time min/median/max: " + formatDuration(s.step_time_min_ns) + " / " +
               formatDuration(s.step_time_median_ns) + " / " + formatDuration(s.step_time_max_ns) +
               "\n";
        out += "  hidden communication min/median/max: " + formatPercent(s.overlap_ratio_min) +
               " / " + formatPercent(s.overlap_ratio_median) + " / " +
               formatPercent(s.overlap_ratio_max) + "\n";
    }
    if (o.collectives && !a.matched.empty()) {
        out += "  largest skews:\n";
        out += matchedTable(a, o.topCollectives).render("    ");
    }
    return out;
}

// Pipeline, all-to-all and point-to-point (docs/metrics.md sections 7d-7f).
std::string patternsSection(const Analysis& a, const ReportOptions& o) {
    std::string out;
    if (const auto lines = pipelineLines(a); !lines.empty()) {
        out += "\nPipeline:\n";
        for (const auto& l : lines) out += "  " + l + "\n";
        out += pipelineTable(a).render();
    }
    if (const auto lines = alltoallLines(a); !lines.empty()) {
        out += "\nAll-to-all:\n";
        for (const auto& l : lines) out += "  " + l + "\n";
        if (o.steps || o.collectives) out += alltoallTable(a, o.topCollectives).render();
    }
    if (const auto lines = p2pLines(a); !lines.empty()) {
        out += "\nPoint-to-point:\n";
        for (const auto& l : lines) out += "  " + l + "\n";
    }
    return out;
}

}  // namespace

std::string formatTextReport(const Analysis& a, const ReportOptions& o) {
    std::string out = inputsLine(o, a.devices.size());
    if (a.devices.empty()) return out + "no GPU activity found\n";
    for (const auto& d : a.devices) out += headline(d) + "\n";
    if (a.devices.size() > 1) out += summaryHeadline(a) + "\n";

    out += "\n" + totalsTable(a).render();

    std::string findings;
    for (const auto& d : a.devices)
        for (const auto& f : deviceFindings(d))
            findings += "  " + deviceLabel(d) + ": " + describeFinding(f) + "\n";
    if (!findings.empty()) out += "\nFindings:\n" + findings;

    std::string costs;
    for (const auto& d : a.devices)
        for (const auto& c : costSentences(d)) costs += "  " + deviceLabel(d) + ": " + c + "\n";
    if (!costs.empty()) out += "\nWhat overlap costs, and who waits:\n" + costs;
    out += patternsSection(a, o);
    if (o.interference) {
        for (const auto& d : a.devices) {
            out += "\nInterference on " + deviceLabel(d);
            out += d.signatures.empty()
                       ? ": no compute kernel ran at least half under communication\n"
                       : " (kernels under communication against the same kernel alone):\n" +
                             interferenceTable(d, o.topCollectives).render();
        }
    }

    if (o.steps) {
        for (const auto& d : a.devices) {
            out += "\nSteps on " + deviceLabel(d) + ":\n";
            out += d.steps.empty() ? "  no step ranges found (see --step-pattern)\n"
                                   : stepsTable(d).render();
        }
    }
    if (o.collectives) {
        for (const auto& d : a.devices) {
            const size_t n = d.collectives.size();
            out += "\nCollectives on " + deviceLabel(d);
            if (n == 0) {
                out += ": none\n";
                continue;
            }
            const bool cut = o.topCollectives != 0 && n > o.topCollectives;
            out += cut ? " (" + std::to_string(o.topCollectives) + " most exposed of " +
                             std::to_string(n) + "; --top 0 lists all):\n"
                       : " (" + std::to_string(n) + ", most exposed first):\n";
            out += collectivesTable(d, o.topCollectives).render();
        }
    }
    out += multiRankSection(a, o);
    return out;
}

}  // namespace osc::report
