#include "analyzer/report/report_text.h"

#include "analyzer/report/report_assembler.h"
#include "analyzer/report/report_costs.h"
#include "analyzer/report/report_format.h"
#include "analyzer/report/report_layout.h"
#include "analyzer/report/report_patterns.h"

namespace osc::report {
namespace {

std::string inputsLine(const ReportOptions& o, size_t devices) {
    std::string line =
        "overlapscope report: " + std::to_string(devices) + (devices == 1 ? " device" : " devices") + " from ";
    for (size_t i = 0; i < o.inputs.size(); ++i) line += (i ? ", " : "") + o.inputs[i];
    if (o.inputs.empty()) line += "(no inputs)";
    line += "\n";
    for (const auto& w : o.inputWarnings) line += "warning: " + w + "\n";
    return line;
}

std::string multiRankSection(const JobParts& job, const ReportOptions& o) {
    const Analysis& a = job.rest;
    if (!a.spread && job.matchedCount == 0) return {};
    std::string out = "\nAcross ranks:\n";
    if (job.matchedCount > 0)
        out += "  " + formatDuration(a.total_skew_ns) + " spent waiting for the slowest rank over " +
               std::to_string(job.matchedCount) + " matched collectives\n";
    if (const auto late = stragglerSentence(job.devices, job.matchedCount); !late.empty()) out += "  " + late + "\n";
    if (a.spread) {
        const auto& s = *a.spread;
        out += "  " + spreadStepTimeSentence(s) + "\n";
        out += "  hidden communication min/median/max: " + formatPercent(s.overlap_ratio_min) + " / " +
               formatPercent(s.overlap_ratio_median) + " / " + formatPercent(s.overlap_ratio_max) + "\n";
    }
    if (o.collectives && job.matchedCount > 0) {
        out += "  largest skews:\n";
        out += matchedTable(job.matched, o.topCollectives).render("    ");
    }
    return out;
}

// Pipeline, all-to-all and point-to-point (docs/metrics.md sections 7d-7f).
std::string patternsSection(const JobParts& job, const ReportOptions& o) {
    const Analysis& a = job.rest;
    std::string out;
    if (const auto lines = pipelineLines(a.pipeline, job.devices); !lines.empty()) {
        out += "\nPipeline:\n";
        for (const auto& l : lines) out += "  " + l + "\n";
        out += pipelineTable(a.pipeline, job.devices).render();
    }
    if (const auto lines = alltoallLines(a.alltoall, job.devices); !lines.empty()) {
        out += "\nAll-to-all:\n";
        for (const auto& l : lines) out += "  " + l + "\n";
        if (o.steps || o.collectives) out += alltoallTable(a.alltoall, job.devices, o.topCollectives).render();
    }
    if (const auto lines = p2pLines(a.p2p); !lines.empty()) {
        out += "\nPoint-to-point:\n";
        for (const auto& l : lines) out += "  " + l + "\n";
    }
    return out;
}

}  // namespace

void addTextSections(const DeviceAnalysis& d, const ReportOptions& o, DeviceSections& out) {
    const std::string label = deviceLabel(d);
    out.headlines += headline(d) + "\n";
    for (const auto& f : deviceFindings(d)) out.findings += "  " + label + ": " + describeFinding(f) + "\n";
    for (const auto& c : costSentences(d)) out.costs += "  " + label + ": " + c + "\n";
    if (o.interference) {
        out.interference += "\nInterference on " + label;
        out.interference += d.signatures.empty() ? ": no compute kernel ran at least half under communication\n"
                                                 : " (kernels under communication against the same kernel alone):\n" +
                                                       interferenceTable(d, o.topCollectives).render();
    }
    if (o.steps) {
        out.steps += "\nSteps on " + label + ":\n";
        out.steps += d.steps.empty() ? "  no step ranges found (see --step-pattern)\n" : stepsTable(d).render();
    }
    if (o.collectives) {
        const size_t n = d.collectives.size();
        out.collectives += "\nCollectives on " + label;
        if (n == 0) {
            out.collectives += ": none\n";
        } else {
            const bool cut = o.topCollectives != 0 && n > o.topCollectives;
            out.collectives += cut ? " (" + std::to_string(o.topCollectives) + " most exposed of " + std::to_string(n) +
                                         "; --top 0 lists all):\n"
                                   : " (" + std::to_string(n) + ", most exposed first):\n";
            out.collectives += collectivesTable(d, o.topCollectives).render();
        }
        if (d.busbw && !d.busbw->classes.empty())
            out.collectives += "\nBus bandwidth on " + label + " by collective and size (lower medians):\n" +
                               busBandwidthTable(d).render();
    }
}

std::string textReport(const DeviceSections& s, const JobParts& job, const ReportOptions& o) {
    const size_t n = job.devices.size();
    std::string out = inputsLine(o, n);
    if (n == 0) return out + "no GPU activity found\n";
    out += s.headlines;
    if (n > 1) out += summaryHeadline(n, job.rest.summary) + "\n";
    out += "\n" + totalsTable(job.devices, job.rest.summary).render();
    if (!s.findings.empty()) out += "\nFindings:\n" + s.findings;
    if (!s.costs.empty()) out += "\nWhat overlap costs, and who waits:\n" + s.costs;
    out += patternsSection(job, o);
    out += s.interference;
    out += s.steps;
    out += s.collectives;
    out += multiRankSection(job, o);
    return out;
}

std::string formatTextReport(const Analysis& a, const ReportOptions& o) {
    ReportAssembler report(ReportFormat::Text, o);
    for (const auto& d : a.devices) report.addDevice(d);
    for (const auto& m : a.matched) report.addMatched(m);
    return report.finish(a);
}

}  // namespace osc::report
