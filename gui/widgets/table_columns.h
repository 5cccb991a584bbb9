// Column widths of the panels' tables, fitted without measuring every row.
//
// QHeaderView::ResizeToContents measures up to 1,000 rows of every column
// again on each reset, sort and show: the Collectives table of a 1,024-rank
// job took about 90 ms of the window's thread each time it was shown
// (issue 40). Here the columns are fitted to their header and a sample of
// rows (those on screen first) once per reset, and then stay as they are or
// as the user drags them.
#pragma once

class QTableView;

namespace osc::gui {

// Rows measured per column when fitting.
inline constexpr int kFittedRows = 64;

// Fits `view`'s columns now and after each reset of its model (set the model first).
void fitColumnsToSample(QTableView* view);

}  // namespace osc::gui
