// MainWindow: File > Export (the window as a PNG, a panel's table as CSV)
// and Copy on every panel table (gui/widgets/table_export.h).
#include "gui/widgets/main_window.h"

#include "gui/model/compare_csv.h"
#include "gui/widgets/table_export.h"

#include <QDockWidget>
#include <QFileDialog>
#include <QImage>
#include <QMenu>
#include <QMessageBox>
#include <QSaveFile>
#include <QStackedWidget>
#include <QTableView>

#include <array>

namespace osc::gui {

namespace {

struct TablePanel {
    const char* name;   // the dock's object name
    const char* title;  // in the menu
};
constexpr std::array<TablePanel, 6> kTablePanels{{{"steps", "&Steps"},
                                                  {"collectives", "&Collectives"},
                                                  {"ranks", "Collectives across &ranks"},
                                                  {"statistics", "S&tatistics"},
                                                  {"selection", "Se&lection"},
                                                  {"details", "&Details"}}};

}  // namespace

void MainWindow::buildExportMenu(QMenu* file) {
    file->addAction(tr("&Export window as PNG…"), this, [this] {
        const QString path =
            QFileDialog::getSaveFileName(this, tr("Export the window as PNG"), "overlapscope.png", tr("PNG (*.png)"));
        if (path.isEmpty()) return;
        if (const QString error = exportPng(path); !error.isEmpty()) QMessageBox::warning(this, tr("Export"), error);
    });
    QMenu* csv = file->addMenu(tr("Export &table as CSV"));
    for (const TablePanel& panel : kTablePanels) {
        const QString name = QString::fromUtf8(panel.name);
        csv->addAction(tr(panel.title), this, [this, name] {
            const QString path = QFileDialog::getSaveFileName(this, tr("Export the %1 table as CSV").arg(name),
                                                              name + ".csv", tr("CSV (*.csv)"));
            if (path.isEmpty()) return;
            if (const QString error = exportTableCsv(name, path); !error.isEmpty())
                QMessageBox::warning(this, tr("Export"), error);
        });
    }
}

void MainWindow::installCopyOnTables() {
    for (const TablePanel& panel : kTablePanels)
        if (QTableView* table = panelTable(QString::fromUtf8(panel.name))) installTableCopy(table);
}

QTableView* MainWindow::panelTable(const QString& panel) const {
    for (QDockWidget* dock : findChildren<QDockWidget*>()) {
        if (dock->objectName() != panel) continue;
        // Steps and Collectives hold two tables (one run, two runs compared): the one shown.
        if (auto* stack = qobject_cast<QStackedWidget*>(dock->widget()); stack && stack->currentWidget()) {
            if (auto* table = qobject_cast<QTableView*>(stack->currentWidget())) return table;
            if (auto* table = stack->currentWidget()->findChild<QTableView*>()) return table;
        }
        return dock->findChild<QTableView*>();
    }
    return nullptr;
}

QString MainWindow::exportPng(const QString& path) {
    const QImage image = grab().toImage();
    if (!image.save(path, "PNG")) return tr("%1: cannot write the PNG").arg(path);
    return {};
}

QString MainWindow::exportTableCsv(const QString& panel, const QString& path) {
    // The compare tables: numbers, not the text shown (raw ns, ratios, ASCII minus).
    if (comparison_ && (panel == "steps" || panel == "collectives")) {
        const std::string text = panel == "steps"
                                     ? compareStepsCsv(*current_.analysis, *candidate_.analysis, *comparison_)
                                     : compareCollectivesCsv(*current_.analysis, *candidate_.analysis, *comparison_);
        QSaveFile file(path);
        if (!file.open(QIODevice::WriteOnly) || file.write(text.data(), static_cast<qint64>(text.size())) < 0 ||
            !file.commit())
            return path + ": " + file.errorString();
        return {};
    }
    const QTableView* table = panelTable(panel);
    if (!table)
        return tr("no panel named '%1' with a table (steps, collectives, ranks, statistics, selection, details)")
            .arg(panel);
    if (const QString error = saveTableCsv(*table, path); !error.isEmpty()) return path + ": " + error;
    return {};
}

}  // namespace osc::gui
