#include "gui/model/column_units.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace osc::gui {

ColumnUnit columnUnit(TimeNs largest, TimeNs smallest) {
    ColumnUnit u;
    if (largest < 1'000)
        u = {"ns", 1, 0};
    else if (largest < 1'000'000)
        u = {"µs", 1e3, 2};
    else if (largest < 1'000'000'000)
        u = {"ms", 1e6, 3};
    else
        u = {"s", 1e9, 6};
    if (smallest > 0) {
        const double inUnit = static_cast<double>(smallest) / u.nsPerUnit;
        const int needed = 2 - static_cast<int>(std::floor(std::log10(inUnit)));
        u.decimals = std::clamp(needed, u.decimals, 6);
    }
    return u;
}

std::string formatInUnit(TimeNs ns, const ColumnUnit& unit) {
    // Nothing at all: "0 µs", not "0.00000 µs" (which reads as rounded away).
    if (ns == 0) return std::string("0 ") + unit.suffix;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f %s", unit.decimals, static_cast<double>(ns) / unit.nsPerUnit, unit.suffix);
    return buf;
}

}  // namespace osc::gui
