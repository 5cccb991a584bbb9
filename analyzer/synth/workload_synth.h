// The data-parallel workload model (WorkloadSpec) turned into capture rows:
// NVTX `step N` ranges on the CPU holding one launch call per kernel (joined
// by correlation id, as in real captures), GEMM-like kernels on the compute
// stream, NCCL all-reduce kernels on the comm stream and one
// OVERLAPSCOPE_NCCL_COLL row per collective.
#pragma once

#include "analyzer/capture/model.h"
#include "analyzer/synth/process_sinks.h"
#include "analyzer/synth/workload_spec.h"

#include <string>
#include <vector>

namespace osc::synth {

// Gradient buckets in the order they are reduced (backward order: the last
// layers first). Each holds whole layers; the last one always ends at layer 0.
struct Bucket {
    int firstLayer = 0, lastLayer = 0;  // in backward order: firstLayer >= lastLayer
    uint64_t bytes = 0;
};
std::vector<Bucket> planBuckets(const WorkloadSpec& spec);

ProcessIdentity workloadIdentity(const WorkloadSpec& spec, int rank);
// Rank r of a synthetic job: pid basePid + r, GPU r, an H100's properties.
ProcessIdentity rankIdentity(const std::string& host, int64_t basePid, int rank, int ranks, std::string commandLine);
// "<host>-<pid>-rank<R>.sqlite", the agent's naming.
std::string rankFileName(const std::string& host, int64_t pid, int rank);

// Runs the model, feeding rank r's rows into sinks[r] (one sink per rank).
void generateWorkload(const WorkloadSpec& spec, const std::vector<RowSink*>& sinks);

// The whole job in memory: one finalized Process per rank.
Capture synthesizeWorkload(const WorkloadSpec& spec);

// Writes the job: `out` is the file when ranks == 1, otherwise a directory
// (created if needed) holding one file per rank. Refuses to replace existing
// files unless `overwrite`. Returns the files written.
std::vector<std::string> writeWorkload(const WorkloadSpec& spec, const std::string& out, bool overwrite);

}  // namespace osc::synth
