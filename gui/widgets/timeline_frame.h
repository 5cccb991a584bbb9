// The centre of the window: the overview strip, the timeline with its
// vertical scrollbar, and the colour legend underneath.
#pragma once

#include <QWidget>

class QScrollBar;

namespace osc::gui {

class LegendBar;
class OverviewStrip;
class TimelineWidget;

class TimelineFrame : public QWidget {
    Q_OBJECT
public:
    explicit TimelineFrame(QWidget* parent = nullptr);
    TimelineWidget* timeline() const { return timeline_; }
    OverviewStrip* overview() const { return overview_; }
    LegendBar* legend() const { return legend_; }
    QScrollBar* scrollBar() const { return scrollBar_; }

private:
    void syncScrollBar();

    TimelineWidget* timeline_;
    OverviewStrip* overview_;
    LegendBar* legend_;
    QScrollBar* scrollBar_;
};

}  // namespace osc::gui
