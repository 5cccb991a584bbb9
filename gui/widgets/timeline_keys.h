// The timeline's navigation keys where a panel has the focus: after a click
// on a table row the focus stays in the table (its arrow keys, Copy), yet W,
// A, S, D (zoom, pan), F (fit) and the step keys must still move the
// timeline, as in Nsight Systems. A plain key without modifiers is sent to
// the timeline instead of the panel (a table would take a letter for its
// type-to-find search).
#pragma once

#include <QObject>

class QWidget;

namespace osc::gui {

class TimelineWidget;

class TimelineKeyForwarder : public QObject {
    Q_OBJECT
public:
    TimelineKeyForwarder(TimelineWidget* timeline, QObject* parent);
    // Forwards the timeline's keys from `panel` (and its viewport, for a table).
    void watch(QWidget* panel);
    // Whether a key press goes to the timeline.
    static bool isTimelineKey(int key, Qt::KeyboardModifiers modifiers);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    TimelineWidget* timeline_;
};

}  // namespace osc::gui
