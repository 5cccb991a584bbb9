#include "gui/widgets/statistics_panel.h"

#include "gui/model/time_ticks.h"
#include "gui/widgets/table_columns.h"
#include "gui/widgets/timeline_widget.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

#include <set>

namespace osc::gui {
namespace {

QString in(TimeNs ns, const ColumnUnit& unit) { return QString::fromStdString(formatInUnit(ns, unit)); }
QString shape(const std::array<uint32_t, 3>& v) {
    return v[0] == 0 ? QStringLiteral("–") : QStringLiteral("%1×%2×%3").arg(v[0]).arg(v[1]).arg(v[2]);
}

const char* kWhole = "whole capture";
const char* kRange = "selected range";

}  // namespace

// ---- table ----

void StatsTableModel::setRows(std::shared_ptr<const std::vector<KernelStatsRow>> rows) {
    beginResetModel();
    std::array<ColumnUnitPicker, ColumnCount> pick;
    for (const KernelStatsRow& r : *rows) {
        pick[Total].see(r.total);
        pick[Mean].see(static_cast<TimeNs>(r.mean + 0.5));
        pick[Median].see(r.median);
        pick[Min].see(r.min);
        pick[Max].see(r.max);
    }
    for (size_t c = 0; c < units_.size(); ++c) units_[c] = pick[c].durations();
    resetRows(rows->size());
    rows_ = std::move(rows);
    endResetModel();
    endReset();
}

int StatsTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant StatsTableModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
    static const char* kNames[] = {"name", "grid",   "block", "count", "total",
                                   "mean", "median", "min",   "max",   "share of GPU time"};
    if (role == Qt::DisplayRole) return QString::fromUtf8(kNames[section]);
    if (role == Qt::ToolTipRole && section == Share)
        return tr("this row's total over the summed duration of every kernel, copy and memset in scope");
    if (role == Qt::ToolTipRole && section == Median) return tr("the lower median: a duration that occurred");
    return {};
}

QVariant StatsTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const KernelStatsRow& r = rowAt(index.row());
    if (role == Qt::TextAlignmentRole)
        return index.column() >= Count ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    if (role == Qt::ToolTipRole && index.column() == Name)
        return QString::fromStdString(r.name) + tr("\nclick: go to the longest instance");
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
        case Name:
            return QString::fromStdString(r.name);
        case Grid:
            return shape(r.grid);
        case Block:
            return shape(r.block);
        case Count:
            return QLocale().toString(static_cast<qulonglong>(r.count));
        case Total:
            return in(r.total, units_[Total]);
        case Mean:
            return in(static_cast<TimeNs>(r.mean + 0.5), units_[Mean]);
        case Median:
            return in(r.median, units_[Median]);
        case Min:
            return in(r.min, units_[Min]);
        case Max:
            return in(r.max, units_[Max]);
        case Share:
            return QString::number(r.share * 100.0, 'f', 1) + " %";
    }
    return {};
}

std::function<AsyncSortedTableModel::Keys()> StatsTableModel::sortKeys(int column) const {
    return [rows = rows_, column]() {
        Keys k;
        std::vector<std::string> names;
        for (const KernelStatsRow& r : *rows) {
            switch (column) {
                case Name:
                    names.push_back(r.name);
                    break;
                case Grid:
                    k.push_back(static_cast<double>(r.grid[0]) * 1e12 + r.grid[1] * 1e6 + r.grid[2]);
                    break;
                case Block:
                    k.push_back(static_cast<double>(r.block[0]) * 1e12 + r.block[1] * 1e6 + r.block[2]);
                    break;
                case Count:
                    k.push_back(static_cast<double>(r.count));
                    break;
                case Total:
                    k.push_back(static_cast<double>(r.total));
                    break;
                case Mean:
                    k.push_back(r.mean);
                    break;
                case Median:
                    k.push_back(static_cast<double>(r.median));
                    break;
                case Min:
                    k.push_back(static_cast<double>(r.min));
                    break;
                case Max:
                    k.push_back(static_cast<double>(r.max));
                    break;
                default:
                    k.push_back(r.share);
                    break;
            }
        }
        return names.empty() ? k : rankStrings(names);
    };
}

// ---- panel ----

StatisticsPanel::StatisticsPanel(TimelineWidget* timeline, QWidget* parent) : QWidget(parent), timeline_(timeline) {
    scopeBox_ = new QComboBox(this);
    // Its items come with each capture: sized to them then, not to the empty box first shown.
    scopeBox_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    groupBox_ = new QComboBox(this);
    groupBox_->addItems({tr("by kernel name"), tr("by signature (name, grid, block)")});
    status_ = new QLabel(this);
    status_->setMinimumWidth(1);  // a long status is cut, not widening the window
    table_ = new StatsTableModel(this);
    view_ = new QTableView(this);
    view_->setModel(table_);
    view_->setSortingEnabled(true);
    view_->sortByColumn(StatsTableModel::Total, Qt::DescendingOrder);
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->setAlternatingRowColors(true);
    view_->verticalHeader()->hide();
    view_->verticalHeader()->setDefaultSectionSize(view_->fontMetrics().height() + 6);
    fitColumnsToSample(view_);
    view_->horizontalHeader()->setSectionResizeMode(StatsTableModel::Name, QHeaderView::Stretch);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Scope:"), this));
    bar->addWidget(scopeBox_);
    bar->addWidget(groupBox_);
    bar->addWidget(status_, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(bar);
    layout->addWidget(view_, 1);
    connect(scopeBox_, &QComboBox::currentIndexChanged, this, &StatisticsPanel::recompute);
    connect(groupBox_, &QComboBox::currentIndexChanged, this, &StatisticsPanel::recompute);
    connect(view_, &QTableView::clicked, this, [this](const QModelIndex& i) { jumpTo(i.row()); });
    // The selected-range scope follows the selection as it changes.
    connect(timeline_, &TimelineWidget::selectionChanged, this, [this] {
        if (scopeBox_->currentText() == tr(kRange)) recompute();
    });
}

StatisticsPanel::~StatisticsPanel() {
    if (cancel_) cancel_->store(true);
    if (worker_) worker_->wait();
}

void StatisticsPanel::setCapture(std::shared_ptr<const TimelineModel> model, std::shared_ptr<const Analysis> analysis) {
    model_ = std::move(model);
    analysis_ = std::move(analysis);
    const QSignalBlocker block(scopeBox_);
    scopeBox_->clear();
    scopeBox_->addItem(tr(kWhole));
    scopeBox_->addItem(tr(kRange));
    // Steps by name, in the order they ran on the first device that has them.
    std::set<std::string> seen;
    if (analysis_)
        for (const DeviceAnalysis& d : analysis_->devices)
            for (const StepAnalysis& s : d.steps)
                if (seen.insert(s.name).second) scopeBox_->addItem(tr("step: %1").arg(QString::fromStdString(s.name)));
    recompute();
}

bool StatisticsPanel::setScope(const QString& text) {
    const int i = scopeBox_->findText(text);
    if (i < 0) return false;
    scopeBox_->setCurrentIndex(i);
    recompute();  // also when the scope was already current (a new selection)
    return true;
}

void StatisticsPanel::setGrouping(StatsGrouping g) {
    groupBox_->setCurrentIndex(g == StatsGrouping::Signature ? 1 : 0);
}

StatsScope StatisticsPanel::currentScope() const {
    StatsScope scope;
    const QString text = scopeBox_->currentText();
    if (text == tr(kRange)) {
        const auto sel = timeline_->selection();
        if (!sel) return {{{-1, {0, 0}}}};  // nothing selected: nothing in scope
        for (int g : timeline_->selectionGroups()) scope.windows.emplace_back(g, *sel);
        if (scope.windows.empty()) scope.windows.emplace_back(-1, ViewRange{0, 0});
    } else if (text.startsWith(tr("step: ")) && analysis_ && model_) {
        const std::string name = text.mid(tr("step: ").size()).toStdString();
        for (const DeviceAnalysis& d : analysis_->devices) {
            const int g = model_->groupOf(d);
            for (const StepAnalysis& s : d.steps)
                if (s.name == name && g >= 0) scope.windows.emplace_back(g, ViewRange{s.start_ns, s.end_ns});
        }
        if (scope.windows.empty()) scope.windows.emplace_back(-1, ViewRange{0, 0});
    }
    return scope;
}

void StatisticsPanel::recompute() {
    if (cancel_) cancel_->store(true);
    scopeBox_->setEnabled(model_ != nullptr);
    groupBox_->setEnabled(model_ != nullptr);
    if (!model_) {
        table_->setRows(std::make_shared<std::vector<KernelStatsRow>>());
        // Partial results and saved reports keep per-step and per-collective
        // numbers, not the kernels these statistics count.
        status_->setText(analysis_ ? tr("Kernel statistics count the kernels of a capture, and this file holds "
                                        "none: open the captures it was made from.")
                                   : QString());
        return;
    }
    const uint64_t generation = ++generation_;
    cancel_ = std::make_shared<std::atomic<bool>>(false);
    status_->setText(tr("computing…"));
    const StatsGrouping grouping = groupBox_->currentIndex() == 1 ? StatsGrouping::Signature : StatsGrouping::Name;
    QThread* thread =
        QThread::create([this, model = model_, grouping, scope = currentScope(), cancel = cancel_, generation] {
            auto rows =
                std::make_shared<const std::vector<KernelStatsRow>>(kernelStats(*model, grouping, scope, cancel.get()));
            if (cancel->load()) return;
            QMetaObject::invokeMethod(
                this,
                [this, rows, generation] {
                    if (generation != generation_) return;
                    worker_ = nullptr;
                    table_->setRows(rows);
                    size_t events = 0;
                    for (const auto& r : *rows) events += r.count;
                    status_->setText(tr("%1 names, %2 events")
                                         .arg(rows->size())
                                         .arg(QLocale().toString(static_cast<qulonglong>(events))));
                    emit computed();
                },
                Qt::QueuedConnection);
        });
    if (worker_) worker_->wait();  // the cancelled one stops at its next lane
    worker_ = thread;
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start();
}

void StatisticsPanel::waitForResult() {
    while (worker_) {
        worker_->wait();
        QCoreApplication::processEvents();
    }
    table_->waitForSort();
}

QString StatisticsPanel::status() const { return status_->text(); }

void StatisticsPanel::jumpTo(int viewRow) {
    if (viewRow < 0 || viewRow >= table_->rowCount()) return;
    const EventRef ref = table_->rowAt(viewRow).longest;
    if (!ref.valid()) return;
    timeline_->selectEvent(ref, false);
    timeline_->fitEvent(ref);
}

}  // namespace osc::gui
