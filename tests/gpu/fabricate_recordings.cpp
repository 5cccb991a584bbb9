// Writes fabricated raw CUPTI recordings in the agent's on-disk format, one
// run folder per workload and mode (2 ranks each), until a GPU session
// commits real ones beside them (tests/gpu/README.md). The records are the
// real CUDA 13 structs, filled the way CUPTI fills them, from a two-stream
// timeline simulation of each schedule; they go to disk through the agent's
// own CuptiRecorder. Each run writes the same records; only the pointer
// values inside them differ (as in a real recording: they are addresses).
//
//   fabricate_recordings OUT_DIR     (tests/gpu/recordings/fabricated)
#include "agent/cupti/cupti_recorder.h"
#include "agent/cupti/cupti_records.h"
#include "analyzer/capture/schema.h"
#include "tests/agent/cupti_record_fixture.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace osc;
using namespace osc::agent;
using namespace osc::agent::cupti;

namespace {

constexpr uint32_t kComputeStream = 7, kCommStream = 13, kContext = 1;
constexpr int kWarmup = 1, kSteps = 3, kRanks = 2;

const char* kGemm =
    "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_"
    "cublas";
const char* kSgd = "_ZN5oscwl12_GLOBAL__N_110sgd_kernelIfEEvPT_PKS2_fm";
const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
const char* kAllGather = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
const char* kReduceScatter = "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

// One kernel of a step in issue order. A kernel starts when its stream is
// free, its launch has returned and the kernel it waits for (a CUDA event
// wait, -1 none) has ended.
struct Op {
    const char* name;
    bool comm = false;
    int64_t durationNs = 0;
    int waitFor = -1;
    const char* phase = nullptr;  // NVTX range opened before this op ("forward"...), or null
};

struct Run {
    std::string workload, mode, command;
    std::vector<Op> step;
    int collectivesPerStep = 0;
};

Run ddp(const std::string& mode) {
    constexpr int kLayers = 16;
    const int64_t fwd = 100'000, gemm = 100'000, allReduce = 20'000 + 120'000;  // per 4 MiB layer
    Run r{"ddp_overlap", mode, "ddp_overlap --mode " + mode + " --steps 3 --warmup 1", {}, 0};
    // Layers per bucket, counted from the last layer (gradients come in reverse).
    const int perBucket = mode == "sequential" ? kLayers : mode == "per-param" ? 1 : 6;
    for (int l = 0; l < kLayers; ++l) r.step.push_back({kGemm, false, fwd, -1, l == 0 ? "forward" : nullptr});
    int lastComm = -1, inBucket = 0;
    for (int l = kLayers - 1; l >= 0; --l) {
        r.step.push_back({kGemm, false, gemm, -1, l == kLayers - 1 ? "backward" : nullptr});
        ++inBucket;
        if (inBucket == perBucket || l == 0) {
            const int gradient = static_cast<int>(r.step.size()) - 1;
            r.step.push_back({kAllReduce, true, 20'000 + inBucket * (allReduce - 20'000), gradient});
            lastComm = static_cast<int>(r.step.size()) - 1;
            ++r.collectivesPerStep;
            inBucket = 0;
        }
        if (l > 0) r.step.push_back({kGemm, false, gemm});
    }
    r.step.push_back({kSgd, false, 50'000, lastComm, "optimizer"});
    return r;
}

Run tp(const std::string& mode) {
    Run r{"tp_overlap", mode, "tp_overlap --mode " + mode + " --steps 3 --warmup 1", {}, 0};
    const int chunks = mode == "serial" ? 1 : 4;
    const int64_t ag = 400'000 / chunks, g = 800'000 / chunks, rs = 400'000 / chunks;
    std::vector<int> gathers;
    // Pipelined: every chunk's all-gather is queued first; serial: one chunk.
    for (int c = 0; c < chunks; ++c) {
        r.step.push_back({kAllGather, true, ag, -1, c == 0 ? "forward" : nullptr});
        gathers.push_back(static_cast<int>(r.step.size()) - 1);
    }
    int lastComm = -1;
    for (int c = 0; c < chunks; ++c) {
        r.step.push_back({kGemm, false, g, gathers[static_cast<size_t>(c)]});
        r.step.push_back({kGemm, false, g});
        r.step.push_back({kReduceScatter, true, rs, static_cast<int>(r.step.size()) - 1});
        lastComm = static_cast<int>(r.step.size()) - 1;
    }
    r.collectivesPerStep = 2 * chunks;
    r.step.push_back({kSgd, false, 20'000, lastComm});
    return r;
}

// Packs records into 64 KiB buffers the way CUPTI lays them out (8-aligned,
// back to back) and hands full buffers to the recorder.
class BufferPacker {
public:
    explicit BufferPacker(CuptiRecorder& recorder) : recorder_(recorder) {}
    template <typename Record>
    void add(const Record& r) {
        static_assert(sizeof(Record) % 8 == 0);
        if (used_ + sizeof(Record) > kBytes) flush();
        offsets_.push_back(used_);
        std::memcpy(bytes() + used_, &r, sizeof(Record));
        used_ += sizeof(Record);
    }
    void flush() {
        if (used_ == 0) return;
        std::vector<const CUpti_Activity*> records;
        for (size_t o : offsets_) records.push_back(reinterpret_cast<const CUpti_Activity*>(bytes() + o));
        recorder_.buffer(bytes(), used_, records);
        std::fill(words_.begin(), words_.end(), 0);
        offsets_.clear();
        used_ = 0;
    }

private:
    static constexpr size_t kBytes = 64 << 10;
    uint8_t* bytes() { return reinterpret_cast<uint8_t*>(words_.data()); }
    CuptiRecorder& recorder_;
    std::vector<uint64_t> words_ = std::vector<uint64_t>(kBytes / 8, 0);
    std::vector<size_t> offsets_;
    size_t used_ = 0;
};

std::string apiName(ApiKind kind, uint32_t cbid) {
    if (kind == ApiKind::Driver) return cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx ? "cuLaunchKernelEx" : "";
    if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) return "cudaLaunchKernel_v7000";
    if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020) return "cudaEventSynchronize_v3020";
    return "";
}

// One rank's capture of `run`: kWarmup + kSteps steps on the simulated timeline.
// Returns the number of kernels launched.
int recordRank(const Run& run, int rank, const fs::path& runDir) {
    const int64_t pid = 40000 + rank;
    const uint32_t tid = static_cast<uint32_t>(pid);
    const int64_t origin = kOrigin;
    // Rank 1 is a little slower, as real ranks never match exactly.
    const auto scaled = [&](int64_t ns) { return rank == 0 ? ns : ns * 102 / 100; };

    CuptiRecorder recorder(runDir.string(), &apiName);
    DecodeContext context;
    context.sourceOriginNs = origin;
    context.originUtcNs = origin;  // CUPTI's clock is CLOCK_REALTIME
    context.pid = pid;
    context.globalPid = schema::packGlobalPid(pid);
    context.capturePath =
        (runDir / ("fabricated-" + std::to_string(pid) + "-rank" + std::to_string(rank) + ".sqlite")).string();
    recording::Manifest m;
    m.fabricated = true;
    m.who = ProcessIdentity{"fabricated", pid, rank, rank, kRanks, run.command, run.workload};
    m.metadata = {{"cupti_version", std::to_string(CUPTI_API_VERSION)}, {"driver_version", "13000"}};
    recorder.begin(1, context, m);
    GpuInfo gpu;
    gpu.name = "NVIDIA H100 80GB HBM3 (fabricated)";
    gpu.busLocation = "0000:18:00.0";
    gpu.uuid = "GPU-00000000-0000-0000-0000-000000000001";
    gpu.totalMemory = 85'520'809'984ull;
    gpu.smCount = 132;
    gpu.computeMajor = 9;
    recorder.gpus({gpu});

    BufferPacker out(recorder);
    auto device = zeroed<DeviceRecord>(CUPTI_ACTIVITY_KIND_DEVICE);
    device.name = gpu.name.c_str();
    device.isCudaVisible = 1;
    device.numMultiprocessors = 132;
    device.computeCapabilityMajor = 9;
    device.globalMemorySize = gpu.totalMemory;
    out.add(device);

    uint32_t correlation = 1, markerId = 1;
    int64_t host = origin + 1'000'000;  // host thread time, ns on the source clock
    int64_t computeFree = host, commFree = host;
    auto marker = [&](const char* name, uint32_t id, uint32_t flag, int64_t at) {
        auto mk = zeroed<MarkerRecord>(CUPTI_ACTIVITY_KIND_MARKER);
        mk.flags = static_cast<CUpti_ActivityFlag>(flag);
        mk.timestamp = static_cast<uint64_t>(at);
        mk.id = id;
        mk.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
        mk.objectId.pt.processId = static_cast<uint32_t>(pid);
        mk.objectId.pt.threadId = tid;
        mk.name = flag == CUPTI_ACTIVITY_FLAG_MARKER_START ? name : nullptr;  // CUPTI names only the start
        out.add(mk);
    };
    auto api = [&](CUpti_ActivityKind kind, uint32_t cbid, int64_t start, int64_t end, uint32_t corr) {
        auto a = zeroed<ApiRecord>(kind);
        a.cbid = static_cast<CUpti_CallbackId>(cbid);
        a.start = static_cast<uint64_t>(start);
        a.end = static_cast<uint64_t>(end);
        a.processId = static_cast<uint32_t>(pid);
        a.threadId = tid;
        a.correlationId = corr;
        out.add(a);
    };

    std::vector<std::string> stepNames;
    for (int s = 0; s < kWarmup + kSteps; ++s)
        stepNames.push_back(s < kWarmup ? "warmup " + std::to_string(s) : "step " + std::to_string(s - kWarmup));
    for (const std::string& stepName : stepNames) {
        const uint32_t stepId = markerId++;
        marker(stepName.c_str(), stepId, CUPTI_ACTIVITY_FLAG_MARKER_START, host);
        host += 2'000;
        std::vector<int64_t> ends;
        uint32_t phaseId = 0;
        for (const Op& op : run.step) {
            if (op.phase) {
                if (phaseId) marker(nullptr, phaseId, CUPTI_ACTIVITY_FLAG_MARKER_END, host);
                phaseId = markerId++;
                marker(op.phase, phaseId, CUPTI_ACTIVITY_FLAG_MARKER_START, host);
            }
            const uint32_t corr = correlation++;
            const int64_t launched = host + 4'000;
            if (op.comm)
                api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, host, launched, corr);
            else
                api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, host, launched, corr);
            host = launched + 1'000;
            int64_t& streamFree = op.comm ? commFree : computeFree;
            int64_t start = std::max(launched + 3'000, streamFree);
            if (op.waitFor >= 0) start = std::max(start, ends[static_cast<size_t>(op.waitFor)]);
            const int64_t end = start + scaled(op.durationNs);
            streamFree = end;
            ends.push_back(end);
            auto k = zeroed<KernelRecord>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
            k.start = static_cast<uint64_t>(start);
            k.end = static_cast<uint64_t>(end);
            k.deviceId = 0;
            k.contextId = kContext;
            k.streamId = op.comm ? kCommStream : kComputeStream;
            k.correlationId = corr;
            k.gridX = op.comm ? 2 : 132;
            k.gridY = k.gridZ = 1;
            k.blockX = op.comm ? 640 : 256;
            k.blockY = k.blockZ = 1;
            k.registersPerThread = op.comm ? 96 : 168;
            k.name = op.name;
            out.add(k);
        }
        if (phaseId) marker(nullptr, phaseId, CUPTI_ACTIVITY_FLAG_MARKER_END, host);
        // The step ends with the host waiting for the GPU.
        const int64_t gpuDone = *std::max_element(ends.begin(), ends.end());
        const uint32_t corr = correlation++;
        const int64_t synced = std::max(host + 2'000, gpuDone + 3'000);
        api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020, host, synced, corr);
        host = synced + 1'000;
        marker(nullptr, stepId, CUPTI_ACTIVITY_FLAG_MARKER_END, host);
        host += 20'000;
        computeFree = std::max(computeFree, host);
        commFree = std::max(commFree, host);
    }
    out.flush();
    return static_cast<int>(correlation - 1) - kWarmup - kSteps;  // every id but the syncs' is a launch
}

void writeRun(const Run& run, const fs::path& setDir) {
    const fs::path runDir = setDir / (run.workload + "-" + run.mode);
    fs::remove_all(runDir);
    fs::create_directories(runDir);
    std::vector<int> kernels;
    for (int rank = 0; rank < kRanks; ++rank) kernels.push_back(recordRank(run, rank, runDir));
    nlohmann::json expected = {
        {"workload", run.workload}, {"mode", run.mode},
        {"ranks", kRanks},          {"steps", kSteps},
        {"warmup", kWarmup},        {"collectives_per_step", run.collectivesPerStep},
        {"comm", "nccl"},           {"fabricated", true},
        {"command", run.command},   {"kernels_per_rank", kernels},
    };
    std::ofstream(runDir / "expected.json") << expected.dump(1) << "\n";
    std::printf("%s\n", runDir.c_str());
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2 || std::string(argv[1]) == "--help") {
        std::fprintf(stderr, "usage: fabricate_recordings OUT_DIR\n");
        return argc == 2 ? 0 : 2;
    }
    const fs::path out = argv[1];
    for (const char* mode : {"sequential", "per-param", "bucketed"}) writeRun(ddp(mode), out);
    for (const char* mode : {"serial", "pipelined"}) writeRun(tp(mode), out);
    return 0;
}
