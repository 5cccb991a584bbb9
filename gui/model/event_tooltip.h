// The tooltip of one GPU event (issue 40 item 7): besides its name and
// duration, where and how it ran, as Nsight Systems shows it on hover:
//
//   ncclDevKernel_AllReduce_Sum_f32_RING_LL · 3.008 ms
//   stream 13 · grid 2×1×1 · block 640×1×1
//   correlation 1234 · launched by cudaLaunchKernel at 0.900303 s (thread 3130)
//   AllReduce · 4 MiB · seq 5
//
// copies and memsets with their bytes (and a copy's bandwidth). Other events
// (ranges, operators, API calls) keep their one line.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "gui/model/timeline_model.h"

#include <string>

namespace osc::gui {

std::string eventTooltip(const TimelineModel& model, const Analysis* analysis, EventRef ref);

}  // namespace osc::gui
