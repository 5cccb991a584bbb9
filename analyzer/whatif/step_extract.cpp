#include "analyzer/whatif/step_extract.h"

#include "analyzer/metrics/coverage.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace osc::whatif {
namespace {

constexpr TimeNs kUnknown = -1;
const std::string kCopies = "copies", kAllReduce = "AllReduce", kReduceScatter = "ReduceScatter";

// One piece of GPU work of the device, with what the model needs of it.
struct Activity {
    TimeNs start = 0, end = 0, launch = kUnknown;
    Category category = Category::Compute;
    uint32_t name = kNoId, stream = 0;
    bool copy = false;
    CopyKind copyKind = CopyKind::Unknown;
    int op = -1;  // index in DeviceAnalysis::collectives (kernels)
    std::optional<uint64_t> bytes;
    const std::string* collective = nullptr;  // a gradient candidate's kind (kAllReduce, ...), else null
    TimeNs lastArrival = std::numeric_limits<TimeNs>::min();  // matched group's latest start
};

// Host launch time by correlation id: the API call's start.
class LaunchTimes {
public:
    explicit LaunchTimes(const ApiCallTable& api) {
        for (size_t i = 0; i < api.size(); ++i)
            if (api.correlation[i] != 0 && api.correlation[i] != kNoId)
                byId_.emplace_back(api.correlation[i], api.start[i]);
        std::sort(byId_.begin(), byId_.end());
    }
    TimeNs of(uint32_t correlation) const {
        auto it = std::lower_bound(byId_.begin(), byId_.end(), std::make_pair(correlation, INT64_MIN));
        return it != byId_.end() && it->first == correlation ? it->second : kUnknown;
    }

private:
    std::vector<std::pair<uint32_t, TimeNs>> byId_;
};

// Gradient collectives: all-reduce (DDP) and reduce-scatter (ZeRO, FSDP).
const std::string* gradientKind(std::string_view c) {
    return c == kAllReduce ? &kAllReduce : c == kReduceScatter ? &kReduceScatter : nullptr;
}

// Sizes of the device's gradient collectives from the NCCL profiler plugin
// rows, paired in order: the k-th row of a collective type (by enqueue time)
// with the k-th kernel of that type (by host launch, else start). The
// analyzer pairs rows by their GPU start instead; on an H100 with NCCL 2.28
// those starts came 2 ms early, inside the previous kernel, and swapped the
// sizes of consecutive buckets. When the counts differ (grouped calls fused
// into one kernel, a capture that started mid-collective) the analyzer's
// sizes are kept.
void pairPluginRowsInOrder(const Capture& capture, const Process& process, const Device& device,
                           std::vector<Activity>& acts) {
    const CollectiveTable& t = process.collectives;
    if (t.size() == 0) return;
    const bool oneDevice = process.devices.size() == 1;
    std::map<std::string, std::vector<size_t>> rows;
    for (size_t r = 0; r < t.size(); ++r) {
        const uint32_t d = r < t.device.size() ? t.device[r] : kNoId;
        if (d == device.id || (d == kNoId && oneDevice)) rows[std::string(capture.strings.at(t.func[r]))].push_back(r);
    }
    for (auto& [func, list] : rows) {
        std::vector<Activity*> kernels;
        for (auto& a : acts)
            if (!a.copy && a.collective && *a.collective == func) kernels.push_back(&a);
        if (kernels.size() != list.size()) continue;
        std::stable_sort(list.begin(), list.end(), [&](size_t x, size_t y) {
            return t.enqueue[x] != t.enqueue[y] ? t.enqueue[x] < t.enqueue[y] : t.seqNumber[x] < t.seqNumber[y];
        });
        const bool launched =
            std::all_of(kernels.begin(), kernels.end(), [](const Activity* a) { return a->launch >= 0; });
        std::stable_sort(kernels.begin(), kernels.end(), [&](const Activity* x, const Activity* y) {
            return launched ? x->launch < y->launch : x->start < y->start;
        });
        for (size_t k = 0; k < kernels.size(); ++k) kernels[k]->bytes = t.bytes[list[k]];
    }
}

std::vector<Activity> deviceActivities(const Capture& capture, const Analysis& analysis, size_t deviceIndex,
                                       ActivityClassifier& classifier) {
    const DeviceAnalysis& da = analysis.devices[deviceIndex];
    const Process& process = capture.processes[static_cast<size_t>(da.processIndex)];
    const Device& device = *process.findDevice(da.device);
    const LaunchTimes launches(process.apiCalls);

    std::vector<int> opOfKernel(device.kernels.size(), -1);
    for (size_t i = 0; i < da.collectives.size(); ++i)
        if (da.collectives[i].kernelIndex < opOfKernel.size())
            opOfKernel[da.collectives[i].kernelIndex] = static_cast<int>(i);
    // docs/design.md 4c: a collective's transfer starts when the last rank arrives.
    std::vector<TimeNs> lastArrival(da.collectives.size(), std::numeric_limits<TimeNs>::min());
    for (const auto& m : analysis.matched) {
        if (m.instances.size() < 2) continue;
        TimeNs latest = std::numeric_limits<TimeNs>::min();
        for (const auto& [d, c] : m.instances)
            latest =
                std::max(latest, analysis.devices[static_cast<size_t>(d)].collectives[static_cast<size_t>(c)].start_ns);
        for (const auto& [d, c] : m.instances)
            if (static_cast<size_t>(d) == deviceIndex) lastArrival[static_cast<size_t>(c)] = latest;
    }

    std::vector<Activity> out;
    const KernelTable& k = device.kernels;
    for (size_t i = 0; i < k.size(); ++i) {
        if (k.end[i] <= k.start[i]) continue;
        Activity a;
        a.start = k.start[i];
        a.end = k.end[i];
        a.launch = launches.of(k.correlation[i]);
        a.name = kernelNameId(k, i);
        a.category = classifier.kernel(a.name);
        a.stream = k.stream[i];
        a.op = opOfKernel[i];
        if (a.op >= 0) {
            const CollectiveInstance& op = da.collectives[static_cast<size_t>(a.op)];
            a.bytes = op.bytes;
            a.lastArrival = lastArrival[static_cast<size_t>(a.op)];
            a.collective = gradientKind(op.collective);
        }
        out.push_back(a);
    }
    const CopyTable& c = device.copies;
    for (size_t i = 0; i < c.size(); ++i) {
        if (c.end[i] <= c.start[i]) continue;
        Activity a;
        a.start = c.start[i];
        a.end = c.end[i];
        a.launch = launches.of(c.correlation[i]);
        a.copy = true;
        a.copyKind = i < c.copyKind.size() ? c.copyKind[i] : CopyKind::Unknown;
        a.category = classifier.copy(a.copyKind);
        a.stream = c.stream[i];
        if (i < c.bytes.size()) a.bytes = c.bytes[i];
        if (a.category == Category::Communication) a.collective = &kCopies;
        out.push_back(a);
    }
    const MemsetTable& m = device.memsets;
    for (size_t i = 0; i < m.size(); ++i) {
        if (m.end[i] <= m.start[i]) continue;
        Activity a;
        a.start = m.start[i];
        a.end = m.end[i];
        a.launch = launches.of(m.correlation[i]);
        a.category = Category::Memory;
        a.stream = m.stream[i];
        out.push_back(a);
    }
    pairPluginRowsInOrder(capture, process, device, out);
    std::stable_sort(out.begin(), out.end(), [](const Activity& x, const Activity& y) { return x.start < y.start; });
    return out;
}

// The gradient collective type and its stream: those with the most bytes
// inside steps (a copy-based job also copies outside them, to check results).
// With no size known anywhere and `inferSizes`, the type with the most time.
bool chooseGradientStream(const std::vector<Activity>& acts, bool inferSizes, std::string& collective, uint32_t& stream,
                          std::string& reason) {
    std::map<std::string, double> weight, unsized;
    for (const auto& a : acts) {
        if (!a.collective) continue;
        if (a.bytes && *a.bytes > 0)
            weight[*a.collective] += static_cast<double>(*a.bytes);
        else
            unsized[*a.collective] += static_cast<double>(a.end - a.start);
    }
    const bool sized = !weight.empty();
    if (!sized) {
        if (unsized.empty()) {
            reason = "no all-reduce or reduce-scatter (nor, with --comm-copies, communication copies) to model";
            return false;
        }
        if (!inferSizes) {
            reason = "the sizes of its " + unsized.begin()->first +
                     " collectives are unknown (no NCCL profiler plugin rows or Kineto collective "
                     "arguments; --grad-mb infers them from their durations)";
            return false;
        }
        weight = unsized;
    }
    collective =
        std::max_element(weight.begin(), weight.end(), [](auto& x, auto& y) { return x.second < y.second; })->first;
    std::map<uint32_t, double> perStream;
    for (const auto& a : acts)
        if (a.collective && *a.collective == collective)
            perStream[a.stream] +=
                (sized ? static_cast<double>(a.bytes.value_or(0)) : static_cast<double>(a.end - a.start)) + 1;
    stream = std::max_element(perStream.begin(), perStream.end(), [](auto& x, auto& y) {
                 return x.second < y.second;
             })->first;
    return true;
}

// No sizes recorded: the step's gradient bytes (--grad-mb) shared out in
// proportion to each collective's cost above alpha, which is what a linear
// cost with that alpha says.
void inferSizes(std::vector<ObservedBucket>& buckets, double gradBytes, double alphaNs) {
    double total = 0;
    std::vector<double> w;
    for (const auto& b : buckets) {
        w.push_back(std::max(1.0, static_cast<double>(b.costNs) - alphaNs));
        total += w.back();
    }
    for (size_t i = 0; i < buckets.size(); ++i)
        buckets[i].bytes = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(gradBytes * w[i] / total)));
}

// Backward- (or forward-) pass marks of a process: host ranges (matched
// against launch times) and GPU-side ranges (already on GPU time).
struct BackwardMarks {
    IntervalSet host, gpu;
};

bool inside(const IntervalSet& set, TimeNs t) {
    auto it = std::upper_bound(set.begin(), set.end(), t, [](TimeNs v, const Interval& iv) { return v < iv.start; });
    return it != set.begin() && t < (it - 1)->end;
}

// Whether an operation ran in the pass `marks` mark: launched inside a host
// range, or started inside a GPU-side one.
bool ranIn(const Activity& a, const BackwardMarks& marks) {
    return (a.launch >= 0 && inside(marks.host, a.launch)) || inside(marks.gpu, a.start);
}

BackwardMarks backwardMarks(const Capture& capture, const Process& process, const std::regex& pattern) {
    const RangeTable& r = process.ranges;
    IntervalSetBuilder host, gpu;
    for (size_t i = 0; i < r.size(); ++i) {
        if (r.end[i] <= r.start[i] || r.name[i] == kNoId) continue;
        if (!searchName(capture.strings.at(r.name[i]), pattern)) continue;
        const bool onGpu = i < r.onGpu.size() && r.onGpu[i] != 0;
        (onGpu ? gpu : host).add(r.start[i], r.end[i]);
    }
    return {host.finish(), gpu.finish()};
}

std::optional<TimeNs> backwardStartOf(const StepModel& step, const BackwardMarks& marks) {
    std::optional<TimeNs> best;
    for (const auto& g : marks.gpu)
        if (g.start >= step.start && g.start < step.end) best = best ? std::min(*best, g.start) : g.start;
    if (best || marks.host.empty()) return best;
    for (const auto& k : step.compute) {
        if (k.launch < 0) continue;
        auto it = std::upper_bound(marks.host.begin(), marks.host.end(), k.launch,
                                   [](TimeNs t, const Interval& iv) { return t < iv.start; });
        if (it != marks.host.begin() && k.launch < (it - 1)->end) best = best ? std::min(*best, k.start) : k.start;
    }
    return best;
}

// The bytes of a group of copies: the payload went out and came back, so
// the size is that of one direction (the larger sum over copy kinds).
uint64_t groupBytes(const std::vector<const Activity*>& group) {
    std::map<CopyKind, uint64_t> byKind;
    for (const Activity* a : group) byKind[a->copyKind] += a->bytes.value_or(0);
    uint64_t best = 0;
    for (const auto& [kind, b] : byKind) best = std::max(best, b);
    return best;
}

ObservedBucket bucketOf(const std::vector<const Activity*>& group) {
    ObservedBucket b;
    b.start = group.front()->start;
    b.end = group.front()->end;
    b.launch = group.front()->launch;
    for (const Activity* a : group) {
        b.start = std::min(b.start, a->start);
        b.end = std::max(b.end, a->end);
    }
    b.bytes = group.front()->copy ? groupBytes(group) : group.front()->bytes.value_or(0);
    const TimeNs transferFrom = std::max(b.start, group.front()->lastArrival);
    b.costNs = std::max<TimeNs>(0, b.end - transferFrom);
    return b;
}

}  // namespace

DeviceSteps extractDeviceSteps(const Capture& capture, const Analysis& analysis, size_t deviceIndex,
                               ActivityClassifier& classifier, const ExtractSettings& settings) {
    DeviceSteps out;
    const DeviceAnalysis& da = analysis.devices[deviceIndex];
    if (da.steps.empty()) {
        out.reason = "no steps found (step ranges such as 'step N' or ProfilerStep#N; see --step-pattern)";
        return out;
    }
    const std::vector<Activity> acts = deviceActivities(capture, analysis, deviceIndex, classifier);
    std::vector<Activity> inSteps;
    std::vector<Interval> windows;
    for (const auto& s : da.steps) windows.push_back({s.start_ns, s.end_ns});
    std::sort(windows.begin(), windows.end(), [](const Interval& x, const Interval& y) { return x.start < y.start; });
    for (const auto& a : acts) {
        if (!a.collective) continue;
        auto it = std::upper_bound(windows.begin(), windows.end(), a.start,
                                   [](TimeNs t, const Interval& w) { return t < w.start; });
        // Step windows rarely overlap: a short walk back finds the one holding it.
        for (int walked = 0; it != windows.begin() && walked < 4; ++walked)
            if ((--it)->end > a.start) {
                inSteps.push_back(a);
                break;
            }
    }
    if (!chooseGradientStream(inSteps, settings.gradBytes.has_value(), out.collective, out.stream, out.reason))
        return out;
    const Process& process = capture.processes[static_cast<size_t>(da.processIndex)];
    const BackwardMarks marks = backwardMarks(capture, process, settings.backward);
    const BackwardMarks forward = backwardMarks(capture, process, settings.forward);

    out.steps.reserve(da.steps.size());
    for (size_t s = 0; s < da.steps.size(); ++s) {
        const StepAnalysis& sa = da.steps[s];
        StepModel step;
        step.stepIndex = static_cast<int>(s);
        step.name = sa.name;
        step.start = sa.start_ns;
        step.end = sa.end_ns;
        step.measuredExposedNs = sa.metrics.exposed_comm_ns;
        const auto lo = std::lower_bound(acts.begin(), acts.end(), sa.start_ns,
                                         [](const Activity& a, TimeNs t) { return a.start < t; });
        const auto hi =
            std::lower_bound(lo, acts.end(), sa.end_ns, [](const Activity& a, TimeNs t) { return a.start < t; });
        std::vector<const Activity*> grads, others;
        for (auto it = lo; it != hi; ++it)
            (it->collective && *it->collective == out.collective && it->stream == out.stream ? grads : others)
                .push_back(&*it);
        const auto skip = [&](const std::string& why) { out.skipped.push_back(sa.name + ": " + why); };
        if (grads.empty()) {
            skip("no " + out.collective + " on stream " + std::to_string(out.stream));
            continue;
        }
        const bool launchesKnown =
            std::all_of(grads.begin(), grads.end(), [](const Activity* a) { return a->launch >= 0; });
        if (launchesKnown)
            std::stable_sort(grads.begin(), grads.end(),
                             [](const Activity* x, const Activity* y) { return x->launch < y->launch; });

        // Compute launches, to split copies into collectives.
        std::vector<TimeNs> computeLaunches;
        for (const Activity* a : others)
            if (a->category == Category::Compute && a->launch >= 0) computeLaunches.push_back(a->launch);
        std::sort(computeLaunches.begin(), computeLaunches.end());
        std::vector<std::vector<const Activity*>> groups;
        for (const Activity* a : grads) {
            bool join = false;
            if (a->copy && launchesKnown && !groups.empty() && groups.back().front()->copy) {
                const TimeNs prev = groups.back().back()->launch;
                const auto it = std::upper_bound(computeLaunches.begin(), computeLaunches.end(), prev);
                join = it == computeLaunches.end() || *it >= a->launch;
            }
            if (join)
                groups.back().push_back(a);
            else
                groups.push_back({a});
        }
        bool sized = true;
        for (const auto& g : groups) {
            step.buckets.push_back(bucketOf(g));
            sized = sized && step.buckets.back().bytes > 0;
        }
        if (!sized && settings.gradBytes) {
            inferSizes(step.buckets, *settings.gradBytes, settings.defaultAlphaNs);
            out.sizesInferred = sized = true;
        }
        if (!sized) {
            skip("a gradient collective of unknown size");
            continue;
        }

        // Work launched after the last gradient collective moves with it.
        const ObservedBucket& last = step.buckets.back();
        step.keptComputeEnd = step.start;
        IntervalSetBuilder keptCompute, keptComm, postCompute, postComm;
        for (const Activity* a : others) {
            const bool post = last.launch >= 0 && a->launch >= 0 ? a->launch > last.launch : a->start >= last.end;
            const bool compute = a->category == Category::Compute, comm = a->category == Category::Communication;
            if (post) {
                step.hasPost = true;
                step.postStart = std::min(step.postStart, a->start);
                step.postEnd = std::max(step.postEnd, a->end);
                if (compute) postCompute.add(a->start, a->end);
                if (comm) postComm.add(a->start, a->end);
                continue;
            }
            step.keptEnd = std::max(step.keptEnd, a->end);
            if (comm) keptComm.add(a->start, a->end);
            if (compute) {
                keptCompute.add(a->start, a->end);
                step.compute.push_back({a->start, a->end, a->launch, a->name});
                step.keptComputeEnd = std::max(step.keptComputeEnd, a->end);
            }
        }
        const auto fitted = [](IntervalSetBuilder& b) {
            IntervalSet set = b.finish();
            set.shrink_to_fit();
            return set;
        };
        step.keptCompute = fitted(keptCompute);
        step.keptComm = fitted(keptComm);
        step.postCompute = fitted(postCompute);
        step.postComm = fitted(postComm);
        TimeNs lastEnd = 0;
        for (const auto& b : step.buckets) lastEnd = std::max(lastEnd, b.end);
        if (step.hasPost) step.postGap = std::max<TimeNs>(0, step.postStart - std::max(step.keptComputeEnd, lastEnd));

        if (!assignReadiness(step)) {
            skip("no gradient readiness (no host launch records and every collective queued)");
            continue;
        }
        buildReadyPoints(step, settings.readiness, backwardStartOf(step, marks));
        std::vector<ComputeKernel>().swap(step.compute);  // read by the readiness rule only
        step.points.shrink_to_fit();
        for (const Activity* g : grads) {
            ++out.gradients;
            out.gradientsInForward += ranIn(*g, forward) && !ranIn(*g, marks);
        }
        for (const auto& b : step.buckets)
            out.samples.push_back({static_cast<double>(b.bytes), static_cast<double>(b.costNs)});
        out.steps.push_back(std::move(step));
    }
    if (out.steps.empty())
        out.reason =
            "no step could be modelled" + (out.skipped.empty() ? std::string() : " (" + out.skipped.front() + ")");
    return out;
}

}  // namespace osc::whatif
