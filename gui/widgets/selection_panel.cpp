#include "gui/widgets/selection_panel.h"

#include "gui/model/range_metrics.h"
#include "gui/model/time_ticks.h"

#include <QFont>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

namespace osc::gui {
namespace {

QString dur(TimeNs ns) { return QString::fromStdString(formatDuration(ns, 4)); }

QString pct(const std::optional<double>& v) {
    return v ? QString::number(*v * 100, 'f', 1) + " %" : QStringLiteral("–");
}

QString factor(const std::optional<double>& v) { return v ? QString::number(*v, 'f', 2) + "×" : QStringLiteral("–"); }

}  // namespace

std::string shortGroupLabel(const TimelineModel& model, int group) {
    const Process& p = model.processOf(group);
    std::string who = p.rank >= 0 ? "rank " + std::to_string(p.rank) : p.host + ":" + std::to_string(p.pid);
    if (const Device* d = model.deviceOf(group)) who += " · GPU " + std::to_string(d->id);
    return who;
}

SelectionPanel::SelectionPanel(QWidget* parent) : QWidget(parent) {
    header_ = new QLabel(this);
    header_->setWordWrap(true);
    header_->setMargin(4);
    header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    table_ = new QTableWidget(this);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(header_);
    layout->addWidget(table_, 1);
    layout->addStretch(0);
    header_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    header_->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);
    showRange(nullptr, std::nullopt, {});
}

void SelectionPanel::showMessage(const QString& why) {
    table_->clear();
    table_->setRowCount(0);
    table_->setColumnCount(0);
    header_->setText(why);
    table_->hide();
}

void SelectionPanel::showRange(const TimelineModel* model, std::optional<ViewRange> range,
                               const std::vector<int>& groups) {
    table_->clear();
    table_->setRowCount(0);
    table_->setColumnCount(0);
    if (!model || !range) {
        showMessage(
            tr("Drag across lanes to measure a range on those devices, or on the ruler to measure it on all of them."));
        return;
    }
    const SelectionMetrics sel = selectionMetrics(*model, groups, range->start, range->end);
    const size_t n = sel.perDevice.size();
    header_->setText(tr("%1 from %2 on %n device(s)", nullptr, static_cast<int>(n))
                         .arg(dur(range->length()), QString::fromStdString(formatTimestamp(range->start))));
    if (n == 0) {
        table_->hide();
        return;
    }
    table_->show();
    // One column per device; the sum only when there is something to add up.
    const int columns = static_cast<int>(n) + (n > 1 ? 1 : 0);
    const QStringList rows = {tr("compute"),      tr("communication"), tr("overlap (hidden)"), tr("exposed comm"),
                              tr("busy"),         tr("idle"),          tr("overlap ratio"),    tr("achieved speedup"),
                              tr("ideal speedup")};
    table_->setRowCount(static_cast<int>(rows.size()));
    table_->setColumnCount(columns);
    table_->setVerticalHeaderLabels(rows);
    auto fill = [&](int column, const OverlapMetrics& m, bool bold) {
        const QStringList v = {dur(m.compute_ns),      dur(m.comm_ns), dur(m.overlap_ns),    dur(m.exposed_comm_ns),
                               dur(m.busy_ns),         dur(m.idle_ns), pct(m.overlap_ratio), factor(m.achieved_speedup),
                               factor(m.ideal_speedup)};
        for (int r = 0; r < v.size(); ++r) {
            auto* item = new QTableWidgetItem(v[r]);
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (bold) {
                QFont f = item->font();
                f.setBold(true);
                item->setFont(f);
            }
            table_->setItem(r, column, item);
        }
    };
    // The sum first: the dock is narrow, and the devices scroll beside it.
    QStringList headers;
    const int first = n > 1 ? 1 : 0;
    if (n > 1) {
        headers << tr("sum of %1 devices").arg(n);
        fill(0, sel.sum, true);
    }
    for (size_t i = 0; i < n; ++i) {
        headers << QString::fromStdString(shortGroupLabel(*model, sel.perDevice[i].first));
        fill(first + static_cast<int>(i), sel.perDevice[i].second, false);
    }
    table_->setHorizontalHeaderLabels(headers);
}

QString SelectionPanel::text() const {
    QString out = header_->text();
    if (!table_->isVisible() && table_->columnCount() == 0) return out;
    QStringList head;
    for (int c = 0; c < table_->columnCount(); ++c) head << table_->horizontalHeaderItem(c)->text();
    out += "\n\t" + head.join('\t');
    for (int r = 0; r < table_->rowCount(); ++r) {
        QStringList cells{table_->verticalHeaderItem(r)->text()};
        for (int c = 0; c < table_->columnCount(); ++c) cells << table_->item(r, c)->text();
        out += "\n" + cells.join('\t');
    }
    return out;
}

}  // namespace osc::gui
