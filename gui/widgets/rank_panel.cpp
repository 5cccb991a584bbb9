#include "gui/widgets/rank_panel.h"

#include "gui/model/kernel_links.h"
#include "gui/model/time_ticks.h"
#include "gui/widgets/tab_dock.h"
#include "gui/widgets/table_columns.h"
#include "gui/widgets/timeline_widget.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMainWindow>
#include <QStackedWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <numeric>

namespace osc::gui {
namespace {

QString durText(TimeNs ns) { return QString::fromStdString(formatDuration(ns, 4)); }

}  // namespace

void RankCollectiveModel::setData(std::shared_ptr<const Analysis> analysis) {
    auto rows = std::make_shared<std::vector<RankCollectiveRow>>(analysis ? rankCollectiveRows(*analysis)
                                                                          : std::vector<RankCollectiveRow>{});
    communicators_ = analysis ? rankCommunicators(*analysis, *rows) : std::vector<RankCommunicator>{};
    all_ = std::move(rows);
    filter_ = -1;
    showRows();
}

void RankCollectiveModel::setCommunicatorFilter(int communicator) {
    filter_ = communicator >= 0 && static_cast<size_t>(communicator) < communicators_.size() ? communicator : -1;
    showRows();
}

void RankCollectiveModel::showRows() {
    beginResetModel();
    if (filter_ < 0) {
        rows_ = all_;
    } else {
        auto part = std::make_shared<std::vector<RankCollectiveRow>>();
        for (const RankCollectiveRow& r : *all_)
            if (r.communicator == filter_) part->push_back(r);
        rows_ = std::move(part);
    }
    resetRows(rows_->size());
    endResetModel();
    endReset();
}

int RankCollectiveModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant RankCollectiveModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
    static const char* kNames[] = {"step",      "collective", "group",     "seq / bucket", "bytes",    "ranks", "skew",
                                   "last rank", "waiting",    "waiting %", "transfer",     "bus GB/s", "start"};
    static const char* kTips[] = {
        "the step of the lowest rank's instance",
        "the collective type",
        "the communicator (process group) it ran on, by its members' ranks: the NCCL plugin's commHash, or "
        "PyTorch's process group name; – when it was matched by order (no communicator known)",
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
    if (role == Qt::ToolTipRole && index.column() == Group && r.communicator >= 0) {
        const RankCommunicator& c = communicators_[static_cast<size_t>(r.communicator)];
        return tr("communicator %1: %2 ranks, %3 collectives matched across them")
            .arg(QString::fromStdString(hexHash(c.hash)))
            .arg(c.ranks.size())
            .arg(c.collectives);
    }
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
        case Step:
            return r.step.empty() ? QStringLiteral("outside steps") : QString::fromStdString(r.step);
        case Collective:
            return r.collective.empty() ? QStringLiteral("?") : QString::fromStdString(r.collective);
        case Group:
            return r.communicator >= 0
                       ? QString::fromStdString(communicators_[static_cast<size_t>(r.communicator)].label)
                       : QStringLiteral("–");
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
    if (column == Group) {
        // Communicators in their order (rows without one last), each one's
        // rows in time order: the integer part groups, the fraction orders.
        return [rows = rows_, none = static_cast<double>(communicators_.size())] {
            std::vector<size_t> byStart(rows->size());
            std::iota(byStart.begin(), byStart.end(), size_t{0});
            std::stable_sort(byStart.begin(), byStart.end(),
                             [&](size_t a, size_t b) { return (*rows)[a].start_ns < (*rows)[b].start_ns; });
            Keys k(rows->size());
            const double n = static_cast<double>(rows->size()) + 1;
            for (size_t i = 0; i < byStart.size(); ++i) {
                const RankCollectiveRow& r = (*rows)[byStart[i]];
                k[byStart[i]] = (r.communicator >= 0 ? r.communicator : none) + static_cast<double>(i) / n;
            }
            return k;
        };
    }
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
    fitColumnsToSample(table_);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    auto* hint = new QLabel(this);
    hint->setWordWrap(true);
    hint->setAlignment(Qt::AlignCenter);
    hint->setMargin(12);
    stack_ = new QStackedWidget(this);
    stack_->addWidget(table_);
    stack_->addWidget(hint);
    communicator_ = new QComboBox(this);
    communicator_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    communicator_->setToolTip(tr("Only the collectives of one communicator (process group)"));
    grouped_ = new QCheckBox(tr("Group by communicator"), this);
    grouped_->setToolTip(
        tr("Each communicator's collectives together, in time order (as sorting by the group "
           "column does)"));
    auto* bar = new QWidget(this);
    auto* barLayout = new QHBoxLayout(bar);
    barLayout->setContentsMargins(4, 2, 4, 2);
    barLayout->addWidget(new QLabel(tr("Communicator:"), bar));
    barLayout->addWidget(communicator_);
    barLayout->addWidget(grouped_);
    barLayout->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(bar);
    layout->addWidget(stack_);
    connect(table_, &QTableView::clicked, this, [this](const QModelIndex& i) { frameRow(i.row()); });
    connect(communicator_, &QComboBox::activated, this,
            [this](int index) { filterCommunicator(communicator_->itemData(index).toInt()); });
    connect(grouped_, &QCheckBox::toggled, this, &RanksPanel::groupByCommunicator);
    // A header click on another column is a sort of its own: the box follows.
    connect(table_->horizontalHeader(), &QHeaderView::sortIndicatorChanged, this, [this](int column, Qt::SortOrder) {
        const QSignalBlocker block(grouped_);
        grouped_->setChecked(column == RankCollectiveModel::Group);
    });
    setData(nullptr, nullptr);
}

void RanksPanel::fillCommunicators() {
    const QSignalBlocker block(communicator_);
    communicator_->clear();
    const auto& comms = model_->communicators();
    communicator_->addItem(tr("all (%1)").arg(comms.size()), -1);
    for (size_t i = 0; i < comms.size(); ++i)
        communicator_->addItem(
            tr("%1 · %2 collectives").arg(QString::fromStdString(comms[i].label)).arg(comms[i].collectives),
            static_cast<int>(i));
    // Nothing to choose between with one communicator (or none known).
    communicator_->parentWidget()->setVisible(comms.size() > 1);
}

void RanksPanel::filterCommunicator(int communicator) {
    model_->setCommunicatorFilter(communicator);
    const int at = communicator_->findData(model_->communicatorFilter());
    if (at >= 0 && at != communicator_->currentIndex()) {
        const QSignalBlocker block(communicator_);
        communicator_->setCurrentIndex(at);
    }
}

void RanksPanel::groupByCommunicator(bool on) {
    if (grouped_->isChecked() != on) {
        const QSignalBlocker block(grouped_);
        grouped_->setChecked(on);
    }
    table_->sortByColumn(on ? RankCollectiveModel::Group : RankCollectiveModel::Start, Qt::AscendingOrder);
}

void RanksPanel::setData(std::shared_ptr<const TimelineModel> model, std::shared_ptr<const Analysis> analysis) {
    timelineModel_ = std::move(model);
    analysis_ = std::move(analysis);
    model_->setData(analysis_);
    fillCommunicators();
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
    const std::vector<int> groupOf = groupsOfDevices(*timelineModel_, *analysis_);
    std::vector<int> groups;
    EventRef lowest;
    int lowestDevice = INT32_MAX;
    for (const auto& [d, op] : m.instances) {
        const DeviceAnalysis& dev = analysis_->devices[static_cast<size_t>(d)];
        const int g = d >= 0 && static_cast<size_t>(d) < groupOf.size() ? groupOf[static_cast<size_t>(d)] : -1;
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
