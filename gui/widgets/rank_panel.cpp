#include "gui/widgets/rank_panel.h"

#include "gui/model/time_ticks.h"
#include "gui/widgets/tab_dock.h"
#include "gui/widgets/timeline_widget.h"

#include <QHeaderView>
#include <QLabel>
#include <QMainWindow>
#include <QStackedWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace osc::gui {
namespace {

QString durText(TimeNs ns) { return QString::fromStdString(formatDuration(ns, 4)); }

}  // namespace

void RankCollectiveModel::setData(std::shared_ptr<const Analysis> analysis) {
    beginResetModel();
    auto rows = std::make_shared<std::vector<RankCollectiveRow>>(analysis ? rankCollectiveRows(*analysis)
                                                                          : std::vector<RankCollectiveRow>{});
    resetRows(rows->size());
    rows_ = std::move(rows);
    endResetModel();
    endReset();
}

int RankCollectiveModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant RankCollectiveModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
    static const char* kNames[] = {"step",      "collective", "seq / bucket", "bytes",    "ranks",    "skew",
                                   "last rank", "waiting",    "waiting %",    "transfer", "bus GB/s", "start"};
    static const char* kTips[] = {
        "the step of the lowest rank's instance",
        "the collective type",
        "the NCCL plugin's sequence number; else #n: its place among the operations of its step",
        "bytes the collective moved (the ranks' largest)",
        "ranks it was matched on",
        "arrival spread: latest start minus earliest start (the report's skew)",
        "the rank that started last: everyone else waited for it",
        "summed over the ranks: each rank's time from its start until the last rank arrived",
        "waiting as a share of the ranks' summed time in this collective",
        "earliest end after the last arrival: the time the data actually moved (the report's transfer)",
        "bus bandwidth: the lower median over the ranks (each over its own transfer time)",
        "earliest start over the ranks"};
    if (role == Qt::DisplayRole) return QString::fromLatin1(kNames[section]);
    if (role == Qt::ToolTipRole) return QString::fromLatin1(kTips[section]);
    return {};
}

QVariant RankCollectiveModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const RankCollectiveRow& r = row(index.row());
    if (role == Qt::TextAlignmentRole)
        return index.column() <= Sequence ? QVariant() : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
        case Step:
            return r.step.empty() ? QStringLiteral("outside steps") : QString::fromStdString(r.step);
        case Collective:
            return r.collective.empty() ? QStringLiteral("?") : QString::fromStdString(r.collective);
        case Sequence:
            return r.seqNumber ? QString::number(*r.seqNumber) : QStringLiteral("#%1").arg(r.bucket);
        case Bytes:
            return r.bytes ? QString::fromStdString(formatBytes(*r.bytes)) : QStringLiteral("–");
        case Ranks:
            return r.ranks;
        case Skew:
            return durText(r.skew_ns);
        case LastRank:
            return r.lastRank >= 0 ? QString::number(r.lastRank) : QStringLiteral("?");
        case Waiting:
            return durText(r.waiting_ns);
        case WaitingShare:
            return r.rankTime_ns > 0
                       ? QString::number(100.0 * static_cast<double>(r.waiting_ns) / static_cast<double>(r.rankTime_ns),
                                         'f', 1) +
                             " %"
                       : QStringLiteral("–");
        case Transfer:
            return durText(r.transfer_ns);
        case BusBandwidth:
            return r.busbw_gbps ? QString::number(*r.busbw_gbps, 'f', 1) : QStringLiteral("–");
        case Start:
            return durText(r.start_ns);
        default:
            return {};
    }
}

std::function<AsyncSortedTableModel::Keys()> RankCollectiveModel::sortKeys(int column) const {
    return [rows = rows_, column] {
        Keys k;
        std::vector<std::string> text;
        for (const RankCollectiveRow& r : *rows) {
            switch (column) {
                case Step:
                    text.push_back(r.step);
                    break;
                case Collective:
                    text.push_back(r.collective);
                    break;
                case Sequence:
                    k.push_back(r.seqNumber ? static_cast<double>(*r.seqNumber) : r.bucket);
                    break;
                case Bytes:
                    k.push_back(r.bytes ? static_cast<double>(*r.bytes) : -1.0);
                    break;
                case Ranks:
                    k.push_back(r.ranks);
                    break;
                case Skew:
                    k.push_back(static_cast<double>(r.skew_ns));
                    break;
                case LastRank:
                    k.push_back(r.lastRank);
                    break;
                case Waiting:
                    k.push_back(static_cast<double>(r.waiting_ns));
                    break;
                case WaitingShare:
                    k.push_back(r.rankTime_ns > 0
                                    ? static_cast<double>(r.waiting_ns) / static_cast<double>(r.rankTime_ns)
                                    : -1.0);
                    break;
                case Transfer:
                    k.push_back(static_cast<double>(r.transfer_ns));
                    break;
                case BusBandwidth:
                    k.push_back(r.busbw_gbps.value_or(-1.0));
                    break;
                default:
                    k.push_back(static_cast<double>(r.start_ns));
                    break;
            }
        }
        return text.empty() ? k : rankStrings(text);
    };
}

RanksPanel::RanksPanel(TimelineWidget* timeline, QWidget* parent)
    : QWidget(parent), timeline_(timeline), model_(new RankCollectiveModel(this)) {
    table_ = new QTableView(this);
    table_->setModel(model_);
    table_->setSortingEnabled(true);
    table_->sortByColumn(RankCollectiveModel::Start, Qt::AscendingOrder);  // job order until the user sorts
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setAlternatingRowColors(true);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    auto* hint = new QLabel(this);
    hint->setWordWrap(true);
    hint->setAlignment(Qt::AlignCenter);
    hint->setMargin(12);
    stack_ = new QStackedWidget(this);
    stack_->addWidget(table_);
    stack_->addWidget(hint);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(stack_);
    connect(table_, &QTableView::clicked, this, [this](const QModelIndex& i) { frameRow(i.row()); });
    setData(nullptr, nullptr);
}

void RanksPanel::setData(std::shared_ptr<const TimelineModel> model, std::shared_ptr<const Analysis> analysis) {
    timelineModel_ = std::move(model);
    analysis_ = std::move(analysis);
    model_->setData(analysis_);
    QString why;
    if (!analysis_)
        why = tr("Open a capture of two or more ranks: each collective is shown once, across its ranks.");
    else if (analysis_->devices.size() < 2)
        why = tr("One GPU: collectives are matched across two or more ranks (its own are in Collectives).");
    else if (model_->rowCount() == 0)
        why =
            tr("No collective was matched across ranks (by the NCCL plugin's communicator and sequence "
               "number, else by order per collective type).");
    static_cast<QLabel*>(stack_->widget(1))->setText(why);
    stack_->setCurrentIndex(why.isEmpty() ? 0 : 1);
}

QString RanksPanel::hint() const {
    return stack_->currentIndex() == 1 ? static_cast<QLabel*>(stack_->widget(1))->text() : QString();
}

void RanksPanel::frameRow(int viewRow) {
    if (!timelineModel_ || !analysis_ || viewRow < 0 || viewRow >= model_->rowCount() || !timeline_->model()) return;
    const RankCollectiveRow& r = model_->row(viewRow);
    const MatchedCollective& m = analysis_->matched[static_cast<size_t>(r.matched)];
    std::vector<int> groups;
    EventRef lowest;
    int lowestDevice = INT32_MAX;
    for (const auto& [d, op] : m.instances) {
        const DeviceAnalysis& dev = analysis_->devices[static_cast<size_t>(d)];
        const int g = timelineModel_->groupOf(dev);
        if (g < 0) continue;
        groups.push_back(g);
        const CollectiveInstance& c = dev.collectives[static_cast<size_t>(op)];
        if (d < lowestDevice && c.kernelIndex != static_cast<size_t>(-1)) {
            lowestDevice = d;
            lowest = timelineModel_->findKernel(g, static_cast<uint32_t>(c.kernelIndex));
        }
    }
    const TimeNs margin = std::max<TimeNs>(1, (r.end_ns - r.start_ns) / 10);
    timeline_->setViewRange({r.start_ns - margin, r.end_ns + margin});
    // The kernel first (outlines on every rank, a line at each arrival), then
    // the range on every rank for the Selection panel.
    timeline_->selectEvent(lowest, false);
    timeline_->setSelection({r.start_ns, r.end_ns}, groups);
}

RanksPanel* addRanksDock(QMainWindow* window, QMenu* viewMenu, TimelineWidget* timeline) {
    auto* panel = new RanksPanel(timeline, window);
    addTabDock(window, viewMenu, panel,
               {QObject::tr("Collectives across ranks"), "ranks", QObject::tr("Collectives across &ranks"),
                QObject::tr("One row per collective matched across ranks: skew, the last rank, waiting and transfer")});
    return panel;
}

}  // namespace osc::gui
