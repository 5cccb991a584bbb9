// A loaded capture as the tables of overlapscope.Trace: every process and
// device, and every kernel, copy, memset, sync, NVTX/annotation range, host
// API call and PyTorch operator, one row each, times in ns on the capture's
// common timeline (the report's). Kernels and copies carry the category the
// analysis gives them under the same options.
#pragma once

#include "analyzer/capture/model.h"
#include "analyzer/metrics/analysis.h"

#include <pybind11/pybind11.h>

#include <string>

namespace osc::python {

namespace py = pybind11;

// `table`: processes, devices, kernels, copies, memsets, syncs, ranges,
// api_calls, cpu_ops. Throws std::invalid_argument for another name or a bad
// regex in `settings`.
py::dict captureTable(const Capture& capture, const std::string& table, const AnalysisSettings& settings);

}  // namespace osc::python
