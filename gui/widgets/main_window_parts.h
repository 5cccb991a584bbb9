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
