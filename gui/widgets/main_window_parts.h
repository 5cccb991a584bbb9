// What the files of MainWindow share (main_window.cpp: opening and showing
// a file; main_window_menus.cpp: menus, find, recent files;
// main_window_docks.cpp: the panels): sizes and small helpers. Not for
// other classes.
#pragma once

#include "analyzer/capture/model.h"

#include <QString>

class QAbstractItemModel;
class QStackedWidget;
class QTableView;
class QWidget;

namespace osc::gui::window_parts {

inline constexpr int kMaxRecent = 10;
inline constexpr int kStepDockHeight = 170;  // under a timeline, before the window is sized
// The bottom panels' share of the window under a timeline: at least a
// table of a dozen rows at 1920x1080, at most a bit over half.
inline constexpr double kBottomShareMin = 0.3, kBottomShareMax = 0.55;

// The bottom panels' height: what they have plus the blank the lanes leave
// below them, within the shares above.
int bottomDockHeight(int windowHeight, int current, int blankBelowLanes);

// A duration as the tables print it (4 significant digits).
QString dur(TimeNs ns);
// A count with the locale's digit grouping.
QString count(size_t n);
// A sortable panel table; the models sort themselves off the GUI thread (AsyncSortedTableModel).
QTableView* makeTable(QAbstractItemModel* model, int timeColumn, QWidget* parent);
// A table, or in its place a sentence saying why it is empty.
QStackedWidget* withHint(QTableView* table, QWidget* parent);
void showHint(QStackedWidget* stack, const QString& hint);

}  // namespace osc::gui::window_parts
