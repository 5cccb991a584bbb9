// Text, Markdown and JSON renderings of a DiffResult.
#include "analyzer/report/diff.h"
#include "analyzer/report/report_format.h"
#include "analyzer/report/text_table.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

namespace osc::report {
namespace {

// Names come from files and may be broken UTF-8: replaced (U+FFFD), not thrown on.
constexpr auto kInvalidUtf8 = nlohmann::json::error_handler_t::replace;

const MetricDelta* find(const DiffRow& r, const std::string& name) {
    for (const auto& m : r.metrics)
        if (m.name == name) return &m;
    return nullptr;
}

std::string pct(double v) {
    if (std::isinf(v)) return v > 0 ? "+inf%" : "-inf%";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f%%", v);
    return buf;
}

// Fractions shown in percent, and factors shown as "1.33x".
bool isShare(const std::string& name) {
    return name == "overlap_ratio" || name == "bubble_share" || name == "median_busbw_fraction";
}

bool isRatio(const std::string& name) {
    return isShare(name) || name == "achieved_speedup" || name == "ideal_speedup" || name == "alltoall_imbalance";
}

std::string value(const std::string& name, std::optional<double> v) {
    if (!v) return "n/a";
    if (isShare(name)) return formatPercent(v);
    if (isRatio(name)) return formatFactor(v);
    if (name.size() > 5 && name.compare(name.size() - 5, 5, "_gbps") == 0) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.1f GB/s", *v);
        return buf;
    }
    return formatDuration(static_cast<TimeNs>(std::llround(*v)));
}

// "81% -> 70% (-13.7%)"
std::string sideBySide(const MetricDelta* m) {
    if (!m) return "";
    std::string s = value(m->name, m->base) + " -> " + value(m->name, m->candidate);
    if (m->relativePct) s += " (" + pct(*m->relativePct) + ")";
    return s;
}

std::string worst(const DiffRow& r, std::optional<double> failPercent) {
    if (r.worstRegressionPct <= 0) return "-";
    std::string s = pct(r.worstRegressionPct);
    if (failPercent && r.scope != DiffScope::Step && r.worstRegressionPct > *failPercent) s += " REGRESSION";
    return s;
}

std::string verdictLine(const DiffResult& d, std::optional<double> failPercent) {
    const DiffRow* worstRow = nullptr;
    for (const auto& r : d.rows)
        if (r.scope != DiffScope::Step && (!worstRow || r.worstRegressionPct > worstRow->worstRegressionPct))
            worstRow = &r;
    if (!worstRow || worstRow->worstRegressionPct <= 0)
        return "no regression in overlap ratio or exposed communication";
    std::string line = "worst regression: " + pct(worstRow->worstRegressionPct) + " on " + worstRow->label;
    if (failPercent)
        line += exceedsRegression(d, *failPercent) ? " (beyond the " + pct(*failPercent).substr(1) + " limit: FAIL)"
                                                   : " (within the " + pct(*failPercent).substr(1) + " limit)";
    return line;
}

TextTable overview(const DiffResult& d, std::optional<double> failPercent) {
    TextTable t({"scope", "overlap ratio", "exposed comm", "window", "worst regression"});
    for (const auto& r : d.rows)
        t.addRow({r.label, sideBySide(find(r, "overlap_ratio")), sideBySide(find(r, "exposed_comm_ns")),
                  sideBySide(find(r, "window_ns")), worst(r, failPercent)});
    return t;
}

TextTable summaryDetail(const DiffResult& d) {
    TextTable t({"metric", "base", "candidate", "change", "relative"});
    for (const auto& m : d.rows.front().metrics) {
        std::string change = "n/a";
        if (m.change) {
            if (isShare(m.name)) {
                char buf[32];
                std::snprintf(buf, sizeof buf, "%+.1f pt", *m.change * 100.0);
                change = buf;
            } else if (isRatio(m.name)) {
                char buf[32];
                std::snprintf(buf, sizeof buf, "%+.2fx", *m.change);
                change = buf;
            } else {
                const auto v = static_cast<TimeNs>(std::llround(*m.change));
                change = (v >= 0 ? "+" : "-") + formatDuration(v >= 0 ? v : -v);
            }
        }
        t.addRow({m.name, value(m.name, m.base), value(m.name, m.candidate), change,
                  m.relativePct ? pct(*m.relativePct) : "n/a"});
    }
    return t;
}

nlohmann::json optionalNumber(std::optional<double> v) {
    if (!v || !std::isfinite(*v)) return nullptr;
    return *v;
}

std::string percentOrMs(const StepComparison& r, double ShiftInterval::*part) {
    char buf[32];
    if (r.shiftPct)
        std::snprintf(buf, sizeof buf, "%+.1f %%", (*r.shiftPct).*part);
    else
        std::snprintf(buf, sizeof buf, "%+.3f ms", (*r.shiftNs).*part / 1e6);
    return buf;
}

std::string stepsHeading(const StepComparisons& s) {
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "%.4g %% confidence over %zu comparison%s, minimum effect %.1f %%, at least %zu steps",
                  s.options.confidence * 100.0, s.judged, s.judged == 1 ? "" : "s", s.options.minEffectPercent,
                  s.options.minSteps);
    return buf;
}

// One line on the per-step comparison: its regressions, or why it judged nothing.
std::string stepsVerdictLine(const StepComparisons& s) {
    size_t regressions = 0;
    const StepComparison* first = nullptr;
    for (const auto& r : s.rows)
        if (r.verdict == NoiseVerdict::Regression && !regressions++) first = &r;
    if (first)
        return "beyond step-to-step noise: " + std::to_string(regressions) + " regression" +
               (regressions == 1 ? "" : "s") + ", first " + first->device + ": " + first->sentence;
    for (const auto& r : s.rows)
        if (notJudgedFails(r)) return "per-step comparison: " + r.device + ": " + r.sentence;
    if (s.rows.empty()) return "per-step comparison: no device in both runs";
    return "no regression beyond step-to-step noise (" + std::to_string(s.judged) + " comparison" +
           (s.judged == 1 ? "" : "s") + ")";
}

TextTable stepsTable(const StepComparisons& s) {
    TextTable t({"device", "per step", "change", "interval", "steps", "verdict"});
    for (const auto& r : s.rows) {
        const bool judged = r.shiftNs.has_value();
        t.addRow({r.device, r.what, judged ? percentOrMs(r, &ShiftInterval::shift) : "n/a",
                  judged ? "[" + percentOrMs(r, &ShiftInterval::low) + ", " + percentOrMs(r, &ShiftInterval::high) + "]"
                         : "n/a",
                  std::to_string(r.baseSteps) + " / " + std::to_string(r.candidateSteps), toString(r.verdict)});
    }
    return t;
}

nlohmann::ordered_json stepsJson(const StepComparisons& s) {
    nlohmann::ordered_json j;
    j["confidence"] = s.options.confidence;
    j["min_effect_pct"] = s.options.minEffectPercent;
    j["min_steps"] = s.options.minSteps;
    j["comparisons"] = s.judged;
    j["regressed"] = stepRegressed(s, true);
    auto rows = nlohmann::ordered_json::array();
    for (const auto& r : s.rows) {
        nlohmann::ordered_json o;
        o["device"] = r.device;
        o["metric"] = toString(r.metric);
        o["what"] = r.what;
        o["collective"] = r.metric == StepMetric::Collective ? nlohmann::ordered_json(r.collective) : nullptr;
        o["communicator"] = r.metric == StepMetric::Collective && r.communicator >= 0
                                ? nlohmann::ordered_json(r.communicator)
                                : nullptr;
        o["base_steps"] = r.baseSteps;
        o["candidate_steps"] = r.candidateSteps;
        o["base_median_ns"] = optionalNumber(r.baseMedianNs);
        o["candidate_median_ns"] = optionalNumber(r.candidateMedianNs);
        const auto part = [](const std::optional<ShiftInterval>& v, double ShiftInterval::*p) {
            return v ? optionalNumber((*v).*p) : nlohmann::json(nullptr);
        };
        o["shift_ns"] = part(r.shiftNs, &ShiftInterval::shift);
        o["low_ns"] = part(r.shiftNs, &ShiftInterval::low);
        o["high_ns"] = part(r.shiftNs, &ShiftInterval::high);
        o["shift_pct"] = part(r.shiftPct, &ShiftInterval::shift);
        o["low_pct"] = part(r.shiftPct, &ShiftInterval::low);
        o["high_pct"] = part(r.shiftPct, &ShiftInterval::high);
        o["interval_confidence"] = r.shiftNs ? nlohmann::json(r.level) : nlohmann::json(nullptr);
        o["verdict"] = toString(r.verdict);
        o["sentence"] = r.sentence;
        rows.push_back(o);
    }
    j["rows"] = rows;
    j["notes"] = s.notes;
    return j;
}

}  // namespace

std::string formatDiffText(const DiffResult& d, std::optional<double> failPercent) {
    std::string out = "overlapscope diff\n  base:      " + d.basePath + "\n  candidate: " + d.candidatePath + "\n" +
                      verdictLine(d, failPercent) + "\n" + stepsVerdictLine(d.steps) + "\n\nSummary:\n" +
                      summaryDetail(d).render() + "\nBy device and step, largest regressions first:\n" +
                      overview(d, failPercent).render() + "\nPer step against step-to-step noise (" +
                      stepsHeading(d.steps) + "):\n" + stepsTable(d.steps).render();
    for (const auto& n : d.steps.notes) out += "  " + n + "\n";
    if (!d.notes.empty()) {
        out += "\nNotes:\n";
        for (const auto& n : d.notes) out += "  " + n + "\n";
    }
    return out;
}

std::string formatDiffMarkdown(const DiffResult& d, std::optional<double> failPercent) {
    std::string out = "## overlapscope diff\n\nBase: `" + d.basePath + "`  \nCandidate: `" + d.candidatePath +
                      "`\n\n**" + verdictLine(d, failPercent) + "**  \n**" + stepsVerdictLine(d.steps) +
                      "**\n\n### Summary\n\n" + summaryDetail(d).renderMarkdown() +
                      "\n### By device and step (largest regressions first)\n\n" +
                      overview(d, failPercent).renderMarkdown() + "\n### Per step against step-to-step noise\n\n" +
                      stepsHeading(d.steps) + ".\n\n" + stepsTable(d.steps).renderMarkdown();
    for (const auto& n : d.steps.notes) out += "\n- " + n;
    if (!d.steps.notes.empty()) out += "\n";
    if (!d.notes.empty()) {
        out += "\n### Notes\n\n";
        for (const auto& n : d.notes) out += "- " + n + "\n";
    }
    return out;
}

std::string formatDiffJson(const DiffResult& d, std::optional<double> failPercent) {
    nlohmann::ordered_json j;
    j["format"] = "overlapscope-diff";
    j["version"] = 1;
    j["base"] = d.basePath;
    j["candidate"] = d.candidatePath;
    j["fail_on_regression_pct"] = optionalNumber(failPercent);
    j["worst_regression_pct"] = optionalNumber(d.worstRegressionPct);
    j["regressed"] =
        failPercent ? nlohmann::ordered_json(exceedsRegression(d, *failPercent)) : nlohmann::ordered_json(nullptr);
    auto rows = nlohmann::ordered_json::array();
    for (const auto& r : d.rows) {
        nlohmann::ordered_json o;
        o["scope"] = r.scope == DiffScope::Summary ? "summary" : r.scope == DiffScope::Device ? "device" : "step";
        o["label"] = r.label;
        if (r.scope != DiffScope::Summary) {
            o["rank"] = r.rank;
            o["device"] = r.device;
        }
        if (r.scope == DiffScope::Step) o["step"] = r.step;
        o["worst_regression_pct"] = optionalNumber(r.worstRegressionPct);
        nlohmann::ordered_json metrics;
        for (const auto& m : r.metrics) {
            nlohmann::ordered_json v;
            v["base"] = optionalNumber(m.base);
            v["candidate"] = optionalNumber(m.candidate);
            v["change"] = optionalNumber(m.change);
            v["relative_pct"] = optionalNumber(m.relativePct);
            if (m.regressionPct) v["regression_pct"] = optionalNumber(m.regressionPct);
            metrics[m.name] = v;
        }
        o["metrics"] = metrics;
        rows.push_back(o);
    }
    j["rows"] = rows;
    j["notes"] = d.notes;
    j["step_comparisons"] = stepsJson(d.steps);
    return j.dump(2, ' ', false, kInvalidUtf8) + "\n";
}

}  // namespace osc::report
