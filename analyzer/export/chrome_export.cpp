#include "analyzer/export/chrome_export.h"

#include "analyzer/export/chrome_comm_args.h"
#include "analyzer/export/trace_json_writer.h"
#include "analyzer/import/kineto_names.h"
#include "analyzer/metrics/classify.h"
#include "analyzer/metrics/intervals.h"

#include <map>
#include <set>
#include <string>
#include <unordered_map>

namespace osc {

// GPU lanes sit far above real thread ids so they never share a trace thread
// with a CPU thread of the same process.
int64_t chromeStreamTid(uint32_t device, uint32_t stream) {
    return 1'000'000'000LL + static_cast<int64_t>(device % 1000) * 100'000 + stream % 99'990;
}
int64_t chromeOverlapTid(uint32_t device) { return chromeStreamTid(device, 0) + 99'999; }
int64_t chromeGpuRangeTid(uint32_t device) { return chromeStreamTid(device, 0) + 99'998; }

namespace {

enum RoleBit : uint8_t { kCompute = 1, kComm = 2, kMemory = 4 };

uint8_t roleBit(Category c) {
    return c == Category::Compute ? kCompute : c == Category::Communication ? kComm : kMemory;
}

std::string roleLabel(uint8_t roles) {
    std::string out;
    for (const auto& [bit, text] :
         {std::pair<uint8_t, const char*>{kCompute, "compute"}, {kComm, "communication"}, {kMemory, "memory"}}) {
        if (!(roles & bit)) continue;
        if (!out.empty()) out += "+";
        out += text;
    }
    return out.empty() ? "idle" : out;
}

const char* categoryLabel(Category c) {
    return c == Category::Compute ? "compute" : c == Category::Communication ? "communication" : "memory";
}

uint64_t cpuTid(uint64_t globalTid) { return globalTid & 0xFFFFFFu; }

class ChromeTraceWriter {
public:
    ChromeTraceWriter(const Capture& capture, std::ostream& out, const ChromeExportOptions& options)
        : capture_(capture), w_(out), options_(options), classifier_(capture.strings, options.settings) {}

    void write() {
        globalRanks_ = globalRanksOf(capture_);
        chooseTracePids();
        writeHeader();
        w_.raw("\"traceEvents\": [");
        for (size_t i = 0; i < capture_.processes.size(); ++i) {
            writeProcess(capture_.processes[i], tracePids_[i], i);
            if (options_.progress)
                options_.progress(static_cast<double>(i + 1) / static_cast<double>(capture_.processes.size()));
        }
        w_.raw("\n]}\n");
    }

private:
    // The OS pid when it tells processes apart, else a small index.
    void chooseTracePids() {
        std::set<int64_t> seen;
        bool unique = true;
        for (const auto& p : capture_.processes)
            unique = unique && p.pid > 0 && p.pid < (1LL << 31) && seen.insert(p.pid).second;
        for (size_t i = 0; i < capture_.processes.size(); ++i)
            tracePids_.push_back(unique ? capture_.processes[i].pid : static_cast<int64_t>(i + 1));
    }

    void writeHeader() {
        w_.raw("{\"schemaVersion\": 1, \"displayTimeUnit\": \"ns\",\n\"traceName\": ");
        w_.string("overlapscope export");
        w_.raw(",\n\"baseTimeNanoseconds\": ").integer(capture_.originUtcNs);
        w_.raw(",\n\"overlapscopeProcesses\": [");
        for (size_t i = 0; i < capture_.processes.size(); ++i) {
            const Process& p = capture_.processes[i];
            w_.raw(i ? ",\n  " : "\n  ");
            w_.raw("{\"tracePid\": ").integer(tracePids_[i]);
            w_.raw(", \"pid\": ").integer(p.pid);
            w_.raw(", \"rank\": ").integer(p.rank);
            w_.raw(", \"localRank\": ").integer(p.localRank);
            w_.raw(", \"worldSize\": ").integer(p.worldSize);
            w_.raw(", \"host\": ").string(p.host);
            w_.raw(", \"name\": ").string(p.name);
            w_.raw("}");
        }
        w_.raw("],\n");
        // Kineto's own GPU description, for viewers that show it.
        w_.raw("\"deviceProperties\": [");
        std::set<uint32_t> listed;
        for (const auto& p : capture_.processes)
            for (const auto& d : p.devices) {
                if (!listed.insert(d.id).second) continue;
                w_.raw(listed.size() > 1 ? ", " : "");
                w_.raw("{\"id\": ").integer(d.id).raw(", \"name\": ").string(d.gpu.name);
                w_.raw(", \"totalGlobalMem\": ").unsignedInteger(d.gpu.totalMemory);
                w_.raw(", \"numSms\": ").integer(d.gpu.smCount);
                w_.raw(", \"computeMajor\": ").integer(d.gpu.computeMajor);
                w_.raw(", \"computeMinor\": ").integer(d.gpu.computeMinor).raw("}");
            }
        w_.raw("],\n");
    }

    void next() {
        w_.raw(first_ ? "\n" : ",\n");
        first_ = false;
    }

    void metadata(const char* what, int64_t pid, const int64_t* tid, std::string_view name, int64_t sortIndex) {
        next();
        w_.raw("{\"ph\": \"M\", \"name\": \"").raw(what).raw("_name\", \"pid\": ").integer(pid);
        if (tid) w_.raw(", \"tid\": ").integer(*tid);
        w_.raw(", \"args\": {\"name\": ").string(name).raw("}},");
        w_.raw("\n{\"ph\": \"M\", \"name\": \"").raw(what).raw("_sort_index\", \"pid\": ").integer(pid);
        if (tid) w_.raw(", \"tid\": ").integer(*tid);
        w_.raw(", \"args\": {\"sort_index\": ").integer(sortIndex).raw("}}");
    }

    // Writes up to the opening of "args"; the caller writes args and "}}".
    void openComplete(std::string_view cat, std::string_view name, int64_t pid, int64_t tid, TimeNs start, TimeNs end) {
        next();
        w_.raw("{\"ph\": \"X\", \"cat\": ").string(cat).raw(", \"name\": ").string(name);
        w_.raw(", \"pid\": ").integer(pid).raw(", \"tid\": ").integer(tid);
        w_.raw(", \"ts\": ").micros(start).raw(", \"dur\": ").micros(end > start ? end - start : 0);
        w_.raw(", \"args\": {");
    }

    void gpuArgs(uint32_t device, uint32_t stream, uint32_t correlation) {
        w_.raw("\"device\": ").integer(device).raw(", \"stream\": ").integer(stream);
        w_.raw(", \"correlation\": ").integer(correlation);
    }

    void flow(size_t processIndex, int64_t pid, const ApiCallTable& api,
              const std::unordered_map<uint32_t, size_t>& apiByCorrelation, uint32_t correlation, int64_t gpuTid,
              TimeNs gpuStart) {
        if (!options_.flows || correlation == 0) return;
        const auto it = apiByCorrelation.find(correlation);
        if (it == apiByCorrelation.end()) return;
        // Correlation ids restart in every process; keep flow ids apart (and
        // below 2^53, which JavaScript viewers hold exactly).
        const uint64_t id = (static_cast<uint64_t>(processIndex) << 32) | correlation;
        next();
        w_.raw("{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": ").unsignedInteger(id);
        w_.raw(", \"pid\": ").integer(pid).raw(", \"tid\": ").unsignedInteger(cpuTid(api.globalTid[it->second]));
        w_.raw(", \"ts\": ").micros(api.start[it->second]).raw("}");
        next();
        w_.raw("{\"ph\": \"f\", \"bp\": \"e\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": ").unsignedInteger(id);
        w_.raw(", \"pid\": ").integer(pid).raw(", \"tid\": ").integer(gpuTid);
        w_.raw(", \"ts\": ").micros(gpuStart).raw("}");
    }

    void writeProcess(const Process& p, int64_t pid, size_t index) {
        metadata("process", pid, nullptr, p.label(), p.rank >= 0 ? p.rank : 1'000'000 + index);
        std::unordered_map<uint32_t, size_t> apiByCorrelation;
        for (size_t i = 0; i < p.apiCalls.size(); ++i)
            if (p.apiCalls.correlation[i] != 0) apiByCorrelation.emplace(p.apiCalls.correlation[i], i);

        std::set<uint64_t> cpuThreads;
        for (auto t : p.apiCalls.globalTid) cpuThreads.insert(cpuTid(t));
        for (size_t i = 0; i < p.ranges.size(); ++i)
            if (!p.ranges.onGpu[i]) cpuThreads.insert(cpuTid(p.ranges.globalTid[i]));
        for (auto t : cpuThreads) {
            const auto tid = static_cast<int64_t>(t);
            metadata("thread", pid, &tid, "CPU thread " + std::to_string(t), tid);
        }
        for (const auto& d : p.devices) writeDevice(p, d, pid, index, apiByCorrelation);

        for (size_t i = 0; i < p.apiCalls.size(); ++i) {
            openComplete(p.apiCalls.kind[i] == ApiKind::Driver ? "cuda_driver" : "cuda_runtime",
                         capture_.strings.at(p.apiCalls.name[i]), pid,
                         static_cast<int64_t>(cpuTid(p.apiCalls.globalTid[i])), p.apiCalls.start[i], p.apiCalls.end[i]);
            w_.raw("\"correlation\": ").integer(p.apiCalls.correlation[i]).raw("}}");
        }
        for (size_t i = 0; i < p.ranges.size(); ++i) {
            const bool gpu = p.ranges.onGpu[i] != 0;
            // A GPU range carries no device in the model; Kineto puts them on
            // the device's lane, we put them on the process's first device.
            const int64_t tid = gpu ? chromeGpuRangeTid(p.devices.empty() ? 0 : p.devices[0].id)
                                    : static_cast<int64_t>(cpuTid(p.ranges.globalTid[i]));
            openComplete(gpu ? "gpu_user_annotation" : "user_annotation", capture_.strings.at(p.ranges.name[i]), pid,
                         tid, p.ranges.start[i],
                         p.ranges.end[i] < p.ranges.start[i] ? p.ranges.start[i] : p.ranges.end[i]);
            w_.raw("}}");
        }
    }

    void writeDevice(const Process& p, const Device& d, int64_t pid, size_t index,
                     const std::unordered_map<uint32_t, size_t>& apiByCorrelation) {
        const std::string gpuPrefix = p.devices.size() > 1 ? "GPU " + std::to_string(d.id) + " " : "";
        std::map<uint32_t, uint8_t> roles;  // stream -> RoleBits
        IntervalSetBuilder compute, comm;
        for (size_t i = 0; i < d.kernels.size(); ++i) {
            const Category c = classifier_.kernel(d.kernels.name[i]);
            roles[d.kernels.stream[i]] |= roleBit(c);
            if (c == Category::Compute) compute.add(d.kernels.start[i], d.kernels.end[i]);
            if (c == Category::Communication) comm.add(d.kernels.start[i], d.kernels.end[i]);
        }
        for (size_t i = 0; i < d.copies.size(); ++i) {
            const Category c = classifier_.copy(d.copies.copyKind[i]);
            roles[d.copies.stream[i]] |= roleBit(c);
            if (c == Category::Communication) comm.add(d.copies.start[i], d.copies.end[i]);
        }
        for (auto s : d.memsets.stream) roles[s] |= kMemory;

        for (const auto& [stream, role] : roles) {
            const int64_t tid = chromeStreamTid(d.id, stream);
            std::string name = gpuPrefix + "stream " + std::to_string(stream) + " (";
            if (const auto it = d.streamNames.find(stream); it != d.streamNames.end()) name += it->second + "; ";
            metadata("thread", pid, &tid, name + roleLabel(role) + ")", tid);
        }
        const auto commArgs = commKernelArgs(capture_, p, d, classifier_, globalRanks_);
        for (size_t i = 0; i < d.kernels.size(); ++i) {
            const auto& k = d.kernels;
            const int64_t tid = chromeStreamTid(d.id, k.stream[i]);
            openComplete("kernel", capture_.strings.at(k.name[i]), pid, tid, k.start[i], k.end[i]);
            gpuArgs(d.id, k.stream[i], k.correlation[i]);
            w_.raw(", \"grid\": [").integer(k.gridX[i]).raw(", ").integer(k.gridY[i]).raw(", ").integer(k.gridZ[i]);
            w_.raw("], \"block\": [")
                .integer(k.blockX[i])
                .raw(", ")
                .integer(k.blockY[i])
                .raw(", ")
                .integer(k.blockZ[i]);
            w_.raw("], \"registers per thread\": ").integer(k.registersPerThread[i]);
            w_.raw(", \"shared memory\": ")
                .integer(static_cast<int64_t>(k.staticSharedMemory[i]) + k.dynamicSharedMemory[i]);
            w_.raw(", \"overlapscope category\": \"").raw(categoryLabel(classifier_.kernel(k.name[i]))).raw("\"");
            if (!commArgs.empty())
                if (const auto it = commArgs.find(i); it != commArgs.end()) w_.raw(it->second);
            w_.raw("}}");
            flow(index, pid, p.apiCalls, apiByCorrelation, k.correlation[i], tid, k.start[i]);
        }
        for (size_t i = 0; i < d.copies.size(); ++i) {
            const auto& c = d.copies;
            const int64_t tid = chromeStreamTid(d.id, c.stream[i]);
            const std::string name = "Memcpy " + std::string(kineto::copyKindName(c.copyKind[i])) + " (" +
                                     std::string(kineto::memKindName(c.srcKind[i])) + " -> " +
                                     std::string(kineto::memKindName(c.dstKind[i])) + ")";
            openComplete("gpu_memcpy", name, pid, tid, c.start[i], c.end[i]);
            gpuArgs(d.id, c.stream[i], c.correlation[i]);
            w_.raw(", \"bytes\": ").unsignedInteger(c.bytes[i]).raw("}}");
            flow(index, pid, p.apiCalls, apiByCorrelation, c.correlation[i], tid, c.start[i]);
        }
        for (size_t i = 0; i < d.memsets.size(); ++i) {
            const auto& m = d.memsets;
            const int64_t tid = chromeStreamTid(d.id, m.stream[i]);
            openComplete("gpu_memset", "Memset (Device)", pid, tid, m.start[i], m.end[i]);
            gpuArgs(d.id, m.stream[i], m.correlation[i]);
            w_.raw(", \"bytes\": ").unsignedInteger(m.bytes[i]).raw("}}");
            flow(index, pid, p.apiCalls, apiByCorrelation, m.correlation[i], tid, m.start[i]);
        }
        for (size_t i = 0; i < d.syncs.size(); ++i) {
            const auto& s = d.syncs;
            const bool onStream = s.stream[i] != kNoId;
            openComplete("cuda_sync", kineto::syncTypeName(s.type[i]), pid,
                         chromeStreamTid(d.id, onStream ? s.stream[i] : 0), s.start[i], s.end[i]);
            w_.raw("\"device\": ").integer(d.id);
            if (onStream) w_.raw(", \"stream\": ").integer(s.stream[i]);
            w_.raw(", \"correlation\": ").integer(s.correlation[i]).raw("}}");
        }
        if (options_.overlapLanes) writeOverlapLane(d, pid, gpuPrefix, compute.finish(), comm.finish());
    }

    void writeOverlapLane(const Device& d, int64_t pid, const std::string& gpuPrefix, const IntervalSet& compute,
                          const IntervalSet& comm) {
        if (comm.empty()) return;
        const int64_t tid = chromeOverlapTid(d.id);
        metadata("thread", pid, &tid, gpuPrefix + "overlap / exposed comm", tid);
        for (const auto& i : intersect(compute, comm)) {
            openComplete("overlapscope", "overlap (C∩M)", pid, tid, i.start, i.end);
            w_.raw("}}");
        }
        for (const auto& i : subtract(comm, compute)) {
            openComplete("overlapscope", "exposed comm (M∖C)", pid, tid, i.start, i.end);
            w_.raw("}}");
        }
    }

    const Capture& capture_;
    TraceJsonWriter w_;
    const ChromeExportOptions& options_;
    ActivityClassifier classifier_;
    std::vector<int64_t> tracePids_;
    GlobalRanks globalRanks_;
    bool first_ = true;
};

}  // namespace

void writeChromeTrace(const Capture& capture, std::ostream& out, const ChromeExportOptions& options) {
    ChromeTraceWriter(capture, out, options).write();
}

}  // namespace osc
