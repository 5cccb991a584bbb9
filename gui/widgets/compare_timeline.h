// Run B's timeline under run A's while comparing (issue 30): B's lanes in a
// TimelineFrame of their own (no overview strip or legend: A's serve both),
// under a line naming B, and kept aligned to A by step (StepAlignment): A's
// view moves B's, step N of each at the same x and at the same zoom. Moving
// B's view moves A's the other way, which then re-aligns B.
#pragma once

#include "gui/model/step_alignment.h"
#include "gui/widgets/capture_loader.h"

#include <QWidget>

class QLabel;

namespace osc::gui {

class TimelineFrame;
class TimelineWidget;

class CompareTimeline : public QWidget {
    Q_OBJECT
public:
    explicit CompareTimeline(QWidget* parent = nullptr);

    // B against A's timeline (A read from `aPath`); a B without a trace
    // (partial results, a saved report) or no A leaves nothing to show and
    // hides this.
    void setRuns(const TimelineWidget& a, const QString& aPath, const LoadedCapture& b);
    void clear();
    void setHostLanesShown(bool on);  // View > CPU lanes, as on A's
    // The line over A's timeline, naming A while B is shown; hidden with B.
    QLabel* headerOfA(QWidget* parent);
    TimelineWidget* timeline() const { return timeline_; }
    const StepAlignment& alignment() const { return alignment_; }

public slots:
    // A's view changed: B shows the same steps at the same x.
    void followA(osc::gui::ViewRange a);

signals:
    // B's view was moved on B's timeline: A's view to match it.
    void viewMovedInB(osc::gui::ViewRange a);

private:
    void onBMoved(ViewRange b);

    QLabel* header_;
    QLabel* headerA_ = nullptr;
    TimelineFrame* frame_;
    TimelineWidget* timeline_;
    StepAlignment alignment_;
    bool syncing_ = false;  // B is being moved to follow A
};

}  // namespace osc::gui
