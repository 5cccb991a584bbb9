#include "gui/widgets/metric_tables.h"

#include "gui/model/kernel_links.h"
#include "gui/model/step_patterns.h"
#include "gui/model/step_verdict.h"
#include "gui/model/time_ticks.h"
#include "gui/widgets/qt_values.h"

#include <QBrush>
#include <QColor>
#include <QFont>

#include <iterator>

namespace osc::gui {
namespace {

// One unit per column, to the microsecond: neighbouring rows never read
// alike, nor in different units.
QString in(TimeNs ns, const ColumnUnit& unit) { return QString::fromStdString(formatInUnit(ns, unit)); }

QString percent(const std::optional<double>& v) {
    return v ? QString::number(*v * 100.0, 'f', 1) + " %" : QStringLiteral("–");
}

double share(TimeNs part, TimeNs whole) {
    return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

QString deviceName(const DeviceAnalysis& d) {
    return (d.rank >= 0 ? QStringLiteral("rank %1").arg(d.rank)
                        : QString::fromStdString(d.host) + ":" + QString::number(d.pid)) +
           QStringLiteral(" · GPU %1").arg(d.device);
}

QVariant packEvent(EventRef ref) {
    if (!ref.valid()) return {};
    return QVariantList{ref.lane, ref.row, QVariant::fromValue<qulonglong>(ref.index)};
}

EventRef unpackEvent(const QVariant& v) {
    const QVariantList l = v.toList();
    if (l.size() != 3) return {};
    return {l[0].toInt(), l[1].toInt(), static_cast<size_t>(l[2].toULongLong())};
}

int groupForDevice(const TimelineModel& model, const DeviceAnalysis& d) { return model.groupOf(d); }

// ---- steps ----

void StepTableModel::setData(std::shared_ptr<const TimelineModel> model, std::shared_ptr<const Analysis> analysis) {
    beginResetModel();
    model_ = std::move(model);
    analysis_ = std::move(analysis);
    auto rows = std::make_shared<std::vector<Row>>();
    hasPipeline_ = hasAllToAll_ = false;
    std::array<ColumnUnitPicker, ColumnCount> pick;
    if (analysis_) {
        const auto alltoall = allToAllStepIndex(*analysis_);
        const std::vector<int> groups = model_ ? groupsOfDevices(*model_, *analysis_) : std::vector<int>{};
        for (size_t d = 0; d < analysis_->devices.size(); ++d) {
            const int group = model_ ? groups[d] : -1;
            for (size_t s = 0; s < analysis_->devices[d].steps.size(); ++s) {
                const StepAnalysis& st = analysis_->devices[d].steps[s];
                const OverlapMetrics& m = st.metrics;
                for (const auto& [column, v] : {std::pair{Start, st.start_ns},
                                                {Duration, st.end_ns - st.start_ns},
                                                {Compute, m.compute_ns},
                                                {Comm, m.comm_ns},
                                                {Overlap, m.overlap_ns},
                                                {Exposed, m.exposed_comm_ns},
                                                {Idle, m.idle_ns}})
                    pick[static_cast<size_t>(column)].see(v);
                rows->push_back({static_cast<int>(d), static_cast<int>(s), group, alltoall[d][s]});
                hasPipeline_ |= analysis_->devices[d].steps[s].pipeline.has_value();
                hasAllToAll_ |= alltoall[d][s] >= 0;
            }
        }
    }
    for (size_t c = 0; c < units_.size(); ++c) units_[c] = c == Start ? pick[c].timestamps() : pick[c].durations();
    resetRows(rows->size());
    rows_ = std::move(rows);
    endResetModel();
    endReset();
}

int StepTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant StepTableModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal) return {};
    static const char* kNames[] = {"device",
                                   "step",
                                   "start",
                                   "duration",
                                   "compute",
                                   "comm",
                                   "overlap",
                                   "exposed",
                                   "idle",
                                   "idle %",
                                   "overlap %",
                                   "bubble % (theory)",
                                   "all-to-all imbalance",
                                   "verdict",
                                   "largest finding"};
    static const char* kTips[] = {
        nullptr,
        nullptr,
        "GPU window start",
        "GPU window of the step",
        nullptr,
        nullptr,
        "communication hidden behind compute",
        "communication with no compute under it",
        "no GPU activity",
        "idle share of the step",
        "hidden share of the communication",
        "pipeline stage: share of the pipeline window with no compute on it, and in "
        "brackets the theory (S−1)/(M+S−1) for S stages and M micro-batches",
        "max / mean over ranks of the step's all-to-all bytes (else transfer time); "
        "⚑ on the rank that moves the most, when the analyzer calls it imbalanced",
        "the report's verdict: communication-bound when communication time exceeds compute time; "
        "a mostly idle step shows it in idle % and the largest finding",
        "the analyzer's largest finding (hover a row for all of them)"};
    static_assert(std::size(kNames) == ColumnCount && std::size(kTips) == ColumnCount);
    if (section < 0 || section >= ColumnCount) return {};
    if (role == Qt::DisplayRole) return QString::fromUtf8(kNames[section]);
    if (role == Qt::ToolTipRole && kTips[section]) return QString::fromUtf8(kTips[section]);
    return {};
}

QVariant StepTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const Row& r = (*rows_)[static_cast<size_t>(sourceRow(index.row()))];
    const DeviceAnalysis& d = analysis_->devices[static_cast<size_t>(r.device)];
    const StepAnalysis& s = d.steps[static_cast<size_t>(r.step)];
    const OverlapMetrics& m = s.metrics;
    const AllToAllStep* a2a = r.alltoall >= 0 ? &analysis_->alltoall[static_cast<size_t>(r.alltoall)] : nullptr;
    // The rank the analyzer's AllToAllImbalance finding is about.
    const bool overloaded = a2a && a2a->overloaded == r.device && allToAllImbalanced(*analysis_, *a2a);
    // The report calls an idle step compute-bound too; bold idle % and finding
    // keep "the GPU mostly waited for the host" from reading as busy compute.
    const bool idleLed = !s.bottleneck.findings.empty() && s.bottleneck.findings.front().kind == FindingKind::IdleGap;
    switch (role) {
        case StartRole:
            return nsValue(s.start_ns);
        case EndRole:
            return nsValue(s.end_ns);
        case GroupRole:
            return r.group;
        case EventRole:
            return model_ && r.group >= 0 ? packEvent(model_->findStep(r.group, s.start_ns)) : QVariant();
        case Qt::TextAlignmentRole:
            return index.column() >= Start && index.column() <= AllToAllImbalance
                       ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                       : QVariant();
        case Qt::FontRole:
            if (!(index.column() == AllToAllImbalance && overloaded) &&
                !((index.column() == IdleShare || index.column() == Finding) && idleLed))
                return {};
            {
                QFont f;
                f.setBold(true);
                return f;
            }
        case Qt::ToolTipRole:
            if (index.column() == Verdict || index.column() == Finding) {
                const std::string details = stepVerdict(s).details;
                return details.empty() ? QVariant() : QVariant(QString::fromStdString(details));
            }
            if (index.column() == Bubble && s.pipeline)
                return QString::fromStdString(stageText(*s.pipeline) + ": " + bubbleDetails(*s.pipeline));
            if (index.column() == AllToAllImbalance && a2a)
                return QString::fromStdString(
                    imbalanceDetails(*analysis_, *a2a) +
                    (s.alltoall ? "\nthis rank: " + allToAllText(*s.alltoall) : std::string()));
            return {};
        case Qt::DisplayRole:
            break;
        default:
            return {};
    }
    switch (index.column()) {
        case Device:
            return deviceName(d);
        case Step:
            return QString::fromStdString(s.name);
        case Start:
            return in(s.start_ns, units_[Start]);
        case Duration:
            return in(s.end_ns - s.start_ns, units_[Duration]);
        case Compute:
            return in(m.compute_ns, units_[Compute]);
        case Comm:
            return in(m.comm_ns, units_[Comm]);
        case Overlap:
            return in(m.overlap_ns, units_[Overlap]);
        case Exposed:
            return in(m.exposed_comm_ns, units_[Exposed]);
        case Idle:
            return in(m.idle_ns, units_[Idle]);
        case IdleShare:
            return QString::number(share(m.idle_ns, m.window_ns) * 100.0, 'f', 1) + " %";
        case OverlapRatio:
            return percent(m.overlap_ratio);
        case Bubble:
            return s.pipeline ? QString::fromStdString(bubbleShareText(*s.pipeline)) : QStringLiteral("–");
        case AllToAllImbalance:
            if (!a2a || imbalanceText(*a2a).empty()) return QStringLiteral("–");
            return (overloaded ? QStringLiteral("⚑ ") : QString()) + QString::fromStdString(imbalanceText(*a2a));
        case Verdict:
            return QString::fromStdString(stepVerdict(s).text);
        case Finding:
            return QString::fromStdString(stepVerdict(s).finding);
    }
    return {};
}

std::function<AsyncSortedTableModel::Keys()> StepTableModel::sortKeys(int column) const {
    if (!analysis_ || !rows_) return {};
    return [a = analysis_, rows = rows_, column]() {
        Keys k;
        k.reserve(rows->size());
        std::vector<std::string> text;
        for (const Row& r : *rows) {
            const StepAnalysis& s = a->devices[static_cast<size_t>(r.device)].steps[static_cast<size_t>(r.step)];
            const OverlapMetrics& m = s.metrics;
            switch (column) {
                case Device:
                    k.push_back(r.device);
                    break;
                case Step:
                    k.push_back(r.step);
                    break;
                case Start:
                    k.push_back(static_cast<double>(s.start_ns));
                    break;
                case Duration:
                    k.push_back(static_cast<double>(s.end_ns - s.start_ns));
                    break;
                case Compute:
                    k.push_back(static_cast<double>(m.compute_ns));
                    break;
                case Comm:
                    k.push_back(static_cast<double>(m.comm_ns));
                    break;
                case Overlap:
                    k.push_back(static_cast<double>(m.overlap_ns));
                    break;
                case Exposed:
                    k.push_back(static_cast<double>(m.exposed_comm_ns));
                    break;
                case Idle:
                    k.push_back(static_cast<double>(m.idle_ns));
                    break;
                case IdleShare:
                    k.push_back(share(m.idle_ns, m.window_ns));
                    break;
                case OverlapRatio:
                    k.push_back(m.overlap_ratio.value_or(-1));
                    break;
                case Bubble:
                    k.push_back(s.pipeline ? s.pipeline->bubble_share.value_or(-1) : -1);
                    break;
                case AllToAllImbalance:
                    k.push_back(r.alltoall >= 0
                                    ? allToAllImbalance(a->alltoall[static_cast<size_t>(r.alltoall)]).value_or(-1)
                                    : -1);
                    break;
                case Verdict:
                    text.push_back(stepVerdict(s).text);
                    break;
                default:
                    text.push_back(stepVerdict(s).finding);
                    break;
            }
        }
        return text.empty() ? k : rankStrings(text);
    };
}

// ---- collectives ----

void CollectiveTableModel::setData(std::shared_ptr<const TimelineModel> model,
                                   std::shared_ptr<const Analysis> analysis) {
    beginResetModel();
    model_ = std::move(model);
    analysis_ = std::move(analysis);
    auto rows = std::make_shared<std::vector<Row>>();
    std::array<ColumnUnitPicker, ColumnCount> pick;
    if (analysis_) {
        const std::vector<int> groups = model_ ? groupsOfDevices(*model_, *analysis_) : std::vector<int>{};
        for (size_t d = 0; d < analysis_->devices.size(); ++d) {
            const DeviceAnalysis& dev = analysis_->devices[d];
            const int group = model_ ? groups[d] : -1;
            std::vector<char> bottleneck(dev.collectives.size(), 0);
            for (const StepAnalysis& s : dev.steps)
                if (s.bottleneck.collective >= 0 && static_cast<size_t>(s.bottleneck.collective) < bottleneck.size())
                    bottleneck[static_cast<size_t>(s.bottleneck.collective)] = 1;
            for (size_t c = 0; c < dev.collectives.size(); ++c) {
                const CollectiveInstance& op = dev.collectives[c];
                pick[Start].see(op.start_ns);
                pick[Duration].see(op.duration_ns);
                pick[Overlapped].see(op.overlapped_ns);
                pick[Exposed].see(op.exposed_ns);
                rows->push_back({static_cast<int>(d), static_cast<int>(c), group, bottleneck[c] != 0});
            }
        }
    }
    for (size_t c = 0; c < units_.size(); ++c) units_[c] = c == Start ? pick[c].timestamps() : pick[c].durations();
    resetRows(rows->size());
    rows_ = std::move(rows);
    endResetModel();
    endReset();
}

int CollectiveTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

bool CollectiveTableModel::isBottleneck(int row) const {
    return row >= 0 && row < rowCount() && (*rows_)[static_cast<size_t>(sourceRow(row))].bottleneck;
}

QVariant CollectiveTableModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* kNames[] = {"device",  "collective", "step",      "start",         "duration", "overlapped",
                                   "exposed", "bytes",      "bandwidth", "bus bandwidth", "% of peak"};
    return section >= 0 && section < ColumnCount ? QString::fromLatin1(kNames[section]) : QVariant();
}

QVariant CollectiveTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const Row& r = (*rows_)[static_cast<size_t>(sourceRow(index.row()))];
    const DeviceAnalysis& d = analysis_->devices[static_cast<size_t>(r.device)];
    const CollectiveInstance& c = d.collectives[static_cast<size_t>(r.collective)];
    switch (role) {
        case StartRole:
            return nsValue(c.start_ns);
        case EndRole:
            return nsValue(c.end_ns);
        case GroupRole:
            return r.group;
        case EventRole: {
            if (!model_ || r.group < 0) return {};
            if (c.kernelIndex != static_cast<size_t>(-1))
                return packEvent(model_->findKernel(r.group, static_cast<uint32_t>(c.kernelIndex)));
            return packEvent(model_->findOnStream(r.group, c.stream, c.start_ns, EventSource::Copy));
        }
        case Qt::FontRole:
            if (!r.bottleneck) return {};
            {
                QFont f;
                f.setBold(true);
                return f;
            }
        case Qt::BackgroundRole:
            return r.bottleneck ? QVariant(QBrush(QColor(0xFF, 0xE0, 0xD6))) : QVariant();
        case Qt::ToolTipRole:
            if (index.column() == BusBandwidth || index.column() == OfPeak) return busBandwidthTip(d, c);
            return r.bottleneck ? QVariant(tr("bottleneck bucket: the most exposed communication in its step"))
                                : QVariant();
        case Qt::TextAlignmentRole:
            return index.column() >= Start ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
        case Qt::DisplayRole:
            break;
        default:
            return {};
    }
    switch (index.column()) {
        case Device:
            return deviceName(d);
        case Name: {
            const QString name = QString::fromUtf8(c.collectiveOrName().view());
            return r.bottleneck ? QStringLiteral("⚑ ") + name : name;
        }
        case Step:
            return c.step >= 0 && static_cast<size_t>(c.step) < d.steps.size()
                       ? QString::fromStdString(d.steps[static_cast<size_t>(c.step)].name)
                       : tr("outside steps");
        case Start:
            return in(c.start_ns, units_[Start]);
        case Duration:
            return in(c.duration_ns, units_[Duration]);
        case Overlapped:
            return in(c.overlapped_ns, units_[Overlapped]);
        case Exposed:
            return in(c.exposed_ns, units_[Exposed]);
        case Bytes:
            return c.bytes ? QString::fromStdString(formatBytes(*c.bytes)) : QStringLiteral("–");
        case Bandwidth:
            return c.bandwidth_gbps ? QString::number(*c.bandwidth_gbps, 'f', 1) + " GB/s" : QStringLiteral("–");
        case BusBandwidth:
            return c.busbw_gbps ? QString::number(*c.busbw_gbps, 'f', 1) + " GB/s" : QStringLiteral("–");
        case OfPeak:
            return c.busbw_fraction ? QString::number(*c.busbw_fraction * 100.0, 'f', 0) + " %" : QStringLiteral("–");
    }
    return {};
}

QVariant CollectiveTableModel::busBandwidthTip(const DeviceAnalysis& d, const CollectiveInstance& c) const {
    if (!c.algbw_gbps) return tr("no bus bandwidth: the bytes or the transfer time are unknown");
    QString tip = tr("algorithm bandwidth %1 GB/s over the %2")
                      .arg(*c.algbw_gbps, 0, 'f', 1)
                      .arg(c.busbw_basis == BusBwBasis::Transfer ? tr("transfer after the last rank arrived")
                                                                 : tr("whole kernel (matched on no other rank)"));
    if (d.busbw && d.busbw->peak_busbw_gbps)
        tip += tr("; link %1, peak %2 GB/s")
                   .arg(QString::fromStdString(d.busbw->link))
                   .arg(*d.busbw->peak_busbw_gbps, 0, 'f', 0);
    return tip;
}

std::function<AsyncSortedTableModel::Keys()> CollectiveTableModel::sortKeys(int column) const {
    if (!analysis_ || !rows_) return {};
    return [a = analysis_, rows = rows_, column]() {
        Keys k;
        k.reserve(rows->size());
        std::vector<std::string> text;
        for (const Row& r : *rows) {
            const DeviceAnalysis& d = a->devices[static_cast<size_t>(r.device)];
            const CollectiveInstance& c = d.collectives[static_cast<size_t>(r.collective)];
            switch (column) {
                case Device:
                    k.push_back(r.device);
                    break;
                case Name:
                    text.push_back(c.collectiveOrName().str());
                    break;
                case Step:
                    k.push_back(c.step);
                    break;
                case Start:
                    k.push_back(static_cast<double>(c.start_ns));
                    break;
                case Duration:
                    k.push_back(static_cast<double>(c.duration_ns));
                    break;
                case Overlapped:
                    k.push_back(static_cast<double>(c.overlapped_ns));
                    break;
                case Exposed:
                    k.push_back(static_cast<double>(c.exposed_ns));
                    break;
                case Bytes:
                    k.push_back(c.bytes ? static_cast<double>(*c.bytes) : -1.0);
                    break;
                case BusBandwidth:
                    k.push_back(c.busbw_gbps.value_or(-1.0));
                    break;
                case OfPeak:
                    k.push_back(c.busbw_fraction.value_or(-1.0));
                    break;
                default:
                    k.push_back(c.bandwidth_gbps.value_or(-1.0));
                    break;
            }
        }
        return text.empty() ? k : rankStrings(text);
    };
}

}  // namespace osc::gui
