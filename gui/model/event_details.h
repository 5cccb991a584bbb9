// The details of one event as (field, value) pairs for the details panel:
// name, duration, stream, grid/block, bytes, correlation, the launching API
// call and, for a collective, its size, bandwidth and instances on other ranks.
#include "analyzer/metrics/analysis.h"
#pragma once

#include "gui/model/timeline_model.h"

#include <string>
#include <utility>
#include <vector>

namespace osc::gui {

using DetailList = std::vector<std::pair<std::string, std::string>>;

// A collective matched on more other ranks than this lists only the two
// earliest and the latest of them, and one line for the ranks between.
inline constexpr size_t kListedPartners = 8;

// With the analysis, a compute kernel also shows its signature's baseline
// (the same kernel alone) and this run against it, and a collective its
// waiting and transfer parts and who arrived last (docs/design.md 4b, 4c).
DetailList eventDetails(const TimelineModel& model, EventRef ref, const Analysis* analysis = nullptr);

// The label text of one event: short kernel name, "memcpy HtoD", a range,
// operator or API call name.
std::string eventLabel(const TimelineModel& model, const Lane& lane, const EventRow& row, size_t i);

// The runtime or driver call with the same correlation id, what launched
// GPU work of the group's process: "cudaLaunchKernel at 1.204 s (thread
// 1222)", "-" when the capture has none.
std::string launchingCall(const TimelineModel& model, int group, uint32_t correlation);

// A kernel's name without "void " and its parameter list.
std::string shortKernelName(std::string_view name);

}  // namespace osc::gui
