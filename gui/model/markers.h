// Pinned timestamps (markers): M at the mouse, a double-click on the ruler,
// or the ruler's context menu. Kept sorted; each is named by its position
// (M1, M2, ...) and says how far it is from the one before, so two markers
// measure a distance that stays while the view moves.
#pragma once

#include "analyzer/capture/model.h"

#include <optional>
#include <string>
#include <vector>

namespace osc::gui {

class Markers {
public:
    // Adds a marker at `t` (none twice at one time); returns its index.
    size_t add(TimeNs t);
    // Removes the marker nearest to `t` within `tolerance`; false when none is.
    bool removeNear(TimeNs t, TimeNs tolerance);
    void clear() { times_.clear(); }
    const std::vector<TimeNs>& times() const { return times_; }
    bool empty() const { return times_.empty(); }
    // The marker nearest to `t` within `tolerance`.
    std::optional<size_t> nearest(TimeNs t, TimeNs tolerance) const;
    // "M2 12.345 ms (+3.2 ms)": its name, time and distance from the previous one.
    std::string label(size_t i) const;
    // "M2": its name alone.
    static std::string name(size_t i) { return "M" + std::to_string(i + 1); }

private:
    std::vector<TimeNs> times_;  // ascending
};

}  // namespace osc::gui
