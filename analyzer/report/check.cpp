#include "analyzer/report/check.h"

#include "analyzer/metrics/bus_bandwidth.h"
#include "analyzer/report/device_pairs.h"
#include "analyzer/report/report_costs.h"
#include "analyzer/report/report_format.h"
#include "analyzer/report/report_patterns.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace osc::report {
namespace {

std::string num(double v, const char* fmt = "%.3f") {
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, v);
    return buf;
}

std::string ms(TimeNs ns) { return num(static_cast<double>(ns) / 1e6, "%.3f") + " ms"; }

// Why a device has no fraction of its link's peak (docs/design.md 4d).
std::string busBwUnmeasured(const DeviceAnalysis& d) {
    const auto& b = d.busbw;
    if (!b || b->measured == 0) return "no collective with bytes and a transfer time";
    const bool shared = std::any_of(d.findings.begin(), d.findings.end(),
                                    [](const Finding& f) { return f.kind == FindingKind::SharedGpu; });
    if (shared && !b->peak_busbw_gbps)
        return "it shares its GPU with other ranks, so its collectives cross no link; --peak-busbw-gbps "
               "compares them anyway";
    if (!b->peak_busbw_gbps) return "link unknown: give --peak-busbw-gbps";
    if (!b->median_busbw_gbps) return "communicator sizes unknown";
    if (*b->median_busbw_gbps > kMaxBusBwFraction * *b->peak_busbw_gbps)
        return "median bus bandwidth " + num(*b->median_busbw_gbps, "%.0f") + " GB/s, more than twice the peak " +
               num(*b->peak_busbw_gbps, "%.0f") + " GB/s of " + (b->link.empty() ? "the link" : b->link) +
               ": the peak is wrong, or the transfers too short to time";
    return "its collectives cross hosts: give --peak-busbw-gbps";
}

// The outcome of one per-step comparison (step_regression.h).
CheckOutcome stepOutcome(const StepComparison& r) {
    CheckOutcome o;
    o.scope = r.device;
    o.name = r.metric == StepMetric::StepTime      ? "step-time-regression"
             : r.metric == StepMetric::ExposedComm ? "step-exposed-comm-regression"
             : r.metric == StepMetric::Collective  ? "collective-time-regression: " + r.what
                                                   : "step-regression";
    o.message = r.device + ": " + r.sentence;
    o.passed = r.verdict != NoiseVerdict::Regression && !notJudgedFails(r);
    o.skipped = r.verdict == NoiseVerdict::TooFewSteps && o.passed;
    return o;
}

class Checker {
public:
    Checker(const Thresholds& t, std::vector<CheckOutcome>& out) : t_(t), out_(out) {}

    void scope(const std::string& who, const OverlapMetrics& m, const OverlapMetrics* base, bool perDevice,
               bool baselineMissing) {
        if (t_.minOverlapRatio) {
            const double min = *t_.minOverlapRatio;
            if (!m.overlap_ratio)
                add(who, "min-overlap-ratio", true, who + ": no communication, nothing to hide");
            else
                add(who, "min-overlap-ratio", *m.overlap_ratio >= min,
                    who + ": overlap ratio " + num(*m.overlap_ratio) +
                        (*m.overlap_ratio >= min ? " >= " : " below the minimum ") + num(min));
        }
        if (t_.maxExposedCommMs && perDevice) {
            const double limit = *t_.maxExposedCommMs;
            const bool ok = static_cast<double>(m.exposed_comm_ns) <= limit * 1e6;
            add(who, "max-exposed-comm-ms", ok,
                who + ": exposed communication " + ms(m.exposed_comm_ns) + (ok ? " <= " : " above the maximum ") +
                    num(limit) + " ms");
        }
        if (t_.maxExposedCommShare) {
            const double limit = *t_.maxExposedCommShare;
            const double share =
                m.window_ns > 0 ? static_cast<double>(m.exposed_comm_ns) / static_cast<double>(m.window_ns) : 0.0;
            const bool ok = share <= limit;
            add(who, "max-exposed-comm-share", ok,
                who + ": exposed communication is " + num(share) + " of the window" +
                    (ok ? ", <= " : ", above the maximum ") + num(limit));
        }
        if (t_.maxRegressionPercent) regression(who, m, base, baselineMissing);
    }

    // The 4b/4c thresholds, which exist per device only.
    void device(const std::string& who, const DeviceAnalysis& d) {
        if (t_.maxComputeSlowdown) {
            const double limit = *t_.maxComputeSlowdown;
            const auto& slow = d.interference.compute_slowdown;
            if (!slow) {
                skip(who, "max-compute-slowdown",
                     who + ": no overlapped kernel with an isolated baseline, slowdown not measured");
            } else {
                const bool ok = *slow <= limit;
                add(who, "max-compute-slowdown", ok,
                    who + ": compute under communication ran " + num(*slow * 100.0, "%.1f") + "% slower than alone" +
                        (ok ? ", <= " : ", above the maximum ") + num(limit * 100.0, "%.1f") + "%");
            }
        }
        if (t_.maxExposedTransferMs) {
            const double limit = *t_.maxExposedTransferMs;
            // Without the split (one device, or waiting unknown) all exposed
            // communication counts as transfer: the bound cannot be beaten
            // by what is not known.
            const bool split = d.wait && d.wait->known();
            const TimeNs v = split ? d.wait->exposed_transfer_ns : d.totals.exposed_comm_ns;
            const bool ok = static_cast<double>(v) <= limit * 1e6;
            const std::string why = split    ? ""
                                    : d.wait ? " (" + waitUnknownSentence(*d.wait) + ": all exposed communication)"
                                             : " (one device: all exposed communication)";
            add(who, "max-exposed-transfer-ms", ok,
                who + ": exposed transfer " + ms(v) + why + (ok ? " <= " : " above the maximum ") + num(limit) + " ms");
        }
        if (t_.maxDelayCausedMs) {
            const double limit = *t_.maxDelayCausedMs;
            if (!d.delay_caused_ns) {
                add(who, "max-delay-caused-ms", true, who + ": one device, no other rank to delay");
            } else {
                const bool ok = static_cast<double>(*d.delay_caused_ns) <= limit * 1e6;
                add(who, "max-delay-caused-ms", ok,
                    who + ": arriving last at " + std::to_string(d.last_arrivals.value_or(0)) +
                        " collectives kept others waiting " + ms(*d.delay_caused_ns) +
                        (ok ? " <= " : ", above the maximum ") + num(limit) + " ms");
            }
        }
    }

    // docs/design.md 4d, per device.
    void collectiveHealth(const std::string& who, const DeviceAnalysis& d) {
        if (t_.minBusBwFraction) {
            const double limit = *t_.minBusBwFraction;
            const auto& b = d.busbw;
            if (!b || !b->median_busbw_fraction) {
                const std::string why = who + ": bus bandwidth against the link's peak not measured (" +
                                        busBwUnmeasured(d) + ")" +
                                        (t_.requireBusBw ? ", and --require-busbw asks for it" : "");
                if (t_.requireBusBw)
                    add(who, "min-busbw-fraction", false, why);
                else
                    skip(who, "min-busbw-fraction", why);
            } else {
                const double f = *b->median_busbw_fraction;
                const bool ok = f >= limit;
                const std::string link = b->link.empty() ? "" : ", " + b->link;
                add(who, "min-busbw-fraction", ok,
                    who + ": collectives ran at a median " + num(f * 100.0, "%.1f") + "% of the link's peak bus " +
                        "bandwidth (" + num(b->peak_busbw_gbps.value_or(0), "%.0f") + " GB/s" + link + ")" +
                        (ok ? ", >= " : ", below the minimum ") + num(limit * 100.0, "%.1f") + "%");
            }
        }
        if (t_.maxStragglerDelayMs) {
            const double limit = *t_.maxStragglerDelayMs;
            if (!d.straggler) {
                add(who, "max-straggler-delay-ms", true,
                    who + (d.last_arrivals ? ": never arrived last at a collective"
                                           : ": one device, no other rank to be late for"));
            } else {
                const LateArrival& w = d.straggler->worst;
                const bool ok = static_cast<double>(w.late_ns) <= limit * 1e6;
                add(who, "max-straggler-delay-ms", ok,
                    who + ": arrived " + ms(w.late_ns) + " after the median rank at " +
                        (w.collective.empty() ? std::string("a collective") : w.collective) + " #" +
                        std::to_string(w.number) + (w.step.empty() ? "" : " of " + w.step) +
                        (ok ? ", <= " : ", above the maximum ") + num(limit) + " ms");
            }
        }
    }

    // The pipeline bubble of one device, or of all of them (the summary).
    void bubble(const std::string& who, const std::optional<PipelineStageMetrics>& m) {
        if (!t_.maxBubbleShare) return;
        const double limit = *t_.maxBubbleShare;
        if (!m || !m->bubble_share) {
            add(who, "max-bubble-share", true, who + ": no pipeline (no micro-batch ranges on two or more stages)");
            return;
        }
        const bool ok = *m->bubble_share <= limit;
        add(who, "max-bubble-share", ok,
            who + ": pipeline bubble " + num(*m->bubble_share) + " of the pipeline window (theory " +
                num(m->theoretical_bubble_share.value_or(0)) + ")" + (ok ? ", <= " : ", above the maximum ") +
                num(limit));
    }

    // The all-to-all of the worst step.
    void alltoall(const Analysis& a) {
        if (!t_.maxAllToAllImbalance) return;
        const double limit = *t_.maxAllToAllImbalance;
        double worst = 0;
        const AllToAllStep* step = worstAllToAll(a, &worst);
        if (!step) {
            add("summary", "max-alltoall-imbalance", true, "summary: no all-to-all with a measurable imbalance");
            return;
        }
        const bool ok = worst <= limit;
        add("summary", "max-alltoall-imbalance", ok,
            "summary: all-to-all imbalance " + num(worst, "%.2f") + (step->bytes_imbalance ? " (bytes)" : " (time)") +
                " in " + (step->step.empty() ? std::string("(outside steps)") : "step '" + step->step + "'") + ", " +
                deviceName(a, step->overloaded) + " overloaded" + (ok ? ", <= " : ", above the maximum ") +
                num(limit, "%.2f"));
    }

private:
    void regression(const std::string& who, const OverlapMetrics& m, const OverlapMetrics* base, bool baselineMissing) {
        const double p = *t_.maxRegressionPercent;
        const std::string allowed = " (allowed " + num(p, "%.1f") + "%)";
        if (baselineMissing || !base) {
            add(who, "overlap-ratio-regression", false, who + ": not in the baseline report");
            add(who, "exposed-comm-regression", false, who + ": not in the baseline report");
            return;
        }
        if (base->overlap_ratio && m.overlap_ratio) {
            const double floor = *base->overlap_ratio * (1.0 - p / 100.0);
            const bool ok = *m.overlap_ratio >= floor;
            const double drop =
                *base->overlap_ratio > 0 ? (1.0 - *m.overlap_ratio / *base->overlap_ratio) * 100.0 : 0.0;
            add(who, "overlap-ratio-regression", ok,
                who + ": overlap ratio " + num(*m.overlap_ratio) + " vs baseline " + num(*base->overlap_ratio) +
                    (ok ? "" : ", " + num(drop, "%.1f") + "% lower") + allowed);
        } else {
            add(who, "overlap-ratio-regression", true, who + ": overlap ratio not defined in both (no communication)");
        }
        const double ceiling = static_cast<double>(base->exposed_comm_ns) * (1.0 + p / 100.0);
        const bool ok = static_cast<double>(m.exposed_comm_ns) <= ceiling;
        std::string growth;
        if (!ok && base->exposed_comm_ns > 0)
            growth =
                ", " +
                num((static_cast<double>(m.exposed_comm_ns) / static_cast<double>(base->exposed_comm_ns) - 1.0) * 100.0,
                    "%.1f") +
                "% more";
        add(who, "exposed-comm-regression", ok,
            who + ": exposed communication " + ms(m.exposed_comm_ns) + " vs baseline " + ms(base->exposed_comm_ns) +
                growth + allowed);
    }

    void add(const std::string& who, const std::string& name, bool ok, const std::string& msg) {
        out_.push_back(CheckOutcome{who, name, ok, false, msg});
    }
    void skip(const std::string& who, const std::string& name, const std::string& msg) {
        out_.push_back(CheckOutcome{who, name, true, true, msg});
    }

    const Thresholds& t_;
    std::vector<CheckOutcome>& out_;
};

void validate(const Thresholds& t, const Analysis* baseline) {
    if (!t.any())
        throw std::invalid_argument(
            "check: give at least one threshold (--min-overlap-ratio, --max-exposed-comm-ms, "
            "--max-exposed-comm-share, --max-compute-slowdown, --max-exposed-transfer-ms, "
            "--max-delay-caused-ms, --max-bubble-share, --max-alltoall-imbalance, --min-busbw-fraction, "
            "--max-straggler-delay-ms, or --baseline with --max-regression)");
    auto finite = [](double v) { return std::isfinite(v); };
    if (t.minOverlapRatio && !(finite(*t.minOverlapRatio) && *t.minOverlapRatio >= 0 && *t.minOverlapRatio <= 1))
        throw std::invalid_argument("check: --min-overlap-ratio must be between 0 and 1");
    if (t.maxExposedCommShare &&
        !(finite(*t.maxExposedCommShare) && *t.maxExposedCommShare >= 0 && *t.maxExposedCommShare <= 1))
        throw std::invalid_argument("check: --max-exposed-comm-share must be between 0 and 1");
    if (t.maxExposedCommMs && !(finite(*t.maxExposedCommMs) && *t.maxExposedCommMs >= 0))
        throw std::invalid_argument("check: --max-exposed-comm-ms must be >= 0");
    if (t.maxComputeSlowdown && !finite(*t.maxComputeSlowdown))
        throw std::invalid_argument("check: --max-compute-slowdown must be a number");
    if (t.maxExposedTransferMs && !(finite(*t.maxExposedTransferMs) && *t.maxExposedTransferMs >= 0))
        throw std::invalid_argument("check: --max-exposed-transfer-ms must be >= 0");
    if (t.maxDelayCausedMs && !(finite(*t.maxDelayCausedMs) && *t.maxDelayCausedMs >= 0))
        throw std::invalid_argument("check: --max-delay-caused-ms must be >= 0");
    if (t.maxBubbleShare && !(finite(*t.maxBubbleShare) && *t.maxBubbleShare >= 0 && *t.maxBubbleShare <= 1))
        throw std::invalid_argument("check: --max-bubble-share must be between 0 and 1");
    if (t.maxAllToAllImbalance && !(finite(*t.maxAllToAllImbalance) && *t.maxAllToAllImbalance >= 1))
        throw std::invalid_argument("check: --max-alltoall-imbalance must be at least 1 (max / mean)");
    if (t.minBusBwFraction && !(finite(*t.minBusBwFraction) && *t.minBusBwFraction >= 0 && *t.minBusBwFraction <= 1))
        throw std::invalid_argument("check: --min-busbw-fraction must be between 0 and 1");
    if (t.maxStragglerDelayMs && !(finite(*t.maxStragglerDelayMs) && *t.maxStragglerDelayMs >= 0))
        throw std::invalid_argument("check: --max-straggler-delay-ms must be >= 0");
    if (t.maxRegressionPercent && !(finite(*t.maxRegressionPercent) && *t.maxRegressionPercent >= 0))
        throw std::invalid_argument("check: --max-regression must be >= 0");
    if (t.maxRegressionPercent && !baseline)
        throw std::invalid_argument("check: --max-regression needs --baseline REPORT.json");
    if (t.stepRegression && !baseline)
        throw std::invalid_argument("check: --confidence, --min-effect and --min-steps need --baseline REPORT.json");
    if (baseline && !t.maxRegressionPercent && !t.stepRegression)
        throw std::invalid_argument("check: --baseline needs --max-regression PERCENT or the per-step comparison");
    if (t.stepRegression) {
        try {
            validateNoiseOptions(*t.stepRegression);
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(std::string("check: ") + e.what());
        }
    }
    if (t.requireBusBw && !t.minBusBwFraction)
        throw std::invalid_argument("check: --require-busbw needs --min-busbw-fraction");
}

std::string xmlEscape(const std::string& s) {
    std::string out;
    for (unsigned char c : s) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&apos;";
                break;
            default:
                // Control characters are not allowed in XML 1.0.
                if (c < 0x20 && c != '\n' && c != '\t' && c != '\r')
                    out += '?';
                else
                    out += static_cast<char>(c);
        }
    }
    return out;
}

}  // namespace

std::vector<CheckOutcome> runChecks(const Analysis& current, const Thresholds& t, const Analysis* baseline) {
    validate(t, baseline);
    std::vector<CheckOutcome> out;
    Checker checker(t, out);
    // Each device's baseline device; -1 when the baseline lacks it.
    std::vector<int> baseOf(current.devices.size(), -1);
    if (baseline)
        for (const DevicePair& p : pairDevices(*baseline, current))
            if (p.candidate >= 0) baseOf[static_cast<size_t>(p.candidate)] = p.base;
    std::optional<StepComparisons> steps;
    if (baseline && t.stepRegression) steps = compareSteps(*baseline, current, *t.stepRegression);
    for (size_t i = 0; i < current.devices.size(); ++i) {
        const auto& d = current.devices[i];
        const DeviceAnalysis* b = baseOf[i] >= 0 ? &baseline->devices[static_cast<size_t>(baseOf[i])] : nullptr;
        checker.scope(deviceLabel(d), d.totals, b ? &b->totals : nullptr, true, baseline && !b);
        if (steps && !b)
            out.push_back(
                {deviceLabel(d), "step-regression", false, false, deviceLabel(d) + ": not in the baseline report"});
        if (steps)
            for (const auto& r : steps->rows)
                if (r.candidateDevice == static_cast<int>(i)) out.push_back(stepOutcome(r));
        checker.device(deviceLabel(d), d);
        checker.collectiveHealth(deviceLabel(d), d);
        checker.bubble(deviceLabel(d), d.pipeline);
        if (d.droppedRecords && *d.droppedRecords > 0)
            out.push_back({deviceLabel(d), "dropped-records", t.allowDropped, false,
                           deviceLabel(d) + ": " + std::to_string(*d.droppedRecords) +
                               " records were dropped during capture; the metrics undercount GPU activity" +
                               (t.allowDropped ? " (accepted: --allow-dropped)" : " (--allow-dropped accepts it)")});
    }
    // An absolute ms limit is per device: the summary sums devices, so it
    // would grow with the rank count.
    if (current.devices.size() > 1) {
        checker.scope("summary", current.summary, baseline ? &baseline->summary : nullptr, false, false);
        checker.bubble("summary", pipelineSummary(current));
    }
    checker.alltoall(current);
    return out;
}

std::string formatJunit(const std::vector<CheckOutcome>& outcomes, const std::string& suiteName) {
    size_t failures = 0, skipped = 0;
    for (const auto& o : outcomes) {
        if (!o.passed) ++failures;
        if (o.skipped) ++skipped;
    }
    std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    xml += "<testsuites name=\"overlapscope\" tests=\"" + std::to_string(outcomes.size()) + "\" failures=\"" +
           std::to_string(failures) + "\">\n";
    xml += "  <testsuite name=\"" + xmlEscape(suiteName) + "\" tests=\"" + std::to_string(outcomes.size()) +
           "\" failures=\"" + std::to_string(failures) + "\" errors=\"0\" skipped=\"" + std::to_string(skipped) +
           "\">\n";
    for (const auto& o : outcomes) {
        xml += "    <testcase classname=\"" + xmlEscape(o.scope) + "\" name=\"" + xmlEscape(o.name) + "\"";
        if (o.skipped) {
            xml += ">\n      <skipped message=\"" + xmlEscape(o.message) + "\"/>\n    </testcase>\n";
        } else if (o.passed) {
            xml += ">\n      <system-out>" + xmlEscape(o.message) + "</system-out>\n    </testcase>\n";
        } else {
            xml += ">\n      <failure message=\"" + xmlEscape(o.message) + "\" type=\"threshold\">" +
                   xmlEscape(o.message) + "</failure>\n    </testcase>\n";
        }
    }
    xml += "  </testsuite>\n</testsuites>\n";
    return xml;
}

}  // namespace osc::report
