// The pipeline and all-to-all models (pattern_spec.h) turned into capture
// rows: per rank a `step N` NVTX range holding one launch call per kernel,
// GEMM-like compute kernels, one `ncclDevKernel_SendRecv` kernel per send or
// receive (pipeline) or per exchange (all-to-all), and one NCCL plugin
// Send/Recv row per peer with the peer in `root`, as NCCL records it.
#pragma once

#include "analyzer/synth/pattern_spec.h"
#include "analyzer/synth/process_sinks.h"

#include <string>
#include <vector>

namespace osc::synth {

// Pipeline: rank s is stage s. Each micro-batch's forward and backward sit in
// NVTX ranges `fwd mb N` / `bwd mb N` holding the receive, the compute and
// the send they launch.
void generatePipeline(const PipelineSpec& spec, const std::vector<RowSink*>& sinks);
Capture synthesizePipeline(const PipelineSpec& spec);
std::vector<std::string> writePipeline(const PipelineSpec& spec, const std::string& out, bool overwrite);

void generateAllToAll(const AllToAllSpec& spec, const std::vector<RowSink*>& sinks);
Capture synthesizeAllToAll(const AllToAllSpec& spec);
std::vector<std::string> writeAllToAll(const AllToAllSpec& spec, const std::string& out, bool overwrite);

}  // namespace osc::synth
