#include "analyzer/synth/workload_synth.h"

#include "analyzer/capture/schema.h"
#include "analyzer/synth/host_emitter.h"
#include "analyzer/synth/jitter.h"
#include "analyzer/synth/kernel_names.h"
#include "analyzer/synth/rank_files.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string_view>

namespace osc::synth {
namespace {

// Names as CUPTI reports them for cuBLAS GEMMs, the optimizer and NCCL 2.19+.
constexpr std::string_view kOptimizerName = "multi_tensor_apply_kernel";

struct Launch {
    KernelRow kernel;
    bool nccl = false;
    CollectiveRow collective;  // when nccl
    bool neverEnds = false;    // a hung collective: its launch call, no kernel record
};

// PyTorch's watchdog thread polls each collective's end event while the
// collective runs: what a waiting rank's host keeps recording in a hang.
constexpr TimeNs kWatchdogPollNs = 100'000'000;
constexpr int32_t kCudaErrorNotReady = 600;

// One rank's progress through the simulation.
struct RankState {
    TimeNs cursor = kFirstKernelNs;    // compute stream free from here
    TimeNs commFree = kFirstKernelNs;  // comm stream free from here
    uint32_t nextCorrelation = 1;
    std::vector<Launch> launches;  // this step's, in program order
    Jitter jitter;
    ProcessIdentity who;
    TimeNs stall = 0;  // this step's host stall before its first launch
};

class Simulation {
public:
    Simulation(const WorkloadSpec& spec, const std::vector<RowSink*>& sinks)
        : spec_(spec), sinks_(sinks), commJitter_(spec.seed ^ 0x9e3779b97f4a7c15ull, spec.jitter) {
        for (int r = 0; r < spec.ranks; ++r)
            ranks_.push_back(RankState{kFirstKernelNs,
                                       kFirstKernelNs,
                                       1,
                                       {},
                                       Jitter(spec.seed * 1000003ull + static_cast<uint64_t>(r), spec.jitter),
                                       workloadIdentity(spec, r)});
        buckets_ = planBuckets(spec);
    }

    void run() {
        for (int step = 0; step < spec_.steps; ++step) {
            step_ = step;
            collectiveInStep_ = 0;
            for (size_t i = 0; i < ranks_.size(); ++i) {
                ranks_[i].launches.clear();
                ranks_[i].stall = spec_.hostStall(static_cast<int>(i), step);
                ranks_[i].cursor += spec_.arrivalSkew(static_cast<int>(i)) + ranks_[i].stall;
            }
            for (int l = 0; l < spec_.layers; ++l)
                for (auto& r : ranks_) computeKernel(r, kForwardName, spec_.forwardNs);
            size_t nextBucket = 0;
            for (int l = spec_.layers - 1; l >= 0; --l) {
                for (auto& r : ranks_) computeKernel(r, kBackwardName, spec_.layerBackwardNs(l));
                if (spec_.mode == OverlapMode::PerParam) {
                    allReduce(spec_.layerBytes(l));
                } else if (spec_.mode == OverlapMode::Bucketed && buckets_[nextBucket].lastLayer == l) {
                    allReduce(buckets_[nextBucket++].bytes);
                }
            }
            if (spec_.mode == OverlapMode::Sequential)
                for (const auto& b : buckets_) allReduce(b.bytes);
            if (halted_) {
                // Nobody finishes this step: no step range ends, nothing more is launched.
                for (size_t i = 0; i < ranks_.size(); ++i) emitStep(i, step, false);
                emitWatchdogPolls();
                return;
            }
            for (auto& r : ranks_) {
                // The optimizer needs every reduced gradient.
                r.cursor = std::max(r.cursor, r.commFree);
                if (spec_.optimizerNs > 0) computeKernel(r, kOptimizerName, spec_.optimizerNs);
            }
            for (size_t i = 0; i < ranks_.size(); ++i) emitStep(i, step, true);
            for (auto& r : ranks_) {
                r.cursor += spec_.stepGapNs;
                r.commFree = r.cursor;
            }
        }
    }

private:
    KernelRow baseKernel(RankState& r) {
        KernelRow k;
        k.deviceId = r.who.gpu.id;
        k.contextId = 1;
        k.correlationId = r.nextCorrelation++;
        k.globalPid = schema::packGlobalPid(r.who.pid);
        return k;
    }

    void computeKernel(RankState& r, std::string_view name, TimeNs ns) {
        if (halted_) return;
        Launch launch;
        KernelRow& k = launch.kernel;
        k = baseKernel(r);
        k.start = r.cursor;
        TimeNs duration = r.jitter.apply(ns);
        if (r.who.rank == spec_.slowComputeRank)
            duration = static_cast<TimeNs>(std::llround(static_cast<double>(duration) * spec_.slowComputeFactor));
        // Starting while this rank's collective still runs: slowed down.
        if (spec_.interference != 1.0 && !spec_.commOnComputeStream && r.commFree > r.cursor)
            duration = static_cast<TimeNs>(std::llround(static_cast<double>(duration) * spec_.interference));
        k.end = r.cursor + duration;
        k.streamId = kComputeStream;
        k.demangledName = k.shortName = name;
        k.gridX = 256;
        k.gridY = 4;
        k.gridZ = 1;
        k.blockX = 128;
        k.blockY = 1;
        k.blockZ = 1;
        k.registersPerThread = 128;
        k.dynamicSharedMemory = 49152;
        r.cursor = k.end;
        r.launches.push_back(launch);
    }

    // One all-reduce across all ranks: each rank's kernel starts when its
    // gradients are ready and its stream is free, and all finish together
    // once the last rank has arrived and the data has moved (NCCL kernels
    // spin waiting for their peers).
    void allReduce(uint64_t bytes) {
        if (halted_) return;
        if (step_ == spec_.stallAtStep && collectiveInStep_ == 0) {
            stall(bytes);
            return;
        }
        const bool desync = step_ == spec_.desyncAtStep && collectiveInStep_ == 0;
        ++collectiveInStep_;
        const TimeNs duration = commJitter_.apply(spec_.commNs(bytes));
        TimeNs latest = 0;
        std::vector<TimeNs> starts;
        for (auto& r : ranks_) {
            const TimeNs s = spec_.commOnComputeStream ? r.cursor : std::max(r.cursor, r.commFree);
            starts.push_back(s);
            latest = std::max(latest, s);
        }
        const TimeNs end = latest + duration;
        for (size_t i = 0; i < ranks_.size(); ++i) {
            RankState& r = ranks_[i];
            Launch launch;
            launch.nccl = true;
            KernelRow& k = launch.kernel;
            k = baseKernel(r);
            k.start = starts[i];
            k.end = end;
            k.streamId = spec_.commOnComputeStream ? kComputeStream : kCommStream;
            k.demangledName = kNcclName;
            k.shortName = kNcclShortName;
            k.gridX = 2;
            k.gridY = 1;
            k.gridZ = 1;
            k.blockX = 640;
            k.blockY = 1;
            k.blockZ = 1;
            k.registersPerThread = 96;
            CollectiveRow& c = launch.collective;
            c.commHash = kCommHash;
            c.rank = r.who.rank;
            c.nranks = spec_.ranks;
            c.seqNumber = seq_;
            c.func = "AllReduce";
            c.datatype = "ncclFloat32";
            c.algo = "RING";
            c.proto = "SIMPLE";
            // The desynced rank asks for twice the data; NCCL does not check.
            const uint64_t asked = desync && static_cast<int>(i) == spec_.desyncRank ? 2 * bytes : bytes;
            c.count = asked / 4;
            c.bytes = asked;
            c.nChannels = 2;
            c.deviceId = r.who.gpu.id;
            c.gpuStart = k.start;
            c.gpuEnd = k.end;
            r.commFree = end;
            if (spec_.commOnComputeStream) r.cursor = end;
            r.launches.push_back(launch);
        }
        ++seq_;
    }

    // The stalled rank never calls this collective; the others launch it and
    // it never ends: each waits from its own arrival until the capture stops.
    void stall(uint64_t bytes) {
        halted_ = true;
        for (size_t i = 0; i < ranks_.size(); ++i) {
            if (static_cast<int>(i) == spec_.stallRank) continue;
            RankState& r = ranks_[i];
            Launch launch;
            launch.nccl = true;
            launch.neverEnds = true;
            launch.kernel = baseKernel(r);
            const TimeNs start = spec_.commOnComputeStream ? r.cursor : std::max(r.cursor, r.commFree);
            launch.kernel.start = launch.kernel.end = start;
            CollectiveRow& c = launch.collective;
            c.commHash = kCommHash;
            c.rank = r.who.rank;
            c.nranks = spec_.ranks;
            c.seqNumber = seq_;
            c.func = "AllReduce";
            c.datatype = "ncclFloat32";
            c.algo = "RING";
            c.proto = "SIMPLE";
            c.count = bytes / 4;
            c.bytes = bytes;
            c.nChannels = 2;
            c.deviceId = r.who.gpu.id;
            c.gpuStart = start;  // its channels started; none ever stopped
            stallArrival_ = std::max(stallArrival_, start);
            r.launches.push_back(launch);
        }
    }

    // The waiting ranks' watchdog threads poll until the capture stops,
    // stallTailNs after the last waiting rank arrived: the capture's end.
    void emitWatchdogPolls() {
        const TimeNs stop = stallArrival_ + spec_.stallTailNs;
        const TimeNs period = std::max(kWatchdogPollNs, spec_.stallTailNs / 1000);
        for (size_t i = 0; i < ranks_.size(); ++i) {
            if (static_cast<int>(i) == spec_.stallRank) continue;
            RankState& r = ranks_[i];
            const TimeNs off = spec_.clockOffset(static_cast<int>(i));
            TimeNs arrival = stop;
            for (const auto& l : r.launches)
                if (l.neverEnds) arrival = l.kernel.start;
            ApiCallRow poll;
            poll.kind = ApiKind::Runtime;
            poll.globalTid = schema::packGlobalTid(r.who.pid, r.who.pid + 1);
            poll.name = "cudaEventQuery";
            poll.returnValue = kCudaErrorNotReady;
            for (TimeNs t = arrival;; t = std::min(t + period, stop)) {
                poll.start = std::max(arrival, t - 2'000) + off;
                poll.end = t + off;
                poll.correlationId = r.nextCorrelation++;
                sinks_[i]->addApiCall(poll);
                if (t >= stop) break;
            }
        }
    }

    // The CPU side of one step: a `step N` range holding one launch call per
    // kernel, spaced so the range ends before the next step's range begins.
    // A step that never finishes has no range (it never ended).
    void emitStep(size_t rankIndex, int step, bool finished) {
        RankState& r = ranks_[rankIndex];
        RowSink& sink = *sinks_[rankIndex];
        TimeNs gpuStart = r.launches.front().kernel.start, gpuEnd = gpuStart;
        for (const auto& l : r.launches) {
            gpuStart = std::min(gpuStart, l.kernel.start);
            gpuEnd = std::max(gpuEnd, l.kernel.end);
        }
        const auto n = static_cast<TimeNs>(r.launches.size());
        const TimeNs spacing = std::clamp<TimeNs>((gpuEnd - gpuStart) / (n + 1), 2, kMaxLaunchSpacingNs);
        const TimeNs hostStart = gpuStart - kLaunchLeadNs;
        const uint64_t tid = schema::packGlobalTid(r.who.pid, r.who.pid);

        const std::string name = "step " + std::to_string(step);
        // A host clock that disagrees: every time this rank records moves.
        const TimeNs off = spec_.clockOffset(static_cast<int>(rankIndex));
        if (finished) {
            RangeRow range;
            range.start = hostStart + off;
            range.end = hostStart + (n + 1) * spacing + off;
            range.kind = RangeKind::PushPop;
            range.text = name;
            range.globalTid = range.endGlobalTid = tid;
            sink.addRange(range);
        }
        if (r.stall > 0) {
            // The host busy elsewhere (loading data) before it launches the step.
            RangeRow stall;
            stall.start = hostStart - r.stall + off;
            stall.end = hostStart + off;
            stall.kind = RangeKind::PushPop;
            stall.text = spec_.hostStallName;
            stall.globalTid = stall.endGlobalTid = tid;
            sink.addRange(stall);
        }

        TimeNs callStart = hostStart;
        for (auto& l : r.launches) {
            callStart += spacing;
            const TimeNs callEnd = callStart + std::max<TimeNs>(spacing / 2, 1);
            if (l.neverEnds)
                emitLaunchCall(sink, tid, callStart, callEnd, l.kernel.correlationId, l.nccl, off);
            else
                emitLaunch(sink, tid, callStart, callEnd, l.kernel, l.nccl, off);
            if (l.nccl && ncclRanges_) {
                // NCCL's own NVTX range around its API call, which launches the kernel.
                RangeRow api;
                api.start = callStart + off;
                api.end = callEnd + off;
                api.kind = RangeKind::PushPop;
                api.text = "ncclAllReduce";
                api.domain = "NCCL";
                api.globalTid = api.endGlobalTid = tid;
                sink.addRange(api);
            }
            if (l.nccl) {
                l.collective.enqueue = callStart + off;
                if (l.collective.gpuStart >= 0) l.collective.gpuStart += off;
                if (l.collective.gpuEnd >= 0) l.collective.gpuEnd += off;
                sink.addCollective(l.collective);
            }
        }
    }

    const WorkloadSpec& spec_;
    const std::vector<RowSink*>& sinks_;
    Jitter commJitter_;  // one draw per collective, shared by all ranks
    std::vector<RankState> ranks_;
    std::vector<Bucket> buckets_;
    uint64_t seq_ = 0;
    int step_ = 0, collectiveInStep_ = 0;
    bool halted_ = false;  // the stall: nothing more is launched
    // NCCL's NVTX ranges, which say what a launch that never ran was: written
    // for the hang models only, so that the other models' files stay as they were.
    bool ncclRanges_ = spec_.stallRank >= 0 || spec_.desyncRank >= 0;
    TimeNs stallArrival_ = 0;  // the last waiting rank's arrival in the hung collective
};

}  // namespace

std::vector<Bucket> planBuckets(const WorkloadSpec& spec) {
    const auto cap = static_cast<uint64_t>(spec.bucketMb * 1024.0 * 1024.0);
    std::vector<Bucket> buckets;
    Bucket open{spec.layers - 1, spec.layers - 1, 0};
    for (int l = spec.layers - 1; l >= 0; --l) {
        open.bytes += spec.layerBytes(l);
        open.lastLayer = l;
        if (open.bytes >= cap || l == 0) {
            buckets.push_back(open);
            open = Bucket{l - 1, l - 1, 0};
        }
    }
    return buckets;
}

ProcessIdentity rankIdentity(const std::string& host, int64_t basePid, int rank, int ranks, std::string commandLine) {
    ProcessIdentity who;
    who.host = host;
    who.pid = basePid + rank;
    who.rank = rank;
    who.localRank = rank;
    who.worldSize = ranks;
    who.commandLine = std::move(commandLine);
    who.sessionStartUtcNs = kSessionStartUtcNs;
    who.gpu.id = static_cast<uint32_t>(rank);
    who.gpu.name = "NVIDIA H100 80GB HBM3 (synthetic)";
    char bus[32], uuid[64];
    std::snprintf(bus, sizeof bus, "0000:%02x:00.0", 0x18 + rank);
    std::snprintf(uuid, sizeof uuid, "GPU-5e1f0000-0000-0000-0000-%012x", rank);
    who.gpu.busLocation = bus;
    who.gpu.uuid = uuid;
    who.gpu.totalMemory = 80ull << 30;
    who.gpu.smCount = 132;
    who.gpu.computeMajor = 9;
    who.gpu.computeMinor = 0;
    return who;
}

ProcessIdentity workloadIdentity(const WorkloadSpec& spec, int rank) {
    ProcessIdentity who = rankIdentity(spec.host, spec.basePid, rank, spec.ranks,
                                       "synthetic data-parallel training (" + toString(spec.mode) +
                                           (spec.commOnComputeStream ? ", comm on compute stream" : "") + ")");
    if (spec.ranksPerHost > 0) {
        who.host = spec.host + "-" + std::to_string(rank / spec.ranksPerHost);
        who.localRank = rank % spec.ranksPerHost;
        who.gpu.id = static_cast<uint32_t>(who.localRank);
    }
    return who;
}

std::string rankFileName(const std::string& host, int64_t pid, int rank) {
    return host + "-" + std::to_string(pid) + "-rank" + std::to_string(rank) + ".sqlite";
}

void generateWorkload(const WorkloadSpec& spec, const std::vector<RowSink*>& sinks) {
    spec.validate();
    if (sinks.size() != static_cast<size_t>(spec.ranks))
        throw std::invalid_argument("synth: one sink per rank is needed");
    Simulation(spec, sinks).run();
}

Capture synthesizeRanks(int ranks, const std::string& host, int64_t basePid, const IdentityOf& identity,
                        const Generator& generate) {
    Capture capture;
    capture.sourcePaths.push_back("<synth>");
    capture.processes.resize(static_cast<size_t>(ranks));
    std::vector<std::unique_ptr<ProcessSink>> owned;
    std::vector<RowSink*> sinks;
    for (int r = 0; r < ranks; ++r) {
        owned.push_back(std::make_unique<ProcessSink>(capture, capture.processes[static_cast<size_t>(r)], identity(r)));
        capture.processes[static_cast<size_t>(r)].sourcePath = rankFileName(host, basePid + r, r);
        sinks.push_back(owned.back().get());
    }
    generate(sinks);
    capture.alignProcesses();
    capture.finalize();
    return capture;
}

Capture synthesizeWorkload(const WorkloadSpec& spec) {
    spec.validate();
    return synthesizeRanks(
        spec.ranks, spec.host, spec.basePid, [&](int r) { return workloadIdentity(spec, r); },
        [&](const std::vector<RowSink*>& sinks) { generateWorkload(spec, sinks); });
}

}  // namespace osc::synth
