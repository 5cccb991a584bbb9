// An Analysis as the tables of overlapscope.Report (docs/python.md lists
// the columns): one row per device, step, collective, finding, matched
// collective, kernel signature, point-to-point transfer, pipeline step and
// all-to-all step. Built from the structs, not from the report JSON: on an
// 8-rank job with 77k collectives, json.loads and DataFrames from its
// records took longer than the analysis itself (docs/python.md, "Why the
// tables are not made from the JSON"). Each column holds exactly what the
// report JSON's field of the same meaning holds; tests/python checks every
// field of every table against to_dict().
#pragma once

#include "analyzer/metrics/analysis.h"

#include <pybind11/pybind11.h>

namespace osc::python {

namespace py = pybind11;

// {"devices": columns, "steps": ..., "collectives": ..., "findings": ...,
//  "matched": ..., "interference": ..., "p2p": ..., "pipeline": ...,
//  "alltoall": ...}; each value a Columns dict (python/src/columns.h).
py::dict reportTables(const Analysis& analysis);

// The device columns "busbw" and "straggler" hold the JSON writer's text of
// those objects ("null" when absent); this gives each with every field, so a
// table can have the columns of a job where no device has one.
py::dict deviceObjectFields();

// The report JSON's "summary" object, field for field.
py::dict reportSummary(const Analysis& analysis);

}  // namespace osc::python
