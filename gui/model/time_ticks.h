// Time-axis ticks on "nice" 1-2-5 steps and the unit labels that go with them.
#pragma once

#include "gui/model/time_scale.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace osc::gui {

struct Tick {
    TimeNs time = 0;
    double x = 0;
    std::string label;
};

// The smallest 1-2-5 step (in ns, >= 1) at which ticks are at least
// `minSpacingPx` apart.
TimeNs niceTickStep(double nsPerPx, double minSpacingPx);

// Ticks at multiples of the nice step inside the visible range.
std::vector<Tick> makeTicks(const TimeScale& scale, double minSpacingPx = 90.0);

// The ruler: ticks, and where absolute labels would get long ("1.3214571 s"
// at 100 ns steps) labels relative to the first tick ("+200 ns"), whose
// absolute time is `origin` (empty when the labels are absolute).
struct Ruler {
    std::vector<Tick> ticks;
    std::string origin;
};
Ruler makeRuler(const TimeScale& scale, double minSpacingPx = 90.0, size_t maxLabelChars = 9);

// Whether a ruler label spanning [labelLeft, labelRight) is left out
// because the selection's length box [boxLeft, boxRight) covers part of it
// (with 2 px to spare): a label is drawn whole or not at all.
inline bool rulerLabelHidden(double labelLeft, double labelRight, double boxLeft, double boxRight) {
    return labelLeft < boxRight + 2 && labelRight > boxLeft - 2;
}

// "850 ns", "12.5 µs", "3.2 ms", "1.25 s": `significant` digits at most
// (trailing zeros dropped). Tables use 4 so that neighbouring steps differ.
std::string formatDuration(TimeNs ns, int significant = 3);

// A point in time on the capture's timeline, to the microsecond, so that two
// steps or collectives never print alike: "1.321457 s", "12.345 ms", "850 ns".
std::string formatTimestamp(TimeNs t);

// "512 B", "4 KiB", "25.5 MiB", "1.25 GiB".
std::string formatBytes(uint64_t bytes);

// A count with its thousands grouped, as the tables print counts: "1,234,567".
std::string formatCount(uint64_t n);

// A fraction as a percentage with one decimal: 0.614 -> "61.4 %".
std::string formatPercent(double fraction);

// A tick label: the time in the unit the step calls for, with as many
// decimals as the step needs ("12.34 ms" for a 10 µs step).
std::string formatTickLabel(TimeNs t, TimeNs step);

}  // namespace osc::gui

namespace osc::gui {
// Parses "1500", "1500ns", "12.5us", "12.5µs", "3ms", "1.2s" into ns.
std::optional<TimeNs> parseDuration(std::string_view text);
}  // namespace osc::gui
