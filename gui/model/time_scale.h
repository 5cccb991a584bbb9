// Maps capture time (int64 ns) to widget x (double px) and back.
//
// A plain value type, so the zoom/pan maths is unit-testable without a
// window (the Hotspot `TimeLineData` idea). Times stay int64 until the last
// step: x = (t - start) * pxPerNs is computed from a small difference, so a
// capture hours long keeps sub-pixel precision at nanosecond zoom.
#pragma once

#include "analyzer/capture/model.h"

#include <algorithm>

namespace osc::gui {

struct ViewRange {
    TimeNs start = 0, end = 1;
    TimeNs length() const { return end - start; }
    bool operator==(const ViewRange&) const = default;
};

class TimeScale {
public:
    // Never a shorter span than this: a few pixels per nanosecond is already meaningless.
    static constexpr TimeNs kMinSpanNs = 10;

    TimeScale() = default;
    TimeScale(ViewRange range, double widthPx);

    ViewRange range() const { return range_; }
    double width() const { return width_; }
    double pxPerNs() const { return width_ / static_cast<double>(range_.length()); }
    double nsPerPx() const { return static_cast<double>(range_.length()) / width_; }

    double toX(TimeNs t) const { return static_cast<double>(t - range_.start) * pxPerNs(); }
    TimeNs toTime(double x) const;

    // Zooms by `factor` (< 1 zooms in) keeping the time under `anchorX` fixed.
    TimeScale zoomedAt(double anchorX, double factor) const;
    // Pans by `dxPx` pixels (positive moves the view later in time).
    TimeScale pannedBy(double dxPx) const;
    // Keeps the view inside `bounds` where possible, without changing its length
    // unless it is longer than the bounds.
    TimeScale clampedTo(ViewRange bounds) const;
    TimeScale withWidth(double widthPx) const { return TimeScale(range_, widthPx); }

private:
    ViewRange range_;
    double width_ = 1.0;
};

// Where the view may go: never into time well before or after the capture
// (at most the fit-all margins) and never closer than the zoom floor. Zooming
// out stops at the bounds; panning stops at their edges.
struct ViewLimits {
    // The zoom floor: below ~100 ns on screen no event of a GPU trace has
    // anything more to show, and sub-nanosecond pixels only blur the ticks.
    static constexpr TimeNs kZoomFloorNs = 100;

    ViewRange bounds{INT64_MIN / 4, INT64_MAX / 4};
    TimeNs minSpan = kZoomFloorNs;

    // The capture [begin, end) with `marginFraction` of its length on each side.
    static ViewLimits forContent(TimeNs begin, TimeNs end, double marginFraction);
    // `r` moved (and, when it must, shrunk or grown) so that it is allowed.
    ViewRange clamp(ViewRange r) const;
};

}  // namespace osc::gui
