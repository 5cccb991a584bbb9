// The View menu's many-ranks entries (issue 30 item 3b, 3c): Group ranks by
// (none / host / communicator) and One row per rank (Ctrl+R), acting on the
// timeline's RankView; and the same choices for --screenshot.
#pragma once

#include <QList>
#include <QString>

class QAction;
class QMainWindow;
class QMenu;

namespace osc::gui {

class RankView;
class TimelineWidget;

// Adds the entries to `view`; returns their actions (the window disables
// them without a timeline).
QList<QAction*> addRankMenu(QMenu* view, TimelineWidget* timeline);

// As if the user chose them from the menu: `grouping` none, host or
// communicator. False for any other grouping.
bool applyRankView(QMainWindow* window, const QString& grouping, bool oneRow);

// Checks the entries that match `view` (a restored layout's) without acting on the timeline.
void showRankView(QMainWindow* window, const RankView& view);

}  // namespace osc::gui
