#include "tests/gpu/capture_facts.h"

#include "analyzer/capture/api_call_names.h"
#include "analyzer/metrics/classify.h"

#include <algorithm>
#include <set>

namespace osc::gpukit {
namespace {

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

bool isLaunchCall(std::string_view api) {
    const ApiCallRole role = apiCallRole(api);
    return role == ApiCallRole::KernelLaunch || role == ApiCallRole::GraphLaunch;
}

bool isGraphLaunchCall(std::string_view api) { return apiCallRole(api) == ApiCallRole::GraphLaunch; }

bool isBeginCaptureCall(std::string_view api) { return apiCallRole(api) == ApiCallRole::BeginStreamCapture; }

bool isEndCaptureCall(std::string_view api) { return apiCallRole(api) == ApiCallRole::EndStreamCapture; }

bool looksNccl(std::string_view name) {
    if (name.rfind("void ", 0) == 0) name.remove_prefix(5);
    return name.rfind("nccl", 0) == 0;
}

double CaptureFacts::overlapMean() const {
    if (devices.empty()) return 0;
    double sum = 0;
    for (const auto& d : devices) sum += d.stepOverlapMedian;
    return sum / static_cast<double>(devices.size());
}

CaptureFacts captureFacts(const Capture& cap, const Analysis& analysis) {
    CaptureFacts facts;
    ActivityClassifier classify(cap.strings, analysis.settings);
    for (const Process& p : cap.processes) {
        ProcessFacts f;
        f.rank = p.rank;
        f.pid = p.pid;
        f.meta = p.meta;
        std::set<uint32_t> kernelCorrelations;
        for (const Device& d : p.devices) {
            const KernelTable& k = d.kernels;
            f.kernels += k.size();
            kernelCorrelations.insert(k.correlation.begin(), k.correlation.end());
            for (size_t i = 0; i < k.size(); ++i) {
                if (i < k.graphId.size() && k.graphId[i] != 0) ++f.graphKernels;
                const bool nccl = looksNccl(cap.strings.at(k.name[i]));
                const bool comm = classify.kernel(k.name[i]) == Category::Communication;
                f.ncclKernels += nccl;
                f.ncclAsCommunication += nccl && comm;
                f.otherAsCommunication += !nccl && comm;
            }
        }
        const ApiCallTable& a = p.apiCalls;
        // Threads inside cudaStreamBeginCapture ... cudaStreamEndCapture:
        // their launches become graph nodes and run later under the
        // cudaGraphLaunch's correlation id, never under their own.
        std::vector<size_t> order(a.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return a.start[x] < a.start[y]; });
        std::set<uint64_t> capturing;
        for (const size_t i : order) {
            const std::string_view name = cap.strings.at(a.name[i]);
            if (a.returnValue[i] == 0 && isBeginCaptureCall(name)) capturing.insert(a.globalTid[i]);
            if (isEndCaptureCall(name)) capturing.erase(a.globalTid[i]);
            if (!isLaunchCall(name) || a.returnValue[i] != 0) continue;
            ++f.launchCalls;
            f.graphLaunchCalls += isGraphLaunchCall(name);
            if (capturing.count(a.globalTid[i]) && !isGraphLaunchCall(name))
                ++f.launchesCapturedIntoGraph;
            else if (!kernelCorrelations.count(a.correlation[i]))
                ++f.launchesWithoutKernel[std::string(name)];
        }
        facts.processes.push_back(std::move(f));
    }
    for (const Process& p : cap.processes)
        for (size_t r = 0; r < p.collectives.size(); ++r) {
            const std::string_view func = cap.strings.at(p.collectives.func[r]);
            facts.pluginP2pRows += func == "Send" || func == "Recv";
        }
    facts.p2pTransfers = analysis.p2p.size();
    for (const DeviceAnalysis& d : analysis.devices)
        for (const CollectiveInstance& c : d.collectives)
            facts.sendRecvKernelsWithoutPeers += c.collective == "SendRecv" && c.p2p.empty();
    for (const DeviceAnalysis& d : analysis.devices) {
        DeviceFacts f;
        f.rank = d.rank;
        f.device = d.device;
        f.steps = d.steps.size();
        f.collectivesPerStep.assign(d.steps.size(), 0);
        for (const CollectiveInstance& c : d.collectives)
            if (c.step >= 0 && static_cast<size_t>(c.step) < d.steps.size())
                ++f.collectivesPerStep[static_cast<size_t>(c.step)];
        std::vector<double> overlap, exposed, window;
        for (const StepAnalysis& s : d.steps) {
            overlap.push_back(s.metrics.overlap_ratio.value_or(0.0));
            exposed.push_back(static_cast<double>(s.metrics.exposed_comm_ns) / 1e6);
            window.push_back(static_cast<double>(s.end_ns - s.start_ns) / 1e6);
        }
        f.stepOverlapMedian = median(overlap);
        f.exposedCommMsMedian = median(exposed);
        f.stepMsMedian = median(window);
        facts.devices.push_back(std::move(f));
    }
    return facts;
}

}  // namespace osc::gpukit
