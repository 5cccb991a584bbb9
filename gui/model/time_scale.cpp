#include "gui/model/time_scale.h"

#include <cmath>

namespace osc::gui {

TimeScale::TimeScale(ViewRange range, double widthPx) : range_(range), width_(std::max(1.0, widthPx)) {
    if (range_.length() < kMinSpanNs) range_.end = range_.start + kMinSpanNs;
}

TimeNs TimeScale::toTime(double x) const { return range_.start + static_cast<TimeNs>(std::llround(x * nsPerPx())); }

TimeScale TimeScale::zoomedAt(double anchorX, double factor) const {
    const TimeNs anchor = toTime(anchorX);
    const double len = std::max<double>(kMinSpanNs, static_cast<double>(range_.length()) * factor);
    const double before = len * (anchorX / width_);
    ViewRange r;
    r.start = anchor - static_cast<TimeNs>(std::llround(before));
    r.end = r.start + static_cast<TimeNs>(std::llround(len));
    return TimeScale(r, width_);
}

TimeScale TimeScale::pannedBy(double dxPx) const {
    const TimeNs dt = static_cast<TimeNs>(std::llround(dxPx * nsPerPx()));
    return TimeScale({range_.start + dt, range_.end + dt}, width_);
}

TimeScale TimeScale::clampedTo(ViewRange bounds) const {
    ViewRange r = range_;
    const TimeNs len = r.length();
    if (len >= bounds.length()) {
        // Longer than everything: centre the content instead of clipping the zoom.
        const TimeNs slack = len - bounds.length();
        r.start = bounds.start - slack / 2;
    } else if (r.start < bounds.start) {
        r.start = bounds.start;
    } else if (r.end > bounds.end) {
        r.start = bounds.end - len;
    }
    r.end = r.start + len;
    return TimeScale(r, width_);
}

ViewLimits ViewLimits::forContent(TimeNs begin, TimeNs end, double marginFraction) {
    ViewLimits l;
    const TimeNs len = std::max<TimeNs>(1, end - begin);
    const TimeNs margin = std::max<TimeNs>(1, static_cast<TimeNs>(static_cast<double>(len) * marginFraction));
    l.bounds = {begin - margin, end + margin};
    // A capture shorter than the floor is still shown whole.
    l.minSpan = std::min(kZoomFloorNs, l.bounds.length());
    return l;
}

ViewRange ViewLimits::clamp(ViewRange r) const {
    if (r.end < r.start) std::swap(r.start, r.end);
    if (r.length() < minSpan) {
        const TimeNs centre = r.start + r.length() / 2;
        r = {centre - minSpan / 2, centre - minSpan / 2 + minSpan};
    }
    if (r.length() >= bounds.length()) return bounds;
    const TimeNs len = r.length();
    if (r.start < bounds.start) r = {bounds.start, bounds.start + len};
    if (r.end > bounds.end) r = {bounds.end - len, bounds.end};
    return r;
}

}  // namespace osc::gui
