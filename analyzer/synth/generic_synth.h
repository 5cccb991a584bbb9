// `synth --kernels N --streams S`: a plain, fast stream of kernels for
// benchmarks. Streams run back to back with small random gaps; the last
// stream (when S > 1) carries NCCL all-reduce kernels, the others compute.
// Rows come out in start order, so a file is written in one sequential pass.
#pragma once

#include "analyzer/capture/model.h"
#include "analyzer/synth/process_sinks.h"
#include "analyzer/synth/workload_spec.h"

#include <functional>
#include <string>

namespace osc::synth {

using Progress = std::function<void(uint64_t done, uint64_t total)>;

ProcessIdentity genericIdentity(const GenericSpec& spec);
void generateGeneric(const GenericSpec& spec, RowSink& sink, const Progress& progress = {});
Capture synthesizeGeneric(const GenericSpec& spec);
// Streams straight into the file; refuses to replace it unless `overwrite`.
void writeGeneric(const GenericSpec& spec, const std::string& path, bool overwrite, const Progress& progress = {});

}  // namespace osc::synth
