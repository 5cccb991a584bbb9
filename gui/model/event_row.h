// One horizontal row of a lane: events sorted by start, stored as columns.
//
// Per-frame work must follow pixels, not events (Tracy, Perfetto), so the row
// keeps two helper columns. The prefix maximum of ends (endMaxAt) finds the
// first event still running at the left edge by binary search even when
// events overlap; rows whose events do not overlap (every stream lane, every
// depth of a CPU lane) have ends that already ascend and store none: it is
// `end` itself. A prefix sum of durations taken every kDurationBlock events
// gives the busy share of a folded block of many tiny events in at most
// 2 * kDurationBlock reads. Both choices keep 16 of the 46 bytes an event
// would otherwise cost (90 MB of 1,024 ranks' lanes).
#pragma once

#include "analyzer/capture/model.h"
#include "gui/model/row_summary.h"

#include <cstdint>
#include <vector>

namespace osc::gui {

// Where an event came from, so details can be looked up in the capture.
// Step: a GPU step window from the analysis (ref = TimelineModel::stepName index).
// ApiCall: Process::apiCalls row; CpuOp: Process::cpuOps row (CPU lanes).
enum class EventSource : uint8_t { Kernel, Copy, Memset, Range, Step, ApiCall, CpuOp };

struct EventRow {
    std::vector<TimeNs> start, end;
    std::vector<uint32_t> ref;      // row in the source table
    std::vector<uint8_t> category;  // osc::Category for GPU work; 0 for ranges
    std::vector<EventSource> source;
    RowSummary summary;  // zoomed-out drawing reads this, not the events

    size_t size() const { return start.size(); }
    // The latest end among events [0, i].
    TimeNs endMaxAt(size_t i) const { return endMax_.empty() ? end[i] : endMax_[i]; }
    // The latest end of all; INT64_MIN for an empty row.
    TimeNs lastEnd() const { return size() == 0 ? INT64_MIN : endMaxAt(size() - 1); }
    void add(TimeNs s, TimeNs e, uint32_t r, uint8_t cat, EventSource src);
    // Call after the last add(): fills the prefix maximum, the duration sums and the summary.
    void finish();

    // First event whose end is after t (it may still be running at t).
    size_t firstEndingAfter(TimeNs t) const;
    // First index >= from whose start is >= t, by galloping from `from`:
    // cost grows with the log of the distance skipped, not the row size.
    size_t gallopToStart(size_t from, TimeNs t) const;
    // Sum of durations of events [i, j).
    TimeNs durationSum(size_t i, size_t j) const;
    // The event under time t (within `toleranceNs`), or size() when none;
    // prefers an event containing t over a near one.
    size_t hitTest(TimeNs t, TimeNs toleranceNs) const;

    static constexpr size_t kDurationBlock = 64;

private:
    // Durations of events [0, i).
    TimeNs durationBefore(size_t i) const;
    const std::vector<TimeNs>& endMaxColumn() const { return endMax_.empty() ? end : endMax_; }
    std::vector<TimeNs> endMax_;  // empty when `end` ascends
    // [k]: durations of events [0, k * kDurationBlock).
    std::vector<TimeNs> durationBlocks_;
};

}  // namespace osc::gui
