// Tables out of the window: a panel's table as CSV (File > Export table as
// CSV) or as tab-separated text on the clipboard (Ctrl+C, or the table's
// right-click menu), in the order and with the columns the view shows.
// A column whose cells all carry one unit ("40.267 ms", "2.8 %") has it
// moved into its header ("duration (ms)"), so that spreadsheets read the
// cells as numbers; columns have one unit each (gui/model/column_units.h).
#pragma once

#include <QString>

class QTableView;

namespace osc::gui {

// RFC 4180 quoting: a field with the separator, a quote, a line break or
// leading/trailing blanks goes in double quotes, its quotes doubled.
QString quoteField(const QString& field, QChar separator = ',');

// The unit every non-empty cell of a column ends with (" ms", " %", ...)
// after a number, or "" when the cells have none or several; "–" and "-"
// (no value) are ignored.
QString commonUnit(const QStringList& cells);

// The table as text: a header line, then one line per row (only the
// selected rows when `selectedOnly` and some are selected); hidden columns
// left out; the row headers first when the view shows them. Lines end "\n".
QString tableText(const QTableView& view, QChar separator = ',', bool selectedOnly = false);

// Writes tableText(view) to `path`; "" on success, else the reason.
QString saveTableCsv(const QTableView& view, const QString& path);

// Ctrl+C (while the table has the focus) and a right-click menu "Copy rows"
// / "Copy table": tab-separated text on the clipboard.
void installTableCopy(QTableView* view);

}  // namespace osc::gui
