#include "analyzer/report/report_markdown.h"

#include "analyzer/report/report_costs.h"
#include "analyzer/report/report_format.h"
#include "analyzer/report/report_patterns.h"
#include "analyzer/report/report_tables.h"

namespace osc::report {

std::string formatMarkdownReport(const Analysis& a, const ReportOptions& o) {
    std::string out = "### overlapscope report\n\n";
    if (a.devices.empty()) return out + "No GPU activity found.\n";
    // The verdicts first: that is what a reviewer reads.
    for (const auto& d : a.devices) out += "- **" + headline(d) + "**\n";
    if (a.devices.size() > 1) out += "- **" + summaryHeadline(a) + "**\n";
    out += "\n" + totalsTable(a).renderMarkdown();

    std::string findings;
    for (const auto& d : a.devices)
        for (const auto& f : deviceFindings(d))
            findings += "- " + deviceLabel(d) + ": " + describeFinding(f) + "\n";
    if (!findings.empty()) out += "\n**Findings**\n\n" + findings;

    std::string costs;
    for (const auto& d : a.devices)
        for (const auto& c : costSentences(d)) costs += "- " + deviceLabel(d) + ": " + c + "\n";
    if (const auto late = stragglerSentence(a); !late.empty()) costs += "- " + late + "\n";
    if (!costs.empty()) out += "\n**What overlap costs, and who waits**\n\n" + costs;

    if (a.spread || !a.matched.empty()) {
        out += "\n**Across ranks**\n\n";
        if (!a.matched.empty())
            out += "- " + formatDuration(a.total_skew_ns) +
                   " spent waiting for the slowest rank over " + std::to_string(a.matched.size()) +
                   " matched collectives\n";
        if (a.spread)
            out += "- step time min/median/max: " + formatDuration(a.spread->step_time_min_ns) +
                   " / " + formatDuration(a.spread->step_time_median_ns) + " / " +
                   formatDuration(a.spread->step_time_max_ns) + "\n";
    }
    for (const auto& [title, lines] : {std::pair{"Pipeline", pipelineLines(a)},
                                       std::pair{"All-to-all", alltoallLines(a)},
                                       std::pair{"Point-to-point", p2pLines(a)}}) {
        if (lines.empty()) continue;
        out += std::string("\n**") + title + "**\n\n";
        for (const auto& l : lines) out += "- " + l + "\n";
    }
    if (!a.pipeline.empty())
        out += "\n<details><summary>Pipeline bubble per stage</summary>\n\n" + pipelineTable(a).renderMarkdown() +
               "\n</details>\n";
    if (!a.alltoall.empty() && (o.steps || o.collectives))
        out += "\n<details><summary>All-to-all per step</summary>\n\n" +
               alltoallTable(a, o.topCollectives).renderMarkdown() + "\n</details>\n";
    if (o.steps)
        for (const auto& d : a.devices)
            if (!d.steps.empty())
                out += "\n<details><summary>Steps on " + deviceLabel(d) + "</summary>\n\n" +
                       stepsTable(d).renderMarkdown() + "\n</details>\n";
    if (o.collectives)
        for (const auto& d : a.devices)
            if (!d.collectives.empty())
                out += "\n<details><summary>Most exposed collectives on " + deviceLabel(d) +
                       "</summary>\n\n" + collectivesTable(d, o.topCollectives).renderMarkdown() +
                       "\n</details>\n";
    if (o.interference)
        for (const auto& d : a.devices)
            if (!d.signatures.empty())
                out += "\n<details><summary>Interference on " + deviceLabel(d) + "</summary>\n\n" +
                       interferenceTable(d, o.topCollectives).renderMarkdown() + "\n</details>\n";
    if (!o.inputs.empty()) {
        out += "\n<sub>inputs:";
        for (const auto& i : o.inputs) out += " `" + i + "`";
        out += "</sub>\n";
    }
    return out;
}

}  // namespace osc::report
