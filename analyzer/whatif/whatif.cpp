#include "analyzer/whatif/whatif.h"

#include "analyzer/metrics/classify.h"
#include "analyzer/whatif/step_extract.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <stdexcept>

namespace osc::whatif {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

template <typename T>
T medianOf(std::vector<T> v) {
    if (v.empty()) return T{};
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    if (n % 2 == 1) return v[n / 2];
    if constexpr (std::is_floating_point_v<T>)
        return (v[n / 2 - 1] + v[n / 2]) / 2;
    else
        return v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

std::optional<double> medianOf(const std::vector<std::optional<double>>& v) {
    std::vector<double> present;
    for (const auto& x : v)
        if (x) present.push_back(*x);
    if (present.empty()) return std::nullopt;
    return medianOf(present);
}

std::string percent(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * x);
    return buf;
}

std::string milliseconds(TimeNs ns) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f ms", static_cast<double>(ns) / 1e6);
    return buf;
}

// The lag from gradients ready to the collective's start where its stream
// was idle, and the gap behind the previous collective where it was queued.
Latencies estimateLatencies(const std::vector<StepModel>& steps) {
    std::vector<TimeNs> lag, gap;
    for (const auto& s : steps)
        for (size_t k = 0; k < s.buckets.size(); ++k) {
            const ObservedBucket& b = s.buckets[k];
            if (!b.readyKnown) continue;
            if (k == 0 || b.ready >= s.buckets[k - 1].end) {
                if (b.start >= b.ready) lag.push_back(b.start - b.ready);
            } else {
                gap.push_back(std::max<TimeNs>(0, b.start - s.buckets[k - 1].end));
            }
        }
    return {medianOf(lag), medianOf(gap)};
}

// The observed bucket size a step shows: its largest bucket but the last
// (DDP's last bucket holds what is left), or its only one.
uint64_t largestFullBucket(const StepModel& s) {
    uint64_t largest = 0;
    const size_t n = s.buckets.size();
    for (size_t k = 0; k < n; ++k)
        if (k + 1 < n || n == 1) largest = std::max(largest, s.buckets[k].bytes);
    return largest;
}

// One device's modelled steps and the plans replayed on them: plan 0 is the
// observed buckets; scenario i (settings.bucketMb[i]) has plans planOf(i, 0)
// (the prediction), planOf(i, 1) (no overlap) and planOf(i, 2) (perfect).
size_t planOf(size_t scenario, size_t variant) { return 1 + 3 * scenario + variant; }

// Memory follows one step at a time, not every rank's steps at once (the
// GUI replays 1,024 ranks beside everything it holds): a step's plans live
// only while its step is scheduled (scheduleAll), its model is released to
// the figures finishDevice reads once it is evaluated, and the predictions
// are made group by group as the models go.
//
// What finishDevice reads of each (step, plan) of the steps scheduled
// together (one step name; its devices are the members): all of plan 0 and
// of each scenario's prediction, only the step time of its two bounds.
struct GroupPredictions {
    size_t scenarios = 0;
    std::vector<StepPrediction> replayed;    // [member]: plan 0
    std::vector<StepPrediction> predicted;   // [member * scenarios + i]: planOf(i, 0)
    std::vector<TimeNs> noOverlap, perfect;  // [member * scenarios + i]: planOf(i, 1), planOf(i, 2)

    GroupPredictions(size_t members, size_t scenarioCount)
        : scenarios(scenarioCount),
          replayed(members),
          predicted(members * scenarios),
          noOverlap(members * scenarios),
          perfect(members * scenarios) {}
    void record(size_t member, size_t plan, const StepPrediction& p) {
        if (plan == 0) {
            replayed[member] = p;
            return;
        }
        const size_t at = member * scenarios + (plan - 1) / 3;
        switch ((plan - 1) % 3) {
            case 0:
                predicted[at] = p;
                break;
            case 1:
                noOverlap[at] = p.step_ns;
                break;
            default:
                perfect[at] = p.step_ns;
                break;
        }
    }
};

// Where a step's predictions are: its group and its place among the members.
struct PredictionAt {
    size_t group = 0, member = 0;
};

struct DeviceWork {
    size_t result = 0;  // index into WhatIfResult::devices
    DeviceSteps steps;
    std::vector<PredictionAt> predicted;  // [step]
    // What finishDevice reads of the observed buckets, which are released
    // with the rest of a step's model once it is scheduled.
    std::vector<int> observedBuckets;  // [step]
    uint64_t largestFullBucket = 0;    // over the steps
};

// Plan 0 replays the observed buckets; then per bucket size the prediction,
// no overlap and perfect overlap (planOf).
std::vector<std::vector<PlannedBucket>> plansOf(const StepModel& s, const WhatIfSettings& settings) {
    std::vector<std::vector<PlannedBucket>> plans{observedPlan(s)};
    for (double mb : settings.bucketMb) {
        std::vector<PlannedBucket> plan = closeBuckets(s.points, mb * kMiB, settings.rule);
        plans.push_back(plan);
        plans.push_back(noOverlapPlan(s, plan));
        plans.push_back(perfectOverlapPlan(std::move(plan)));
    }
    return plans;
}

// Frees what only planning and evaluation read, keeping the observed window
// and exposure; the bucket figures finishDevice needs go to the device's work.
void releaseScheduled(DeviceWork& w, size_t step) {
    StepModel& m = w.steps.steps[step];
    w.observedBuckets[step] = static_cast<int>(m.buckets.size());
    w.largestFullBucket = std::max(w.largestFullBucket, largestFullBucket(m));
    std::vector<ObservedBucket>().swap(m.buckets);
    for (IntervalSet* set : {&m.keptCompute, &m.keptComm, &m.postCompute, &m.postComm}) IntervalSet().swap(*set);
    std::vector<ReadyPoint>().swap(m.points);
}

void addNotes(DeviceWhatIf& d, const DeviceSteps& ds, const WhatIfSettings& settings) {
    int fallback = 0, estimated = 0;
    for (const auto& s : ds.steps) {
        fallback += !s.hostOrder;
        estimated += !s.backwardMarked;
    }
    if (fallback)
        d.notes.push_back("no host launch records for " + std::to_string(fallback) +
                          " step(s): readiness taken from collectives that started on an idle stream");
    if (estimated && settings.readiness == ReadinessMode::Time)
        d.notes.push_back("no backward-pass range in " + std::to_string(estimated) +
                          " step(s): its start is estimated from the later buckets' rate");
    if (!ds.skipped.empty())
        d.notes.push_back(std::to_string(ds.skipped.size()) + " of " + std::to_string(d.steps_total) +
                          " steps not modelled (" + ds.skipped.front() + ")");
    if (ds.sizesInferred)
        d.notes.push_back(
            "the capture records no collective sizes: --grad-mb shared out in proportion to each "
            "collective's time above alpha");
    if (d.fit.alphaSource == "default" && !ds.sizesInferred) {
        char buf[160];
        std::snprintf(
            buf, sizeof buf,
            "one collective size in the capture: alpha is the default %.1f us, not fitted (--alpha-ns sets it)",
            d.fit.alpha_ns / 1000.0);
        d.notes.push_back(buf);
    } else if (d.fit.alphaSource == "zero") {
        d.notes.push_back("the fitted alpha was negative: refitted through zero");
    }
}

// Schedules every (step, plan): jointly across the devices that ran the same
// step (by name) when several ranks are modelled, else device by device.
std::vector<GroupPredictions> scheduleAll(std::vector<DeviceWork>& work, const std::vector<DeviceWhatIf>& devices,
                                          const WhatIfSettings& settings, size_t planCount) {
    std::map<std::string, std::vector<std::pair<size_t, size_t>>> byStepName;  // (work, step)
    for (size_t w = 0; w < work.size(); ++w)
        for (size_t s = 0; s < work[w].steps.steps.size(); ++s)
            byStepName[work[w].steps.steps[s].name].emplace_back(w, s);
    std::vector<GroupPredictions> groups;
    groups.reserve(byStepName.size());
    for (auto& w : work) {
        w.predicted.resize(w.steps.steps.size());
        w.observedBuckets.resize(w.steps.steps.size());
    }
    for (const auto& [name, members] : byStepName) {
        GroupPredictions& group = groups.emplace_back(members.size(), settings.bucketMb.size());
        for (size_t i = 0; i < members.size(); ++i)
            work[members[i].first].predicted[members[i].second] = {groups.size() - 1, i};
        const auto evaluate = [&](size_t member, size_t p, const std::vector<Interval>& scheduled) {
            const auto [w, s] = members[member];
            group.record(member, p, evaluateStep(work[w].steps.steps[s], scheduled));
        };
        std::vector<std::vector<std::vector<PlannedBucket>>> plans;  // [member][plan]
        for (const auto& [w, s] : members) plans.push_back(plansOf(work[w].steps.steps[s], settings));
        for (size_t p = 0; p < planCount; ++p) {
            bool joint = settings.jointRanks && members.size() >= 2;
            for (const auto& member : plans) joint = joint && member[p].size() == plans.front()[p].size();
            if (joint) {
                std::vector<const std::vector<PlannedBucket>*> plan;
                std::vector<const CostModel*> costs;
                std::vector<Latencies> lat;
                for (size_t i = 0; i < members.size(); ++i) {
                    plan.push_back(&plans[i][p]);
                    costs.push_back(&devices[work[members[i].first].result].fit);
                    lat.push_back(devices[work[members[i].first].result].latencies);
                }
                const auto out = scheduleJoint(plan, costs, lat);
                for (size_t i = 0; i < members.size(); ++i) evaluate(i, p, out[i]);
            } else {
                for (size_t i = 0; i < members.size(); ++i) {
                    const DeviceWhatIf& d = devices[work[members[i].first].result];
                    evaluate(i, p, scheduleBuckets(plans[i][p], d.fit, d.latencies));
                }
            }
        }
        for (const auto& [w, s] : members) releaseScheduled(work[w], s);
    }
    return groups;
}

// Field by field, the median over rows: a device's steps, or the devices.
ScenarioResult medianScenario(double mb, const std::vector<ScenarioResult>& rows) {
    ScenarioResult r;
    r.bucket_mb = mb;
    std::vector<int> buckets;
    std::vector<TimeNs> step, exposed, noOverlap, perfect;
    std::vector<std::optional<double>> ratio;
    for (const auto& row : rows) {
        buckets.push_back(row.buckets);
        step.push_back(row.step_ns);
        exposed.push_back(row.exposed_comm_ns);
        ratio.push_back(row.overlap_ratio);
        noOverlap.push_back(row.no_overlap_step_ns);
        perfect.push_back(row.perfect_overlap_step_ns);
    }
    r.buckets = medianOf(buckets);
    r.step_ns = medianOf(step);
    r.exposed_comm_ns = medianOf(exposed);
    r.overlap_ratio = medianOf(ratio);
    r.no_overlap_step_ns = medianOf(noOverlap);
    r.perfect_overlap_step_ns = medianOf(perfect);
    return r;
}

void markBest(std::vector<ScenarioResult>& scenarios) {
    auto best =
        std::min_element(scenarios.begin(), scenarios.end(),
                         [](const ScenarioResult& a, const ScenarioResult& b) { return a.step_ns < b.step_ns; });
    if (best != scenarios.end()) best->best = true;
}

void finishDevice(DeviceWhatIf& d, const DeviceWork& w, const std::vector<GroupPredictions>& groups,
                  const WhatIfSettings& settings) {
    const auto& steps = w.steps.steps;
    std::vector<TimeNs> measured, measuredExposed, replayed, replayedExposed;
    for (size_t s = 0; s < steps.size(); ++s) {
        const GroupPredictions& g = groups[w.predicted[s].group];
        const StepPrediction& p = g.replayed[w.predicted[s].member];
        measured.push_back(steps[s].end - steps[s].start);
        measuredExposed.push_back(steps[s].measuredExposedNs);
        replayed.push_back(p.step_ns);
        replayedExposed.push_back(p.exposed_comm_ns);
    }
    d.observed.bucket_mb = settings.observedMb.value_or(static_cast<double>(w.largestFullBucket) / kMiB);
    d.observed.buckets = medianOf(w.observedBuckets);
    d.observed.step_ns = medianOf(measured);
    d.observed.exposed_comm_ns = medianOf(measuredExposed);
    d.observed.replayed_step_ns = medianOf(replayed);
    d.observed.replayed_exposed_comm_ns = medianOf(replayedExposed);
    if (d.observed.step_ns > 0)
        d.self_check_error = static_cast<double>(d.observed.replayed_step_ns - d.observed.step_ns) /
                             static_cast<double>(d.observed.step_ns);

    for (size_t i = 0; i < settings.bucketMb.size(); ++i) {
        std::vector<ScenarioResult> perStep;
        for (size_t s = 0; s < steps.size(); ++s) {
            const GroupPredictions& g = groups[w.predicted[s].group];
            const size_t at = w.predicted[s].member * g.scenarios + i;
            const StepPrediction& p = g.predicted[at];
            ScenarioResult& row = perStep.emplace_back();
            row.buckets = p.buckets;
            row.step_ns = p.step_ns;
            row.exposed_comm_ns = p.exposed_comm_ns;
            row.overlap_ratio = p.overlap_ratio;
            row.no_overlap_step_ns = g.noOverlap[at];
            row.perfect_overlap_step_ns = g.perfect[at];
        }
        d.scenarios.push_back(medianScenario(settings.bucketMb[i], perStep));
    }
    markBest(d.scenarios);
}

void summarizeDevices(WhatIfResult& result) {
    std::vector<const DeviceWhatIf*> modelled;
    for (const auto& d : result.devices)
        if (d.modelled) modelled.push_back(&d);
    if (modelled.empty()) return;
    for (size_t i = 0; i < result.settings.bucketMb.size(); ++i) {
        std::vector<ScenarioResult> perDevice;
        for (const DeviceWhatIf* d : modelled) perDevice.push_back(d->scenarios[i]);
        result.summary.push_back(medianScenario(result.settings.bucketMb[i], perDevice));
    }
    markBest(result.summary);
    ObservedResult o;
    std::vector<double> mb;
    std::vector<int> buckets;
    std::vector<TimeNs> step, exposed, replayed, replayedExposed;
    std::vector<double> errors;
    for (const DeviceWhatIf* d : modelled) {
        mb.push_back(d->observed.bucket_mb);
        buckets.push_back(d->observed.buckets);
        step.push_back(d->observed.step_ns);
        exposed.push_back(d->observed.exposed_comm_ns);
        replayed.push_back(d->observed.replayed_step_ns);
        replayedExposed.push_back(d->observed.replayed_exposed_comm_ns);
        if (d->self_check_error) errors.push_back(*d->self_check_error);
    }
    o.bucket_mb = medianOf(mb);
    o.buckets = medianOf(buckets);
    o.step_ns = medianOf(step);
    o.exposed_comm_ns = medianOf(exposed);
    o.replayed_step_ns = medianOf(replayed);
    o.replayed_exposed_comm_ns = medianOf(replayedExposed);
    result.summaryObserved = o;
    if (!errors.empty()) result.summarySelfCheck = medianOf(errors);
}

}  // namespace

void WhatIfSettings::validate() const {
    if (bucketMb.empty()) throw std::invalid_argument("whatif: --bucket-mb needs at least one size");
    for (double mb : bucketMb)
        if (!(mb > 0) || !std::isfinite(mb) || mb > 1048576.0)
            throw std::invalid_argument("whatif: bucket sizes must be positive MiB up to 1048576");
    if (observedMb && (!(*observedMb > 0) || !std::isfinite(*observedMb)))
        throw std::invalid_argument("whatif: --observed-mb must be positive");
    if (gradMb && (!(*gradMb > 0) || !std::isfinite(*gradMb) || *gradMb > 1e9))
        throw std::invalid_argument("whatif: --grad-mb must be positive");
    if (alphaNs && (!(*alphaNs >= 0) || !std::isfinite(*alphaNs)))
        throw std::invalid_argument("whatif: --alpha-ns must be >= 0");
}

WhatIfResult runWhatIf(const Capture& capture, const Analysis& analysis, const WhatIfSettings& settings) {
    settings.validate();
    WhatIfResult result;
    result.settings = settings;
    ExtractSettings es;
    es.readiness = settings.readiness;
    if (settings.gradMb) es.gradBytes = *settings.gradMb * kMiB;
    es.defaultAlphaNs = settings.alphaNs.value_or(settings.defaultAlphaNs);
    try {
        es.backward = std::regex(settings.backwardPattern, std::regex::ECMAScript | std::regex::icase);
    } catch (const std::regex_error& e) {
        throw std::invalid_argument("invalid --backward-pattern '" + settings.backwardPattern + "': " + e.what());
    }
    try {
        es.forward = std::regex(settings.forwardPattern, std::regex::ECMAScript | std::regex::icase);
    } catch (const std::regex_error& e) {
        throw std::invalid_argument("invalid --forward-pattern '" + settings.forwardPattern + "': " + e.what());
    }
    ActivityClassifier classifier(capture.strings, analysis.settings);

    std::vector<DeviceWork> work;
    work.reserve(analysis.devices.size());
    for (size_t i = 0; i < analysis.devices.size(); ++i) {
        const DeviceAnalysis& da = analysis.devices[i];
        DeviceWhatIf d;
        d.rank = da.rank;
        d.device = da.device;
        d.label =
            capture.processes[static_cast<size_t>(da.processIndex)].label() + " device " + std::to_string(da.device);
        d.steps_total = static_cast<int>(da.steps.size());
        DeviceWork w;
        w.steps = extractDeviceSteps(capture, analysis, i, classifier, es);
        d.collective = w.steps.collective;
        d.stream = w.steps.stream;
        d.steps_modelled = static_cast<int>(w.steps.steps.size());
        d.gradients = w.steps.gradients;
        d.gradients_in_forward = w.steps.gradientsInForward;
        if (w.steps.steps.empty()) {
            d.reason = w.steps.reason;
            result.devices.push_back(std::move(d));
            continue;
        }
        // Sizes shared out by duration lie on a line through the default
        // alpha by construction: that alpha is an assumption, not a fit.
        d.fit = fitCost(w.steps.samples, settings.defaultAlphaNs,
                        w.steps.sizesInferred ? std::optional<double>(es.defaultAlphaNs) : settings.alphaNs);
        if (w.steps.sizesInferred) d.fit.alphaSource = settings.alphaNs ? "given" : "default";
        std::vector<CostSample>().swap(w.steps.samples);  // the fit's only
        if (settings.latencies) d.latencies = estimateLatencies(w.steps.steps);
        d.modelled = true;
        addNotes(d, w.steps, settings);
        w.result = result.devices.size();
        result.devices.push_back(std::move(d));
        work.push_back(std::move(w));
    }
    const std::vector<GroupPredictions> groups =
        scheduleAll(work, result.devices, settings, planOf(settings.bucketMb.size(), 0));
    for (const auto& w : work) {
        DeviceWhatIf& d = result.devices[w.result];
        finishDevice(d, w, groups, settings);
        if (d.self_check_error && std::fabs(*d.self_check_error) > kSelfCheckWarn)
            result.warnings.push_back(d.label + ": replaying the observed buckets gives " +
                                      milliseconds(d.observed.replayed_step_ns) + " against " +
                                      milliseconds(d.observed.step_ns) + " measured (" + percent(*d.self_check_error) +
                                      "): its predictions are likely off by as much");
    }
    summarizeDevices(result);
    return result;
}

std::optional<std::string> modelMisfit(const WhatIfResult& result) {
    // Forward-pass collectives first: then the self-check is beside the point.
    for (const auto& d : result.devices)
        if (d.modelled && d.gradients > 0 && 2 * d.gradients_in_forward > d.gradients)
            return "its " + d.collective + " collectives run inside the forward pass (" +
                   std::to_string(d.gradients_in_forward) + " of " + std::to_string(d.gradients) + " on " + d.label +
                   "): they are not the gradient buckets of a backward pass, so DDP bucket sizes do not apply";
    const DeviceWhatIf* worst = nullptr;
    for (const auto& d : result.devices)
        if (d.modelled && d.self_check_error && std::fabs(*d.self_check_error) > kSelfCheckRefuse &&
            (!worst || std::fabs(*d.self_check_error) > std::fabs(*worst->self_check_error)))
            worst = &d;
    if (worst)
        return "replaying its observed buckets misses the measured step by " + percent(*worst->self_check_error) +
               " on " + worst->label + " (" + milliseconds(worst->observed.replayed_step_ns) + " against " +
               milliseconds(worst->observed.step_ns) + "), more than the 10% the model is trusted to";
    return std::nullopt;
}

}  // namespace osc::whatif
