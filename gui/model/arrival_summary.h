// How the ranks arrived at a selected collective, for the timeline's
// overlay (issue 40 part 3). With a few ranks the overlay draws a line at
// each rank's start; with a thousand that is a thousand dashed lines over
// the kernels, so it draws the spread instead: the band from the first to
// the last arrival, the median rank's start and the last rank's.
#pragma once

#include "gui/model/time_scale.h"
#include "gui/model/timeline_model.h"

#include <string>
#include <vector>

namespace osc::gui {

// Up to this many instances (the selected one included), one line each.
inline constexpr size_t kArrivalLines = 16;

struct ArrivalSummary {
    int ranks = 0;                                // instances: the selected kernel and its matches
    std::vector<TimeNs> each;                     // every start, sorted; only when ranks <= kArrivalLines
    TimeNs earliest = 0, median = 0, latest = 0;  // median: the lower median of the starts
    int lastGroup = -1;                           // the device group that started last (first of a tie)
    bool summarised() const { return ranks > static_cast<int>(kArrivalLines); }
};

// Over the selected kernel and its matches on other ranks; ranks == 0 when
// nothing is matched.
ArrivalSummary arrivalSummary(const TimelineModel& model, EventRef selected, const std::vector<EventRef>& matches);

// "1,024 ranks arrive over 2.1 ms · last: rank 37, 2.0 ms after the median"
std::string arrivalCaption(const TimelineModel& model, const ArrivalSummary& s);

// Widget x of each mark, for a view whose event area starts at `left`.
struct ArrivalMarks {
    std::vector<double> lines;        // one per start (few ranks)
    double bandFrom = 0, bandTo = 0;  // first to last arrival (many ranks)
    double medianX = 0, latestX = 0;  // (many ranks)
    bool summarised = false;
};
ArrivalMarks arrivalMarks(const ArrivalSummary& s, const TimeScale& scale, double left);

}  // namespace osc::gui
