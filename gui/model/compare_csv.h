// The compare tables (two runs, gui/model/run_compare.h) as CSV of numbers
// (issue 40 item 5), for `overlapscope-gui --export-csv steps:F A --compare B`
// and File > Export table as CSV while comparing: per metric the base's and
// the candidate's raw value, the change B − A and the relative change
// (B − A) / |A| in columns of their own, nanoseconds and ratios unrounded,
// the ASCII minus. Fields are named as in `overlapscope report --format
// json` and `overlapscope diff --format json`; an empty cell is unknown.
#pragma once

#include "gui/model/run_compare.h"

#include <string>

namespace osc::gui {

// rank, host, pid, device, step, name_a, name_b, then per metric
// (window_ns, exposed_comm_ns, overlap_ratio, compute_ns, comm_ns,
// overlap_ns, idle_ns) M_a, M_b, M_change, M_relative.
std::string compareStepsCsv(const Analysis& base, const Analysis& candidate, const RunComparison& comparison);

// rank, host, pid, device, step, collective, group, bucket, bytes, in (both,
// a, b), then per time (start_ns a and b; duration_ns, overlapped_ns,
// exposed_ns with their change and relative change); rows as the table starts.
std::string compareCollectivesCsv(const Analysis& base, const Analysis& candidate, const RunComparison& comparison);

}  // namespace osc::gui
