// Lateness per rank (issue 40 part 3): at each collective matched across
// ranks, how long after the median rank each rank arrived: its start minus
// the lower median of the instances' starts, the same median rank the
// analyzer's straggler finding compares against (docs/design.md 4d).
//
// A late rank waits least, so in the overlap views it is the one row that
// looks healthy; in lateness it is the only row that is not near zero, and
// taking the largest of several ranks (a pixel row of a map of 1,024 ranks)
// keeps it.
#pragma once

#include "analyzer/metrics/analysis.h"

#include <vector>

namespace osc::gui {

// One rank's arrival at one matched collective.
struct Arrival {
    TimeNs start = 0;  // the rank's start of the collective
    TimeNs late = 0;   // start minus the median start (negative: earlier than the median)
    int step = -1;     // the device's step index (CollectiveInstance::step)
    int matched = -1;  // into Analysis::matched
};

struct RankLateness {
    // Per device of the analysis, its arrivals in start order.
    std::vector<std::vector<Arrival>> byDevice;
    std::vector<TimeNs> latestOf;  // per device, its largest lateness (0 when never late)
    TimeNs latest = 0;             // the largest lateness of any arrival (0 when none is late)
};

// Over every collective matched on two or more ranks (send/receive exchanges
// included: they wait for their last rank as a collective does).
RankLateness rankLateness(const Analysis& analysis);

// A late arrival holds the others up from the median rank's start until its
// own: its lateness covers [start - late, start]; an arrival on time or
// early covers its start only, with lateness 0. The largest lateness of the
// `arrivals` (in start order, `latest` their largest) whose cover meets
// [from, to), or a negative value when none does. What a heat map cell of
// that time window shows: a late rank's row is dark for as long as the
// others waited for it, not one pixel at its start.
TimeNs latestIn(const std::vector<Arrival>& arrivals, TimeNs latest, TimeNs from, TimeNs to);

}  // namespace osc::gui
