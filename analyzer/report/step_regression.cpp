#include "analyzer/report/step_regression.h"

#include "analyzer/report/device_pairs.h"
#include "analyzer/report/report_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

namespace osc::report {
namespace {

// One per-step quantity of one device: its values in step order.
struct Series {
    StepMetric metric = StepMetric::StepTime;
    std::string what, collective;
    int communicator = -1;
    std::vector<TimeNs> values;
};

// The step time, the exposed communication and, per collective type and
// communicator, the summed duration of its operations in each step that
// has any.
std::vector<Series> seriesOf(const DeviceAnalysis& d) {
    std::vector<Series> out(2);
    out[0].metric = StepMetric::StepTime;
    out[0].what = "step time";
    out[1].metric = StepMetric::ExposedComm;
    out[1].what = "exposed communication";
    for (const auto& s : d.steps) {
        out[0].values.push_back(s.metrics.window_ns);
        out[1].values.push_back(s.metrics.exposed_comm_ns);
    }
    std::map<uint64_t, int> communicators;  // hash -> order of first use
    // (type, communicator) -> step -> summed duration
    std::map<std::pair<std::string, int>, std::map<int, TimeNs>> byKey;
    for (const auto& c : d.collectives) {
        int communicator = -1;
        if (c.commHash) communicator = communicators.emplace(*c.commHash, communicators.size()).first->second;
        if (c.step < 0 || static_cast<size_t>(c.step) >= d.steps.size()) continue;
        byKey[{c.collectiveOrName().str(), communicator}][c.step] += c.duration_ns;
    }
    for (const auto& [key, perStep] : byKey) {
        Series s;
        s.metric = StepMetric::Collective;
        s.collective = key.first;
        s.communicator = key.second;
        s.what = key.first +
                 (key.second >= 0 ? " on communicator #" + std::to_string(key.second) : " (communicator unknown)");
        for (const auto& [step, ns] : perStep) s.values.push_back(ns);
        out.push_back(std::move(s));
    }
    return out;
}

double median(std::vector<TimeNs> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? static_cast<double>(v[n / 2])
                 : (static_cast<double>(v[n / 2 - 1]) + static_cast<double>(v[n / 2])) / 2.0;
}

std::string printf1(const char* fmt, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, v);
    return buf;
}

// "95", "99.5", "99.79"
std::string levelText(double level) {
    std::string s = printf1("%.2f", level * 100.0);
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s;
}

std::string stepsText(size_t base, size_t candidate) {
    return base == candidate ? std::to_string(base) + " steps each"
                             : std::to_string(base) + " and " + std::to_string(candidate) + " steps";
}

std::string tooFewText(const StepComparison& r, const NoiseOptions& o, size_t judged) {
    std::string s = r.what + ": too few steps to tell a change from noise (" + std::to_string(r.baseSteps) +
                    " in the baseline, " + std::to_string(r.candidateSteps) + " in the candidate";
    if (r.baseSteps < o.minSteps || r.candidateSteps < o.minSteps)
        return s + "; at least " + std::to_string(o.minSteps) + " each)" +
               (r.metric == StepMetric::Steps && (r.baseSteps == 0 || r.candidateSteps == 0)
                    ? "; no step ranges were found: --step-pattern names them"
                    : "");
    return s + "; none give an interval at " + levelText(o.confidence) + " % over " + std::to_string(judged) +
           " comparisons)";
}

std::string sentenceOf(const StepComparison& r, const NoiseOptions& o, size_t judged) {
    if (r.verdict == NoiseVerdict::TooFewSteps) return tooFewText(r, o, judged);
    std::string s = r.what + " ";
    if (r.shiftPct) {
        s += printf1("%+.1f %%", r.shiftPct->shift) + " [" + printf1("%+.1f", r.shiftPct->low) + ", " +
             printf1("%+.1f", r.shiftPct->high) + "]";
    } else {
        s += printf1("%+.3f ms", r.shiftNs->shift / 1e6) + " [" + printf1("%+.3f", r.shiftNs->low / 1e6) + ", " +
             printf1("%+.3f", r.shiftNs->high / 1e6) + "] per step";
    }
    s += " at " + levelText(o.confidence) + " %";
    if (judged > 1) s += " over " + std::to_string(judged) + " comparisons";
    s += ", " + stepsText(r.baseSteps, r.candidateSteps) + " (median " + printf1("%.3f ms", *r.baseMedianNs / 1e6) +
         " -> " + printf1("%.3f ms", *r.candidateMedianNs / 1e6) + ")";
    switch (r.verdict) {
        case NoiseVerdict::Regression:
            return s + ": worse beyond step-to-step noise";
        case NoiseVerdict::Improvement:
            return s + ": better beyond step-to-step noise";
        case NoiseVerdict::BelowMinimumEffect:
            return s + ": a change beyond the noise, but under the minimum effect of " +
                   printf1("%.1f", o.minEffectPercent) + " %";
        default:
            return s + ": within step-to-step noise";
    }
}

// The verdict of a judged row: beyond the noise when the interval excludes
// no change, and counted when the shift itself reaches the minimum effect.
NoiseVerdict verdictOf(const ShiftInterval& ns, double baseMedian, const NoiseOptions& o) {
    const double smallest = std::max(o.minEffectPercent / 100.0 * baseMedian, kSmallestRegressionNs);
    if (ns.low > 0) return ns.shift >= smallest ? NoiseVerdict::Regression : NoiseVerdict::BelowMinimumEffect;
    if (ns.high < 0) return -ns.shift >= smallest ? NoiseVerdict::Improvement : NoiseVerdict::BelowMinimumEffect;
    return NoiseVerdict::WithinNoise;
}

struct Pending {
    StepComparison row;
    std::vector<TimeNs> base, candidate;
    bool judgeable(size_t minSteps) const {
        return row.metric != StepMetric::Steps && base.size() >= minSteps && candidate.size() >= minSteps;
    }
};

// The rows of one device present in both runs: its series paired by kind,
// collective and communicator; one row when it has too few steps.
void pairSeries(const DeviceAnalysis& b, const DeviceAnalysis& c, const StepComparison& common, size_t minSteps,
                std::vector<Pending>& pending, std::vector<std::string>& notes) {
    if (b.steps.size() < minSteps || c.steps.size() < minSteps) {
        StepComparison r = common;
        r.what = "step time, exposed communication and collectives";
        r.baseSteps = b.steps.size();
        r.candidateSteps = c.steps.size();
        pending.push_back({r, {}, {}});
        return;
    }
    const auto bs = seriesOf(b), cs = seriesOf(c);
    const auto find = [](const std::vector<Series>& all, const Series& s) -> const Series* {
        for (const auto& x : all)
            if (x.metric == s.metric && x.collective == s.collective && x.communicator == s.communicator) return &x;
        return nullptr;
    };
    for (const auto& s : bs) {
        const Series* other = find(cs, s);
        if (!other) {
            notes.push_back(common.device + ": " + s.what + " is only in the baseline");
            continue;
        }
        StepComparison r = common;
        r.metric = s.metric;
        r.what = s.what;
        r.collective = s.collective;
        r.communicator = s.communicator;
        r.baseSteps = s.values.size();
        r.candidateSteps = other->values.size();
        pending.push_back({r, s.values, other->values});
    }
    for (const auto& s : cs)
        if (!find(bs, s)) notes.push_back(common.device + ": " + s.what + " is only in the candidate");
}

}  // namespace

void validateNoiseOptions(const NoiseOptions& o) {
    if (!(std::isfinite(o.confidence) && o.confidence >= 0.5 && o.confidence < 1))
        throw std::invalid_argument("--confidence must be at least 0.5 and below 1 (0.95 = 95 %)");
    if (!(std::isfinite(o.minEffectPercent) && o.minEffectPercent >= 0))
        throw std::invalid_argument("--min-effect must be a percentage >= 0");
    if (o.minSteps < 2) throw std::invalid_argument("--min-steps must be at least 2");
}

StepComparisons compareSteps(const Analysis& base, const Analysis& candidate, const NoiseOptions& options) {
    validateNoiseOptions(options);
    StepComparisons out;
    out.options = options;
    std::vector<Pending> pending;
    for (const DevicePair& p : pairDevices(base, candidate)) {
        if (p.base < 0 || p.candidate < 0) {
            const auto& d = p.base < 0 ? candidate.devices[static_cast<size_t>(p.candidate)]
                                       : base.devices[static_cast<size_t>(p.base)];
            out.notes.push_back(deviceLabel(d) + " is only in the " + (p.base < 0 ? "candidate" : "baseline"));
            continue;
        }
        StepComparison common;
        common.device = deviceLabel(candidate.devices[static_cast<size_t>(p.candidate)]);
        common.baseDevice = p.base;
        common.candidateDevice = p.candidate;
        pairSeries(base.devices[static_cast<size_t>(p.base)], candidate.devices[static_cast<size_t>(p.candidate)],
                   common, options.minSteps, pending, out.notes);
    }
    out.judged = static_cast<size_t>(
        std::count_if(pending.begin(), pending.end(), [&](const Pending& p) { return p.judgeable(options.minSteps); }));
    const double level = out.judged ? 1.0 - (1.0 - options.confidence) / static_cast<double>(out.judged) : 0.0;
    std::map<std::pair<size_t, size_t>, long long> orders;  // most rows share their sizes
    const auto order = [&](size_t n, size_t m) {
        const auto it = orders.find({n, m});
        return it != orders.end() ? it->second : orders[{n, m}] = confidenceOrder(n, m, level);
    };
    for (auto& p : pending) {
        StepComparison& r = p.row;
        r.level = level;
        if (p.judgeable(options.minSteps)) {
            r.baseMedianNs = median(p.base);
            r.candidateMedianNs = median(p.candidate);
            r.shiftNs = shiftIntervalAt(p.base, p.candidate, order(p.base.size(), p.candidate.size()));
            if (r.shiftNs) {
                if (*r.baseMedianNs > 0) {
                    const double scale = 100.0 / *r.baseMedianNs;
                    r.shiftPct =
                        ShiftInterval{r.shiftNs->shift * scale, r.shiftNs->low * scale, r.shiftNs->high * scale};
                }
                r.verdict = verdictOf(*r.shiftNs, *r.baseMedianNs, options);
            }
        }
        r.sentence = sentenceOf(r, options, out.judged);
        out.rows.push_back(std::move(r));
    }
    return out;
}

bool notJudgedFails(const StepComparison& row) {
    return row.verdict == NoiseVerdict::TooFewSteps && row.metric != StepMetric::Collective;
}

bool stepRegressed(const StepComparisons& comparisons, bool tooFewFails) {
    return std::any_of(comparisons.rows.begin(), comparisons.rows.end(), [&](const StepComparison& r) {
        return r.verdict == NoiseVerdict::Regression || (tooFewFails && notJudgedFails(r));
    });
}

std::string toString(NoiseVerdict verdict) {
    switch (verdict) {
        case NoiseVerdict::Regression:
            return "regression";
        case NoiseVerdict::Improvement:
            return "improvement";
        case NoiseVerdict::BelowMinimumEffect:
            return "below-minimum-effect";
        case NoiseVerdict::WithinNoise:
            return "within-noise";
        default:
            return "too-few-steps";
    }
}

std::string toString(StepMetric metric) {
    switch (metric) {
        case StepMetric::StepTime:
            return "step_time";
        case StepMetric::ExposedComm:
            return "exposed_comm";
        case StepMetric::Collective:
            return "collective";
        default:
            return "steps";
    }
}

}  // namespace osc::report
