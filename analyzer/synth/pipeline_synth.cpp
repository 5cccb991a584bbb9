// The 1F1B pipeline, simulated by dependencies (not by formula): a stage
// runs its operations in schedule order; a forward needs the previous
// stage's forward of that micro-batch, a backward the next stage's backward
// (the last stage: its own forward). A transfer starts once the sender's
// send is issued (its compute done and its send stream free) and the
// receiver has posted the receive (it is ready for that operation), and
// takes transferNs; the send and receive kernels span from their own start
// to the end of the transfer.
#include "analyzer/capture/schema.h"
#include "analyzer/synth/host_emitter.h"
#include "analyzer/synth/kernel_names.h"
#include "analyzer/synth/p2p_numbering.h"
#include "analyzer/synth/pattern_synth.h"
#include "analyzer/synth/rank_files.h"
#include "analyzer/synth/workload_spec.h"
#include "analyzer/synth/workload_synth.h"

#include <algorithm>
#include <stdexcept>

namespace osc::synth {
namespace {

// Streams: compute, send to the next stage, receive from the previous one,
// send to the previous stage, receive from the next one.
constexpr uint32_t kSendNext = 13, kRecvPrev = 14, kSendPrev = 15, kRecvNext = 16;

struct Op {
    bool forward;
    int mb;
};

ProcessIdentity pipelineIdentity(const PipelineSpec& spec, int stage) {
    return rankIdentity(spec.host, spec.basePid, stage, spec.stages,
                        "synthetic 1F1B pipeline (" + std::to_string(spec.stages) + " stages, " +
                            std::to_string(spec.microbatches) + " micro-batches)");
}

std::vector<Op> schedule1F1B(int stage, int stages, int microbatches) {
    const int warmup = std::min(stages - stage - 1, microbatches);
    std::vector<Op> ops;
    for (int i = 0; i < warmup; ++i) ops.push_back({true, i});
    for (int i = 0; i < microbatches - warmup; ++i) {
        ops.push_back({true, warmup + i});
        ops.push_back({false, i});
    }
    for (int i = microbatches - warmup; i < microbatches; ++i) ops.push_back({false, i});
    return ops;
}

class PipelineSimulation {
public:
    PipelineSimulation(const PipelineSpec& spec, const std::vector<RowSink*>& sinks) : spec_(spec), sinks_(sinks) {
        const int S = spec.stages;
        for (int s = 0; s < S; ++s) {
            who_.push_back(pipelineIdentity(spec, s));
            orders_.push_back(schedule1F1B(s, S, spec.microbatches));
        }
        correlation_.assign(static_cast<size_t>(S), 1);
        for (int i = 0; i < spec.microbatches; ++i) {
            names_.push_back("fwd mb " + std::to_string(i));
            names_.push_back("bwd mb " + std::to_string(i));
        }
    }

    void run() {
        TimeNs t = kFirstKernelNs;
        for (int step = 0; step < spec_.steps; ++step) t = runStep(step, t) + spec_.stepGapNs;
    }

private:
    KernelRow kernel(int s, TimeNs start, TimeNs end, uint32_t stream, bool p2p, bool forward) {
        KernelRow k;
        k.deviceId = who_[static_cast<size_t>(s)].gpu.id;
        k.contextId = 1;
        k.correlationId = correlation_[static_cast<size_t>(s)]++;
        k.globalPid = schema::packGlobalPid(who_[static_cast<size_t>(s)].pid);
        k.start = start;
        k.end = end;
        k.streamId = stream;
        if (p2p) {
            k.demangledName = kP2pName;
            k.shortName = kP2pShortName;
            k.gridX = 1;
            k.gridY = 1;
            k.gridZ = 1;
            k.blockX = 512;
            k.blockY = 1;
            k.blockZ = 1;
            k.registersPerThread = 96;
        } else {
            k.demangledName = k.shortName = forward ? kForwardName : kBackwardName;
            k.gridX = 256;
            k.gridY = 4;
            k.gridZ = 1;
            k.blockX = 128;
            k.blockY = 1;
            k.blockZ = 1;
            k.registersPerThread = 128;
            k.dynamicSharedMemory = 49152;
        }
        return k;
    }

    CollectiveRow p2pRow(int s, bool send, int peer, const KernelRow& k) {
        CollectiveRow c;
        c.commHash = kCommHash;
        c.rank = s;
        c.nranks = spec_.stages;
        c.seqNumber = p2pSeq_.next(s, kCommHash, peer, send);
        c.func = send ? "Send" : "Recv";
        c.datatype = "ncclBfloat16";
        c.proto = "SIMPLE";
        c.count = spec_.activationBytes / 2;
        c.bytes = spec_.activationBytes;
        c.root = peer;
        c.nChannels = 1;
        c.deviceId = k.deviceId;
        c.gpuStart = k.start;
        c.gpuEnd = k.end;
        return c;
    }

    // One step starting at `t0` on every stage; returns the end of its last kernel.
    TimeNs runStep(int step, TimeNs t0) {
        const int S = spec_.stages, M = spec_.microbatches;
        std::vector<StepLaunches> launches(static_cast<size_t>(S));
        std::vector<TimeNs> free(static_cast<size_t>(S), t0), sendNextFree = free, sendPrevFree = free;
        std::vector<size_t> pos(static_cast<size_t>(S), 0);
        // End of each forward / backward per stage and micro-batch, and where
        // its (not yet timed) send launch sits in the stage's launch list.
        std::vector<std::vector<TimeNs>> fEnd(static_cast<size_t>(S), std::vector<TimeNs>(static_cast<size_t>(M), -1));
        auto bEnd = fEnd;
        std::vector<std::vector<int>> fSend(static_cast<size_t>(S), std::vector<int>(static_cast<size_t>(M), -1));
        auto bSend = fSend;
        for (auto& l : launches) {
            l.name = "step " + std::to_string(step);
            l.ranges = names_;
        }
        TimeNs last = t0;
        for (bool progress = true; progress;) {
            progress = false;
            for (int s = 0; s < S; ++s) {
                const auto su = static_cast<size_t>(s);
                if (pos[su] >= orders_[su].size()) continue;
                const Op op = orders_[su][pos[su]];
                const auto mb = static_cast<size_t>(op.mb);
                // The producer of this operation's input, if it is another stage.
                int producer = -1;
                if (op.forward && s > 0) producer = s - 1;
                if (!op.forward && s < S - 1) producer = s + 1;
                if (producer >= 0) {
                    const auto& done = op.forward ? fEnd : bEnd;
                    if (done[static_cast<size_t>(producer)][mb] < 0) continue;
                } else if (!op.forward && fEnd[su][mb] < 0) {
                    continue;
                }
                StepLaunches& mine = launches[su];
                const int range = 2 * op.mb + (op.forward ? 0 : 1);
                TimeNs start = free[su];
                if (producer >= 0) {
                    const auto pu = static_cast<size_t>(producer);
                    TimeNs& streamFree = op.forward ? sendNextFree[pu] : sendPrevFree[pu];
                    const TimeNs produced = (op.forward ? fEnd : bEnd)[pu][mb];
                    const TimeNs sendStart = std::max(produced, streamFree);
                    const TimeNs post = free[su];
                    const TimeNs arrival = std::max(sendStart, post) + spec_.transferNs;
                    streamFree = arrival;
                    // The producer's send, launched when it ran, now has its times.
                    SynthLaunch& send =
                        launches[pu].launches[static_cast<size_t>((op.forward ? fSend : bSend)[pu][mb])];
                    send.kernel.start = sendStart;
                    send.kernel.end = arrival;
                    send.rows[0].gpuStart = sendStart;
                    send.rows[0].gpuEnd = arrival;
                    SynthLaunch recv;
                    recv.kernel = kernel(s, post, arrival, op.forward ? kRecvPrev : kRecvNext, true, op.forward);
                    recv.nccl = true;
                    recv.rows.push_back(p2pRow(s, false, producer, recv.kernel));
                    recv.range = range;
                    mine.launches.push_back(std::move(recv));
                    start = arrival;
                }
                const TimeNs duration = op.forward ? spec_.forwardOf(s) : spec_.backwardOf(s);
                SynthLaunch compute;
                compute.kernel = kernel(s, start, start + duration, kComputeStream, false, op.forward);
                compute.range = range;
                mine.launches.push_back(std::move(compute));
                free[su] = start + duration;
                last = std::max(last, free[su]);
                (op.forward ? fEnd : bEnd)[su][mb] = free[su];
                const int consumer = op.forward ? (s + 1 < S ? s + 1 : -1) : (s > 0 ? s - 1 : -1);
                if (consumer >= 0) {
                    // Timed when the consumer posts its receive.
                    SynthLaunch send;
                    send.kernel = kernel(s, free[su], free[su], op.forward ? kSendNext : kSendPrev, true, op.forward);
                    send.nccl = true;
                    send.rows.push_back(p2pRow(s, true, consumer, send.kernel));
                    send.range = range;
                    (op.forward ? fSend : bSend)[su][mb] = static_cast<int>(mine.launches.size());
                    mine.launches.push_back(std::move(send));
                }
                ++pos[su];
                progress = true;
            }
        }
        for (int s = 0; s < S; ++s)
            if (pos[static_cast<size_t>(s)] != orders_[static_cast<size_t>(s)].size())
                throw std::logic_error("synth: the pipeline schedule did not complete");
        for (int s = 0; s < S; ++s)
            emitStep(*sinks_[static_cast<size_t>(s)], who_[static_cast<size_t>(s)], launches[static_cast<size_t>(s)]);
        return last;
    }

    const PipelineSpec& spec_;
    const std::vector<RowSink*>& sinks_;
    std::vector<ProcessIdentity> who_;
    std::vector<std::vector<Op>> orders_;
    std::vector<uint32_t> correlation_;
    P2pNumbering p2pSeq_;
    std::vector<std::string> names_;  // "fwd mb 0", "bwd mb 0", "fwd mb 1", ...
};

}  // namespace

void generatePipeline(const PipelineSpec& spec, const std::vector<RowSink*>& sinks) {
    spec.validate();
    if (sinks.size() != static_cast<size_t>(spec.stages))
        throw std::invalid_argument("synth: one sink per stage is needed");
    PipelineSimulation(spec, sinks).run();
}

Capture synthesizePipeline(const PipelineSpec& spec) {
    spec.validate();
    return synthesizeRanks(
        spec.stages, spec.host, spec.basePid, [&](int r) { return pipelineIdentity(spec, r); },
        [&](const std::vector<RowSink*>& sinks) { generatePipeline(spec, sinks); });
}

std::vector<std::string> writePipeline(const PipelineSpec& spec, const std::string& out, bool overwrite) {
    spec.validate();
    return writeRankFiles(
        spec.stages, spec.host, spec.basePid, out, overwrite, [&](int r) { return pipelineIdentity(spec, r); },
        [&](const std::vector<RowSink*>& sinks) { generatePipeline(spec, sinks); });
}

}  // namespace osc::synth
