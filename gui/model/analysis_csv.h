// `overlapscope-gui --export-csv steps:FILE` and `collectives:FILE`: the
// Steps and Collectives panels' rows as CSV straight from the analysis, one
// row per device and step (per device and collective), with the field names
// and raw values (nanoseconds, ratios) of `overlapscope report --format json`
// so that a script gets the same numbers either way. Empty cells are JSON's
// null. `ranks:FILE` is the Collectives across ranks panel: one row per
// collective matched across ranks (gui/model/rank_collectives.h), `matched`
// its index into the report's matched_collectives, the fields named as
// there where it has them. The window's own export (File > Export table as CSV) writes what the
// tables show instead.
#pragma once

#include "analyzer/metrics/analysis.h"

#include <string>

namespace osc::gui {

std::string stepsCsv(const Analysis& analysis);
std::string collectivesCsv(const Analysis& analysis);
std::string rankCollectivesCsv(const Analysis& analysis);

}  // namespace osc::gui
