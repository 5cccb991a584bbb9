// A long text rendered into report::TextBlocks as a Python str, in one copy
// (a report's JSON: one std::string copied into bytes, then decoded, was
// most of Report.to_json()'s time).
#pragma once

#include "analyzer/report/text_blocks.h"

#include <pybind11/pybind11.h>

namespace osc::python {

namespace py = pybind11;

// The GIL held. ASCII, as reports mostly are, is copied as it is; anything
// else is decoded as UTF-8.
py::str pythonText(const report::TextBlocks& text);

}  // namespace osc::python
