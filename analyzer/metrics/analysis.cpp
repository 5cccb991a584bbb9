// analyzeProcesses(): the per-device metrics, steps, operations and
// findings. Each piece lives in its own file; this one only wires them
// together.
#include "analyzer/metrics/analysis.h"

#include "analyzer/capture/freed_memory.h"
#include "analyzer/capture/schema.h"

#include "analyzer/metrics/alltoall.h"
#include "analyzer/metrics/bottleneck.h"
#include "analyzer/metrics/collectives.h"
#include "analyzer/metrics/coverage.h"
#include "analyzer/metrics/interference.h"
#include "analyzer/metrics/lead_up.h"
#include "analyzer/metrics/microbatches.h"
#include "analyzer/metrics/steps.h"

#include <algorithm>
#include <charconv>
#include <future>
#include <numeric>
#include <optional>
#include <stdexcept>

namespace osc {
namespace {

std::regex compileStepPattern(const std::string& pattern) {
    try {
        return std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
        throw std::invalid_argument("invalid --step-pattern pattern '" + pattern + "': " + e.what());
    }
}

// A job's files are analysed one by one with the same patterns, and
// compiling the step and micro-batch patterns cost a file of a few thousand
// kernels as much as a third of its analysis: each thread keeps the last
// one it compiled per kind.
const std::regex& compiledOnce(const std::string& pattern, std::regex (*compile)(const std::string&)) {
    struct Entry {
        std::optional<std::string> pattern;
        std::regex compiled;
    };
    thread_local Entry step, microbatch;
    Entry& e = compile == compileStepPattern ? step : microbatch;
    if (e.pattern != pattern) {
        e.pattern.reset();
        e.compiled = compile(pattern);  // may throw: the entry stays empty
        e.pattern = pattern;
    }
    return e.compiled;
}

// Which device step each operation belongs to: through its launch correlation
// for CPU-projected steps, else the first step window containing its start.
void assignSteps(const Device& device, const StepProjector& projector, const std::vector<int>& deviceStepOfRange,
                 std::vector<StepAnalysis>& steps, std::vector<CollectiveInstance>& ops) {
    std::vector<size_t> byStart(steps.size());
    std::iota(byStart.begin(), byStart.end(), size_t{0});
    std::sort(byStart.begin(), byStart.end(),
              [&](size_t x, size_t y) { return steps[x].start_ns < steps[y].start_ns; });
    for (auto& op : ops) {
        op.step = -1;
        if (!projector.onGpu() && op.kernelIndex != static_cast<size_t>(-1)) {
            const int32_t r = projector.stepOfCorrelation(device.kernels.correlation[op.kernelIndex]);
            if (r >= 0) op.step = deviceStepOfRange[static_cast<size_t>(r)];
            continue;
        }
        auto it = std::upper_bound(byStart.begin(), byStart.end(), op.start_ns,
                                   [&](TimeNs t, size_t s) { return t < steps[s].start_ns; });
        for (int walked = 0; it != byStart.begin() && walked < 8; ++walked) {
            --it;
            if (op.start_ns < steps[*it].end_ns) op.step = static_cast<int>(*it);
        }
    }
}

// A count from the metadata; 0 when it is not a plain non-negative number.
uint64_t parseCount(const std::string& text) {
    uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size() ? value : 0;
}

// What the capture's metadata says about its completeness, told once per
// process: numbers from a capture that lost records or never finished
// undercount what the GPU did.
void warnAboutCompleteness(const Process& process, std::vector<std::string>& warnings,
                           std::optional<uint64_t>& dropped) {
    const auto& meta = process.meta;
    const bool ours = meta.count(std::string(schema::kFormatVersionKey)) != 0;
    if (const auto it = meta.find(std::string(schema::meta::kDroppedRecords)); it != meta.end()) {
        const uint64_t n = parseCount(it->second);
        dropped = dropped.value_or(0) + n;
        if (n > 0)
            warnings.push_back(process.label() + ": the agent dropped " + std::to_string(n) +
                               " records during capture (its buffer was full or its writer fell behind): "
                               "GPU activity is missing and the metrics undercount it");
    }
    if (ours && meta.count(std::string(schema::meta::kEndReason)) == 0)
        warnings.push_back(process.label() +
                           ": the capture did not finish (no end_reason: its process was killed or the disk "
                           "filled up); it holds what was committed before that");
}

// From this many kernels on, a device's interference index is built on a
// thread of its own: starting one costs tens of microseconds, and a job of
// many small devices already runs its files on every core.
constexpr size_t kKernelsForAThread = 1'000'000;

DeviceAnalysis analyzeDevice(const Capture& capture, const Process& process, int processIndex, const Device& device,
                             const StepProjector& projector, const MicroBatchRanges& microbatches,
                             ActivityClassifier& classifier, const AnalysisSettings& settings,
                             const std::vector<int8_t>& stepNameMatches, std::vector<std::string>& warnings,
                             DeviceIntervals& intervalsOut, AnalysisDepth depth) {
    DeviceAnalysis out;
    out.processIndex = processIndex;
    out.rank = process.rank;
    out.host = process.host;
    out.pid = process.pid;
    out.device = device.id;
    out.gpu = device.gpu.name;
    out.gpuUuid = device.gpu.uuid;
    if (const auto it = process.meta.find(std::string(schema::meta::kDroppedRecords)); it != process.meta.end())
        out.droppedRecords = parseCount(it->second);
    if (const auto it = process.meta.find(std::string(schema::meta::kEndReason)); it != process.meta.end())
        out.endReason = it->second;

    const DeviceCoverage cov = buildDeviceCoverage(device, classifier);
    // The interference index reads only the capture and the coverage: on a
    // device of many kernels it is built on a thread of its own, with its
    // own classifier (the shared one caches as it goes), beside the rest of
    // this analysis (10 M kernels: 0.4 s of the report's 2.5 s).
    std::future<InterferenceIndex> interferenceAside;
    if (depth != AnalysisDepth::StepFigures && device.kernels.size() >= kKernelsForAThread)
        interferenceAside = std::async(std::launch::async, [&capture, &device, &cov, &settings] {
            ActivityClassifier own(capture.strings, settings);
            return InterferenceIndex(capture, device, own, cov);
        });
    out.totals = cov.metrics(cov.span);
    out.collectives = collectCommOps(capture, device, classifier, cov);
    attachPluginRows(capture, process, device, out.collectives);
    markAllToAll(out.collectives);

    const std::vector<Interval> windows = projector.gpuWindows(device, cov);
    std::vector<int> deviceStepOfRange(windows.size(), -1);
    int dropped = 0;
    std::string firstDropped;
    out.steps.reserve(windows.size());  // not doubling: a GUI holds 1,024 ranks of these
    for (size_t r = 0; r < windows.size(); ++r) {
        if (windows[r].empty()) {
            if (dropped++ == 0) firstDropped = projector.name(r);
            continue;
        }
        deviceStepOfRange[r] = static_cast<int>(out.steps.size());
        StepAnalysis s;
        s.name = projector.name(r);
        s.start_ns = windows[r].start;
        s.end_ns = windows[r].end;
        s.metrics = cov.metrics(windows[r]);
        out.steps.push_back(std::move(s));
    }
    if (dropped)
        warnings.push_back(process.label() + " device " + std::to_string(device.id) + ": " + std::to_string(dropped) +
                           " step range(s) launched no GPU work on this device and were dropped "
                           "(first: '" +
                           firstDropped + "')");

    assignSteps(device, projector, deviceStepOfRange, out.steps, out.collectives);
    // Kept for waiting versus transfer, which needs every device's matches
    // first: M ∖ C, as small as the communication, not the compute.
    intervalsOut.exposed = cov.exposedComm.intervals();
    if (depth == AnalysisDepth::StepFigures) return out;

    const std::vector<uint32_t> computeStreams = computeStreamsOf(device, classifier);
    std::vector<std::vector<size_t>> opsOfStep(out.steps.size());
    std::vector<size_t> allOps(out.collectives.size());
    std::iota(allOps.begin(), allOps.end(), size_t{0});
    for (size_t i = 0; i < out.collectives.size(); ++i)
        if (out.collectives[i].step >= 0) opsOfStep[static_cast<size_t>(out.collectives[i].step)].push_back(i);
    for (size_t s = 0; s < out.steps.size(); ++s) {
        auto& step = out.steps[s];
        const WindowContext ctx{
            {step.start_ns, step.end_ns}, step.metrics, cov, out.collectives, opsOfStep[s], computeStreams, settings};
        step.bottleneck = bottleneckOf(ctx);
    }
    const WindowContext whole{cov.span, out.totals, cov, out.collectives, allOps, computeStreams, settings};
    out.findings = explainWindow(whole);

    const InterferenceIndex interference =
        interferenceAside.valid() ? interferenceAside.get() : InterferenceIndex(capture, device, classifier, cov);
    out.interference = interference.over(cov.span, out.totals.overlap_ns);
    for (auto& step : out.steps)
        step.interference = interference.over({step.start_ns, step.end_ns}, step.metrics.overlap_ns);
    out.signatures = interference.signatures();
    // The pipeline bubble needs a window spanning all stages, so the compute
    // of a device that ran micro-batches is kept for the second phase.
    intervalsOut.microbatches = microbatches.onDevice(device, classifier, out.steps);
    if (!intervalsOut.microbatches.empty()) intervalsOut.compute = cov.compute.intervals();
    // Why this rank may arrive late at a collective, for the cross-rank half
    // to hold against the median rank (docs/design.md 4d).
    computeLeadUps(capture, process, device, classifier, cov, out.steps, out.collectives, stepNameMatches,
                   intervalsOut);
    return out;
}

}  // namespace

void analyzeProcesses(const Capture& capture, const AnalysisSettings& settings, Analysis& out,
                      std::vector<DeviceIntervals>& intervalsOfDevice, std::vector<int>* warningProcess,
                      AnalysisDepth depth, Capture* spent) {
    out.settings = settings;
    ActivityClassifier classifier(capture.strings, settings);
    const std::regex& stepPattern = compiledOnce(settings.stepPattern, compileStepPattern);
    const std::regex& microbatchPattern = compiledOnce(settings.microbatchPattern, compileMicrobatchPattern);
    std::vector<int8_t> stepNameMatches, microbatchNameMatches;
    for (size_t p = 0; p < capture.processes.size(); ++p) {
        const Process& process = capture.processes[p];
        const StepProjector projector(capture, process, stepPattern, stepNameMatches);
        const MicroBatchRanges microbatches(capture, process, microbatchPattern, microbatchNameMatches);
        if (spent) {
            ApiCallTable& calls = spent->processes[p].apiCalls;
            std::vector<uint64_t>().swap(calls.globalTid);
            std::vector<uint32_t>().swap(calls.correlation);
            // With what the load freed (its pieces' tables), before the
            // analysis allocates its own.
            returnFreedMemory();
        }
        if (!process.devices.empty()) warnAboutCompleteness(process, out.warnings, out.droppedRecords);
        if (warningProcess) warningProcess->resize(out.warnings.size(), static_cast<int>(p));
        for (const Device& device : process.devices) {
            intervalsOfDevice.emplace_back();
            out.devices.push_back(analyzeDevice(capture, process, static_cast<int>(p), device, projector, microbatches,
                                                classifier, settings, stepNameMatches, out.warnings,
                                                intervalsOfDevice.back(), depth));
            if (warningProcess) warningProcess->resize(out.warnings.size(), static_cast<int>(p));
        }
    }
}

}  // namespace osc
