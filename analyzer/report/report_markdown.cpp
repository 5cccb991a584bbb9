#include "analyzer/report/report_markdown.h"

#include "analyzer/report/report_assembler.h"
#include "analyzer/report/report_costs.h"
#include "analyzer/report/report_format.h"
#include "analyzer/report/report_layout.h"
#include "analyzer/report/report_patterns.h"

namespace osc::report {
namespace {

std::string details(const std::string& summary, const TextTable& table) {
    return "\n<details><summary>" + summary + "</summary>\n\n" + table.renderMarkdown() + "\n</details>\n";
}

}  // namespace

void addMarkdownSections(const DeviceAnalysis& d, const ReportOptions& o, DeviceSections& out) {
    const std::string label = deviceLabel(d);
    // The verdicts first: that is what a reviewer reads.
    out.headlines += "- **" + headline(d) + "**\n";
    for (const auto& f : deviceFindings(d)) out.findings += "- " + label + ": " + describeFinding(f) + "\n";
    for (const auto& c : costSentences(d)) out.costs += "- " + label + ": " + c + "\n";
    if (o.steps && !d.steps.empty()) out.steps += details("Steps on " + label, stepsTable(d));
    if (o.collectives && !d.collectives.empty())
        out.collectives += details("Most exposed collectives on " + label, collectivesTable(d, o.topCollectives));
    if (o.collectives && d.busbw && !d.busbw->classes.empty())
        out.collectives += details("Bus bandwidth on " + label + " by collective and size", busBandwidthTable(d));
    if (o.interference && !d.signatures.empty())
        out.interference += details("Interference on " + label, interferenceTable(d, o.topCollectives));
}

std::string markdownReport(const DeviceSections& s, const JobParts& job, const ReportOptions& o) {
    const Analysis& a = job.rest;
    const size_t n = job.devices.size();
    std::string out = "### overlapscope report\n\n";
    for (const auto& w : o.inputWarnings) out += "> **Warning:** " + w + "\n\n";
    if (n == 0) return out + "No GPU activity found.\n";
    out += s.headlines;
    if (n > 1) out += "- **" + summaryHeadline(n, a.summary) + "**\n";
    out += "\n" + totalsTable(job.devices, a.summary).renderMarkdown();

    if (!s.findings.empty()) out += "\n**Findings**\n\n" + s.findings;

    std::string costs = s.costs;
    if (const auto late = stragglerSentence(job.devices, job.matchedCount); !late.empty()) costs += "- " + late + "\n";
    if (!costs.empty()) out += "\n**What overlap costs, and who waits**\n\n" + costs;

    if (a.spread || job.matchedCount > 0) {
        out += "\n**Across ranks**\n\n";
        if (job.matchedCount > 0)
            out += "- " + formatDuration(a.total_skew_ns) + " spent waiting for the slowest rank over " +
                   std::to_string(job.matchedCount) + " matched collectives\n";
        if (a.spread) out += "- " + spreadStepTimeSentence(*a.spread) + "\n";
    }
    for (const auto& [title, lines] : {std::pair{"Pipeline", pipelineLines(a.pipeline, job.devices)},
                                       std::pair{"All-to-all", alltoallLines(a.alltoall, job.devices)},
                                       std::pair{"Point-to-point", p2pLines(a.p2p)}}) {
        if (lines.empty()) continue;
        out += std::string("\n**") + title + "**\n\n";
        for (const auto& l : lines) out += "- " + l + "\n";
    }
    if (!a.pipeline.empty()) out += details("Pipeline bubble per stage", pipelineTable(a.pipeline, job.devices));
    if (!a.alltoall.empty() && (o.steps || o.collectives))
        out += details("All-to-all per step", alltoallTable(a.alltoall, job.devices, o.topCollectives));
    out += s.steps;
    out += s.collectives;
    out += s.interference;
    if (!o.inputs.empty()) {
        out += "\n<sub>inputs:";
        for (const auto& i : o.inputs) out += " `" + i + "`";
        out += "</sub>\n";
    }
    return out;
}

std::string formatMarkdownReport(const Analysis& a, const ReportOptions& o) {
    ReportAssembler report(ReportFormat::Markdown, o);
    for (const auto& d : a.devices) report.addDevice(d);
    for (const auto& m : a.matched) report.addMatched(m);
    return report.finish(a);
}

}  // namespace osc::report
