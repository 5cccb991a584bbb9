#include "gui/widgets/table_columns.h"

#include <QAbstractItemModel>
#include <QHeaderView>
#include <QTableView>

namespace osc::gui {

void fitColumnsToSample(QTableView* view) {
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    // Column widths come from the rows the vertical header lets the view measure.
    view->verticalHeader()->setResizeContentsPrecision(kFittedRows);
    view->horizontalHeader()->setResizeContentsPrecision(kFittedRows);
    if (QAbstractItemModel* model = view->model())
        QObject::connect(model, &QAbstractItemModel::modelReset, view, [view] { view->resizeColumnsToContents(); });
    view->resizeColumnsToContents();
}

}  // namespace osc::gui
