// The overview strip above the timeline: the whole capture (GPU compute in
// blue, communication hidden in green and exposed in vermilion, averaged
// over GPUs) with the visible range marked. Click or drag to move the view
// there; the wheel zooms around the point under the mouse.
#pragma once

#include "gui/model/overview.h"

#include <QWidget>

namespace osc::gui {

class TimelineWidget;

class OverviewStrip : public QWidget {
    Q_OBJECT
public:
    static constexpr int kHeight = 34;
    OverviewStrip(TimelineWidget* timeline, QWidget* parent = nullptr);
    // Rebuilds the columns (a new capture, or a new width).
    void rebuild();
    const Overview& overview() const { return overview_; }
    // Widget x of a time, and the time at a widget x.
    double xOf(TimeNs t) const;
    TimeNs timeAt(double x) const;

protected:
    void paintEvent(QPaintEvent*) override;
    void resizeEvent(QResizeEvent*) override;
    void mousePressEvent(QMouseEvent*) override;
    void mouseMoveEvent(QMouseEvent*) override;
    void wheelEvent(QWheelEvent*) override;

private:
    void centreAt(double x);
    int stripLeft() const;

    TimelineWidget* timeline_;
    Overview overview_;
};

}  // namespace osc::gui
