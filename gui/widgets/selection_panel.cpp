#include "gui/widgets/selection_panel.h"

#include "gui/model/time_ticks.h"

#include <QFont>
#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

namespace osc::gui {
namespace {

QString dur(TimeNs ns) { return QString::fromStdString(formatDuration(ns, 4)); }

QString pct(const std::optional<double>& v) {
    return v ? QString::number(*v * 100, 'f', 1) + " %" : QStringLiteral("–");
}

QString factor(const std::optional<double>& v) { return v ? QString::number(*v, 'f', 2) + "×" : QStringLiteral("–"); }

const char* const kMetricNames[SelectionTableModel::kMetricRows] = {
    "compute", "communication", "overlap (hidden)", "exposed comm", "busy",
    "idle",    "overlap ratio", "achieved speedup", "ideal speedup"};

QString metricText(const OverlapMetrics& m, int row) {
    switch (row) {
        case 0:
            return dur(m.compute_ns);
        case 1:
            return dur(m.comm_ns);
        case 2:
            return dur(m.overlap_ns);
        case 3:
            return dur(m.exposed_comm_ns);
        case 4:
            return dur(m.busy_ns);
        case 5:
            return dur(m.idle_ns);
        case 6:
            return pct(m.overlap_ratio);
        case 7:
            return factor(m.achieved_speedup);
        default:
            return factor(m.ideal_speedup);
    }
}

}  // namespace

std::string shortGroupLabel(const TimelineModel& model, int group) {
    const Process& p = model.processOf(group);
    std::string who = p.rank >= 0 ? "rank " + std::to_string(p.rank) : p.host + ":" + std::to_string(p.pid);
    if (const Device* d = model.deviceOf(group)) who += " · GPU " + std::to_string(d->id);
    return who;
}

void SelectionTableModel::setMetrics(SelectionMetrics metrics, QStringList labels) {
    beginResetModel();
    metrics_ = std::move(metrics);
    labels_ = std::move(labels);
    endResetModel();
}

int SelectionTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || devices() == 0 ? 0 : kMetricRows;
}

int SelectionTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : devices() + (hasSum() ? 1 : 0);
}

const OverlapMetrics& SelectionTableModel::column(int c) const {
    if (hasSum()) {
        if (c == 0) return metrics_.sum;
        --c;
    }
    return metrics_.perDevice[static_cast<size_t>(c)].second;
}

QVariant SelectionTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount()) return {};
    if (role == Qt::DisplayRole) return metricText(column(index.column()), index.row());
    if (role == Qt::TextAlignmentRole) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::FontRole && hasSum() && index.column() == 0) {
        QFont f;
        f.setBold(true);
        return f;
    }
    return {};
}

QVariant SelectionTableModel::headerData(int section, Qt::Orientation o, int role) const {
    if (role != Qt::DisplayRole || section < 0) return {};
    if (o == Qt::Vertical) return section < kMetricRows ? tr(kMetricNames[section]) : QVariant();
    if (section >= columnCount()) return {};
    // The sum first: the dock is narrow, and the devices scroll beside it.
    if (hasSum() && section == 0) return tr("sum of %1 devices").arg(devices());
    const int device = section - (hasSum() ? 1 : 0);
    return device < labels_.size() ? labels_[device] : QString();
}

SelectionPanel::SelectionPanel(QWidget* parent) : QWidget(parent) {
    header_ = new QLabel(this);
    header_->setWordWrap(true);
    header_->setMargin(4);
    header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    model_ = new SelectionTableModel(this);
    table_ = new QTableView(this);
    table_->setModel(model_);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    // Fixed sizes, set once per selection (fitColumns): sizing 1,025 columns
    // to their contents on every change is what froze the window.
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
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
    model_->clear();
    header_->setText(why);
    table_->hide();
}

QStringList SelectionPanel::labelsOf(const TimelineModel& model, const SelectionMetrics& sel) {
    std::vector<int> groups;
    groups.reserve(sel.perDevice.size());
    for (const auto& [g, m] : sel.perDevice) groups.push_back(g);
    if (&model != labelledModel_ || groups != labelledGroups_) {
        labels_.clear();
        for (int g : groups) labels_ << QString::fromStdString(shortGroupLabel(model, g));
        labelledModel_ = &model;
        labelledGroups_ = std::move(groups);
    }
    return labels_;
}

void SelectionPanel::fitColumns() {
    QHeaderView* h = table_->horizontalHeader();
    const int columns = model_->columnCount();
    if (columns <= kFittedColumns) {
        table_->resizeColumnsToContents();
        return;
    }
    // Many devices: one width that fits a device's label and its numbers,
    // and the sum's own.
    const QFontMetrics fm = table_->fontMetrics();
    h->setDefaultSectionSize(fm.horizontalAdvance(QStringLiteral("rank 00000 · GPU 00")) + 16);
    for (int c = 0; c < columns; ++c) h->resizeSection(c, h->defaultSectionSize());
    if (model_->hasSum()) table_->resizeColumnToContents(0);
}

void SelectionPanel::showRange(const TimelineModel* model, std::optional<ViewRange> range,
                               const std::vector<int>& groups) {
    if (!model || !range) {
        labelledModel_ = nullptr;  // a new capture may come at the same address
        labelledGroups_.clear();
        showMessage(
            tr("Drag across lanes to measure a range on those devices, or on the ruler to measure it on all of them."));
        return;
    }
    SelectionMetrics sel = selectionMetrics(*model, groups, range->start, range->end);
    const size_t n = sel.perDevice.size();
    header_->setText(tr("%1 from %2 on %n device(s)", nullptr, static_cast<int>(n))
                         .arg(dur(range->length()), QString::fromStdString(formatTimestamp(range->start))));
    if (n == 0) {
        model_->clear();
        table_->hide();
        return;
    }
    const int columnsBefore = model_->columnCount();
    QStringList labels = labelsOf(*model, sel);
    model_->setMetrics(std::move(sel), std::move(labels));
    table_->show();
    // Widths follow the devices, not every new range of a drag over them.
    if (model_->columnCount() != columnsBefore || model_->columnCount() <= kFittedColumns) fitColumns();
}

QString SelectionPanel::text() const {
    QString out = header_->text();
    if (model_->columnCount() == 0) return out;
    QStringList head;
    for (int c = 0; c < model_->columnCount(); ++c)
        head << model_->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString();
    out += "\n\t" + head.join('\t');
    for (int r = 0; r < model_->rowCount(); ++r) {
        QStringList cells{model_->headerData(r, Qt::Vertical, Qt::DisplayRole).toString()};
        for (int c = 0; c < model_->columnCount(); ++c) cells << model_->index(r, c).data().toString();
        out += "\n" + cells.join('\t');
    }
    return out;
}

}  // namespace osc::gui
