#include "analyzer/whatif/whatif_report.h"

#include "analyzer/report/json_or_null.h"
#include "analyzer/report/text_table.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

namespace osc::whatif {
namespace {

using nlohmann::ordered_json;
using report::orNull;
constexpr auto kInvalidUtf8 = nlohmann::json::error_handler_t::replace;

std::string ms(TimeNs ns) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ns) / 1e6);
    return buf;
}

std::string signedPercent(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * x);
    return buf;
}

std::string ratio(const std::optional<double>& r) {
    if (!r) return "n/a";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", *r);
    return buf;
}

std::string relative(TimeNs value, TimeNs reference) {
    if (reference <= 0) return "n/a";
    return signedPercent(static_cast<double>(value - reference) / static_cast<double>(reference));
}

const char* ruleName(BucketRule r) { return r == BucketRule::AtLeast ? "at-least" : "at-most"; }
const char* readinessName(ReadinessMode m) { return m == ReadinessMode::Kernels ? "kernels" : "time"; }

std::string scenarioTable(const std::vector<ScenarioResult>& scenarios, TimeNs observedStep) {
    report::TextTable t(
        {"bucket MiB", "buckets", "step ms", "exposed ms", "overlap", "vs observed", "no-overlap ms", "perfect ms"});
    for (const auto& s : scenarios)
        t.addRow({formatMb(s.bucket_mb) + (s.best ? " *" : ""), std::to_string(s.buckets), ms(s.step_ns),
                  ms(s.exposed_comm_ns), ratio(s.overlap_ratio), relative(s.step_ns, observedStep),
                  ms(s.no_overlap_step_ns), ms(s.perfect_overlap_step_ns)});
    return t.render("  ");
}

std::string bestLine(const std::vector<ScenarioResult>& scenarios, TimeNs observedStep) {
    for (const auto& s : scenarios)
        if (s.best)
            return "  best: " + formatMb(s.bucket_mb) + " MiB, " + ms(s.step_ns) + " ms per step (" +
                   relative(s.step_ns, observedStep) + " against the observed " + ms(observedStep) + " ms)\n";
    return "";
}

std::string observedLines(const ObservedResult& o, const std::optional<double>& selfCheck) {
    std::string out = "  observed: " + formatMb(o.bucket_mb) + " MiB buckets, " + std::to_string(o.buckets) +
                      " per step: step " + ms(o.step_ns) + " ms, exposed " + ms(o.exposed_comm_ns) + " ms\n";
    out += "  self-check: the observed buckets replayed give step " + ms(o.replayed_step_ns) + " ms, exposed " +
           ms(o.replayed_exposed_comm_ns) + " ms; error " + (selfCheck ? signedPercent(*selfCheck) : "n/a") +
           (selfCheck && std::fabs(*selfCheck) > kSelfCheckWarn ? " (above 5%: treat the predictions with care)" : "") +
           "\n";
    return out;
}

std::string fitLine(const DeviceWhatIf& d) {
    char buf[256];
    const double gbps = d.fit.ns_per_byte > 0 ? 1.0 / d.fit.ns_per_byte : 0.0;
    std::snprintf(buf, sizeof buf,
                  "  cost: %.1f us + %.4f ns/byte (%.1f GB/s) per %s, %s from %d samples, %d sizes, r2 %s\n",
                  d.fit.alpha_ns / 1000.0, d.fit.ns_per_byte, gbps,
                  d.collective == "copies" ? "copy round trip" : d.collective.c_str(),
                  d.fit.alphaSource == "fit" ? "fitted" : ("alpha " + d.fit.alphaSource).c_str(), d.fit.samples,
                  d.fit.distinctSizes, ratio(d.fit.r2).c_str());
    std::string out = buf;
    std::snprintf(buf, sizeof buf,
                  "  latencies: gradient ready to collective start %.1f us, queued behind the previous %.1f us\n",
                  static_cast<double>(d.latencies.readyLagNs) / 1000.0,
                  static_cast<double>(d.latencies.queueGapNs) / 1000.0);
    return out + buf;
}

ordered_json scenarioJson(const ScenarioResult& s) {
    ordered_json j;
    j["bucket_mb"] = s.bucket_mb;
    j["buckets"] = s.buckets;
    j["step_ns"] = s.step_ns;
    j["exposed_comm_ns"] = s.exposed_comm_ns;
    j["overlap_ratio"] = orNull(s.overlap_ratio);
    j["best"] = s.best;
    j["no_overlap_step_ns"] = s.no_overlap_step_ns;
    j["perfect_overlap_step_ns"] = s.perfect_overlap_step_ns;
    return j;
}

ordered_json observedJson(const ObservedResult& o) {
    ordered_json j;
    j["bucket_mb"] = o.bucket_mb;
    j["buckets"] = o.buckets;
    j["step_ns"] = o.step_ns;
    j["exposed_comm_ns"] = o.exposed_comm_ns;
    j["replayed_step_ns"] = o.replayed_step_ns;
    j["replayed_exposed_comm_ns"] = o.replayed_exposed_comm_ns;
    return j;
}

}  // namespace

std::string formatMb(double mb) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.3f", mb);
    std::string s = buf;
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
}

std::string formatWhatIfText(const WhatIfResult& result, const ReportOptions& options) {
    int modelled = 0;
    for (const auto& d : result.devices) modelled += d.modelled;
    std::string out = "What-if: other DDP bucket sizes (" + std::to_string(modelled) + " of " +
                      std::to_string(result.devices.size()) + " devices modelled; buckets close " +
                      (result.settings.rule == BucketRule::AtLeast ? "at the first gradient reaching the size"
                                                                   : "before a gradient would exceed the size") +
                      ")\n";
    if (result.devices.empty()) out += "\nThe capture holds no GPU activity.\n";
    if (options.summary && result.summaryObserved) {
        out += "\nmedian over " + std::to_string(modelled) + " modelled devices\n";
        out += observedLines(*result.summaryObserved, result.summarySelfCheck);
        out += "\n" + scenarioTable(result.summary, result.summaryObserved->step_ns);
        out += bestLine(result.summary, result.summaryObserved->step_ns);
    }
    for (const auto& d : result.devices) {
        if (options.summary && d.modelled) continue;
        out += "\n" + d.label;
        if (!d.modelled) {
            out += ": not modelled: " + d.reason + "\n";
            continue;
        }
        out += ": " + (d.collective == "copies" ? std::string("communication copies") : d.collective) + " on stream " +
               std::to_string(d.stream) + ", " + std::to_string(d.steps_modelled) + " of " +
               std::to_string(d.steps_total) + " steps modelled\n";
        out += fitLine(d);
        out += observedLines(d.observed, d.self_check_error);
        out += "\n" + scenarioTable(d.scenarios, d.observed.step_ns);
        out += bestLine(d.scenarios, d.observed.step_ns);
        for (const auto& n : d.notes) out += "  note: " + n + "\n";
    }
    out +=
        "\nTimes are medians over steps; * marks the shortest predicted step. no-overlap: every collective "
        "after the compute; perfect: all bytes back to back from the first gradient.\n";
    return out;
}

std::string formatWhatIfJson(const WhatIfResult& result, const ReportOptions& options) {
    ordered_json j;
    j["format"] = "overlapscope-whatif";
    j["version"] = 1;
    j["inputs"] = options.inputs;
    ordered_json settings;
    settings["bucket_mb"] = result.settings.bucketMb;
    settings["bucket_rule"] = ruleName(result.settings.rule);
    settings["readiness"] = readinessName(result.settings.readiness);
    settings["latencies"] = result.settings.latencies;
    settings["joint_ranks"] = result.settings.jointRanks;
    j["settings"] = settings;
    ordered_json devices = ordered_json::array();
    for (const auto& d : result.devices) {
        ordered_json x;
        x["rank"] = d.rank;
        x["device"] = d.device;
        x["label"] = d.label;
        x["modelled"] = d.modelled;
        x["reason"] = d.modelled ? ordered_json(nullptr) : ordered_json(d.reason);
        x["collective"] = d.collective.empty() ? ordered_json(nullptr) : ordered_json(d.collective);
        x["steps"] = d.steps_total;
        x["steps_modelled"] = d.steps_modelled;
        if (d.modelled) {
            ordered_json fit;
            fit["alpha_ns"] = d.fit.alpha_ns;
            fit["ns_per_byte"] = d.fit.ns_per_byte;
            fit["samples"] = d.fit.samples;
            fit["r2"] = orNull(d.fit.r2);
            fit["alpha_source"] = d.fit.alphaSource;
            fit["ready_lag_ns"] = d.latencies.readyLagNs;
            fit["queue_gap_ns"] = d.latencies.queueGapNs;
            x["fit"] = fit;
            x["observed"] = observedJson(d.observed);
            x["self_check_error"] = orNull(d.self_check_error);
        } else {
            x["fit"] = nullptr;
            x["observed"] = nullptr;
            x["self_check_error"] = nullptr;
        }
        ordered_json scenarios = ordered_json::array();
        for (const auto& s : d.scenarios) scenarios.push_back(scenarioJson(s));
        x["scenarios"] = scenarios;
        x["notes"] = d.notes;
        devices.push_back(x);
    }
    j["devices"] = devices;
    if (options.summary && result.summaryObserved) {
        ordered_json s;
        s["observed"] = observedJson(*result.summaryObserved);
        s["self_check_error"] = orNull(result.summarySelfCheck);
        ordered_json scenarios = ordered_json::array();
        for (const auto& x : result.summary) scenarios.push_back(scenarioJson(x));
        s["scenarios"] = scenarios;
        j["summary"] = s;
    }
    j["warnings"] = result.warnings;
    return j.dump(2, ' ', false, kInvalidUtf8) + "\n";
}

}  // namespace osc::whatif
