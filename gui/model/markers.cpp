#include "gui/model/markers.h"

#include "gui/model/time_ticks.h"

#include <algorithm>

namespace osc::gui {

size_t Markers::add(TimeNs t) {
    auto it = std::lower_bound(times_.begin(), times_.end(), t);
    if (it == times_.end() || *it != t) it = times_.insert(it, t);
    return static_cast<size_t>(it - times_.begin());
}

std::optional<size_t> Markers::nearest(TimeNs t, TimeNs tolerance) const {
    std::optional<size_t> best;
    TimeNs bestGap = tolerance;
    for (size_t i = 0; i < times_.size(); ++i) {
        const TimeNs gap = times_[i] > t ? times_[i] - t : t - times_[i];
        if (gap <= bestGap) {
            best = i;
            bestGap = gap;
        }
    }
    return best;
}

bool Markers::removeNear(TimeNs t, TimeNs tolerance) {
    const auto i = nearest(t, tolerance);
    if (!i) return false;
    times_.erase(times_.begin() + static_cast<long>(*i));
    return true;
}

std::string Markers::label(size_t i) const {
    std::string out = name(i) + " " + formatTimestamp(times_[i]);
    if (i > 0) out += " (+" + formatDuration(times_[i] - times_[i - 1], 4) + ")";
    return out;
}

}  // namespace osc::gui
