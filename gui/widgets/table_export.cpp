#include "gui/widgets/table_export.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QKeyEvent>
#include <QSaveFile>
#include <QTableView>

#include <array>
#include <set>

namespace osc::gui {

namespace {

// Longest first: " ms" must not be read as " s".
constexpr std::array<const char*, 5> kUnits{" µs", " ms", " ns", " s", " %"};

bool noValue(const QString& cell) { return cell.isEmpty() || cell == "–" || cell == "-"; }

QString cellText(const QAbstractItemModel& m, int row, int column) {
    return m.index(row, column).data(Qt::DisplayRole).toString();
}

}  // namespace

QString quoteField(const QString& field, QChar separator) {
    const bool quote = field.contains(separator) || field.contains('"') || field.contains('\n') ||
                       field.contains('\r') ||
                       (!field.isEmpty() && (field.front().isSpace() || field.back().isSpace()));
    if (!quote) return field;
    QString out = field;
    out.replace('"', "\"\"");
    return '"' + out + '"';
}

QString commonUnit(const QStringList& cells) {
    QString unit;
    bool any = false;
    for (const QString& cell : cells) {
        if (noValue(cell)) continue;
        QString mine;
        for (const char* u : kUnits) {
            const QString candidate = QString::fromUtf8(u);
            if (!cell.endsWith(candidate)) continue;
            bool number = false;
            cell.left(cell.size() - candidate.size()).toDouble(&number);
            if (number) mine = candidate;
            break;
        }
        if (mine.isEmpty() || (any && mine != unit)) return {};
        unit = mine;
        any = true;
    }
    return unit;
}

QString tableText(const QTableView& view, QChar separator, bool selectedOnly) {
    const QAbstractItemModel* m = view.model();
    if (!m) return {};
    std::vector<int> columns;
    for (int c = 0; c < m->columnCount(); ++c)
        if (!view.isColumnHidden(c)) columns.push_back(c);
    std::vector<int> rows;
    if (selectedOnly && view.selectionModel()) {
        std::set<int> picked;
        for (const QModelIndex& i : view.selectionModel()->selectedIndexes()) picked.insert(i.row());
        rows.assign(picked.begin(), picked.end());
    }
    if (rows.empty())
        for (int r = 0; r < m->rowCount(); ++r)
            if (!view.isRowHidden(r)) rows.push_back(r);
    const bool rowHeaders = view.verticalHeader() && !view.verticalHeader()->isHidden();

    // Units come off the cells only when every row (not just the copied
    // ones) agrees, so a copied row reads like the same rows exported.
    std::vector<QString> units;
    for (int c : columns) {
        QStringList all;
        for (int r = 0; r < m->rowCount(); ++r) all << cellText(*m, r, c);
        units.push_back(commonUnit(all));
    }
    const auto line = [&](QStringList fields) {
        for (QString& f : fields) f = quoteField(f, separator);
        return fields.join(separator) + '\n';
    };
    QStringList header;
    if (rowHeaders) header << QString();
    for (size_t i = 0; i < columns.size(); ++i) {
        QString name = m->headerData(columns[i], Qt::Horizontal, Qt::DisplayRole).toString();
        const QString unit = units[i].trimmed();
        if (!unit.isEmpty()) name += " (" + unit + ")";
        header << name;
    }
    QString out = line(header);
    for (int r : rows) {
        QStringList fields;
        if (rowHeaders) fields << m->headerData(r, Qt::Vertical, Qt::DisplayRole).toString();
        for (size_t i = 0; i < columns.size(); ++i) {
            QString cell = cellText(*m, r, columns[i]);
            if (!units[i].isEmpty() && cell.endsWith(units[i])) cell.chop(units[i].size());
            fields << cell;
        }
        out += line(fields);
    }
    return out;
}

QString saveTableCsv(const QTableView& view, const QString& path) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) return file.errorString();
    file.write(tableText(view, ',').toUtf8());
    if (!file.commit()) return file.errorString();
    return {};
}

namespace {

// QAbstractItemView answers Ctrl+C itself with the current cell's text
// alone; this takes the key first and copies whole rows.
class CopyKeyFilter : public QObject {
public:
    using QObject::QObject;
    bool eventFilter(QObject* watched, QEvent* e) override {
        auto* view = qobject_cast<QTableView*>(watched);
        if (!view || (e->type() != QEvent::KeyPress && e->type() != QEvent::ShortcutOverride)) return false;
        if (!static_cast<QKeyEvent*>(e)->matches(QKeySequence::Copy)) return false;
        if (e->type() == QEvent::ShortcutOverride) {
            e->accept();  // the key comes to the view, not to a window shortcut
            return true;
        }
        QApplication::clipboard()->setText(tableText(*view, '\t', true));
        return true;
    }
};

}  // namespace

void installTableCopy(QTableView* view) {
    auto* copy = new QAction(QObject::tr("Copy rows"), view);
    copy->setShortcut(QKeySequence::Copy);
    copy->setShortcutContext(Qt::WidgetShortcut);  // shown in the menu; the filter acts on the key
    QObject::connect(copy, &QAction::triggered, view,
                     [view] { QApplication::clipboard()->setText(tableText(*view, '\t', true)); });
    view->installEventFilter(new CopyKeyFilter(view));
    auto* all = new QAction(QObject::tr("Copy table"), view);
    QObject::connect(all, &QAction::triggered, view,
                     [view] { QApplication::clipboard()->setText(tableText(*view, '\t', false)); });
    view->addAction(copy);
    view->addAction(all);
    view->setContextMenuPolicy(Qt::ActionsContextMenu);
}

}  // namespace osc::gui
