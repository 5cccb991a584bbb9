// One time unit for a whole table column, so that "988.622 ms" never sits
// above "1.002658 s": the unit of the column's largest value. Timestamps
// keep the microsecond; durations also keep three significant digits of
// the smallest one ("0.00121 ms" beside "40.21000 ms" rather than "0.001 ms").
#pragma once

#include "analyzer/capture/model.h"

#include <string>

namespace osc::gui {

struct ColumnUnit {
    const char* suffix = "ns";
    double nsPerUnit = 1;
    int decimals = 0;
};

// The unit for values up to `largest` in magnitude: ns below 1 µs, µs below
// 1 ms, ms below 1 s, else s; decimals to the microsecond (10 ns in µs),
// or more (up to 6) so that `smallest` (> 0) shows three significant digits.
ColumnUnit columnUnit(TimeNs largest, TimeNs smallest = 0);

// `ns` in `unit`: "988.622 ms", "1002.658 ms"; zero is "0 ms".
std::string formatInUnit(TimeNs ns, const ColumnUnit& unit);

// Sees a column's values, then gives its unit.
class ColumnUnitPicker {
public:
    void see(TimeNs ns) {
        const TimeNs a = ns < 0 ? -ns : ns;
        if (a > largest_) largest_ = a;
        if (a > 0 && (smallest_ == 0 || a < smallest_)) smallest_ = a;
    }
    ColumnUnit timestamps() const { return columnUnit(largest_); }
    ColumnUnit durations() const { return columnUnit(largest_, smallest_); }

private:
    TimeNs largest_ = 0, smallest_ = 0;
};

}  // namespace osc::gui
