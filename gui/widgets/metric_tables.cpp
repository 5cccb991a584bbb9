#include "gui/widgets/metric_tables.h"

#include "gui/model/time_ticks.h"

#include <QBrush>
#include <QColor>
#include <QFont>

namespace osc::gui {
namespace {

QString dur(TimeNs ns) { return QString::fromStdString(formatDuration(ns)); }

QString percent(const std::optional<double>& v) {
    return v ? QString::number(*v * 100.0, 'f', 1) + " %" : QStringLiteral("-");
}

QString deviceName(const DeviceAnalysis& d) {
    return (d.rank >= 0 ? QStringLiteral("rank %1").arg(d.rank) : QString::fromStdString(d.host) + ":" + QString::number(d.pid)) +
           QStringLiteral(" · GPU %1").arg(d.device);
}

}  // namespace

int groupForDevice(const TimelineModel& model, const DeviceAnalysis& d) {
    for (size_t g = 0; g < model.groups().size(); ++g) {
        const DeviceGroup& group = model.groups()[g];
        if (group.process != d.processIndex || group.device < 0) continue;
        if (model.deviceOf(static_cast<int>(g))->id == d.device) return static_cast<int>(g);
    }
    return -1;
}

void StepTableModel::setData(std::shared_ptr<const TimelineModel> model, std::shared_ptr<const Analysis> analysis) {
    beginResetModel();
    model_ = std::move(model);
    analysis_ = std::move(analysis);
    rows_.clear();
    if (analysis_) {
        for (size_t d = 0; d < analysis_->devices.size(); ++d) {
            const int group = model_ ? groupForDevice(*model_, analysis_->devices[d]) : -1;
            for (size_t s = 0; s < analysis_->devices[d].steps.size(); ++s) {
                rows_.push_back({static_cast<int>(d), static_cast<int>(s), group});
            }
        }
    }
    endResetModel();
}

int StepTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int StepTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant StepTableModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* kNames[] = {"device", "step", "start", "duration", "compute", "comm", "overlap", "exposed", "overlap %", "verdict"};
    return section >= 0 && section < ColumnCount ? QString::fromLatin1(kNames[section]) : QVariant();
}

QVariant StepTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= static_cast<int>(rows_.size())) return {};
    const Row& r = rows_[static_cast<size_t>(index.row())];
    const DeviceAnalysis& d = analysis_->devices[static_cast<size_t>(r.device)];
    const StepAnalysis& s = d.steps[static_cast<size_t>(r.step)];
    const OverlapMetrics& m = s.metrics;
    if (role == StartRole) return QVariant::fromValue<qint64>(s.start_ns);
    if (role == EndRole) return QVariant::fromValue<qint64>(s.end_ns);
    if (role == GroupRole) return r.group;
    if (role == Qt::TextAlignmentRole) {
        return index.column() >= Start && index.column() <= OverlapRatio ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    }
    const bool display = role == Qt::DisplayRole;
    if (!display && role != SortRole) return {};
    switch (index.column()) {
        case Device: return deviceName(d);
        case Step: return QString::fromStdString(s.name);
        case Start: return display ? QVariant(dur(s.start_ns)) : QVariant::fromValue<qint64>(s.start_ns);
        case Duration: return display ? QVariant(dur(s.end_ns - s.start_ns)) : QVariant::fromValue<qint64>(s.end_ns - s.start_ns);
        case Compute: return display ? QVariant(dur(m.compute_ns)) : QVariant::fromValue<qint64>(m.compute_ns);
        case Comm: return display ? QVariant(dur(m.comm_ns)) : QVariant::fromValue<qint64>(m.comm_ns);
        case Overlap: return display ? QVariant(dur(m.overlap_ns)) : QVariant::fromValue<qint64>(m.overlap_ns);
        case Exposed: return display ? QVariant(dur(m.exposed_comm_ns)) : QVariant::fromValue<qint64>(m.exposed_comm_ns);
        case OverlapRatio: return display ? QVariant(percent(m.overlap_ratio)) : QVariant(m.overlap_ratio.value_or(-1));
        case Verdict: return s.bottleneck.communicationBound ? QStringLiteral("comm-bound") : QStringLiteral("compute-bound");
    }
    return {};
}

void CollectiveTableModel::setData(std::shared_ptr<const TimelineModel> model, std::shared_ptr<const Analysis> analysis) {
    beginResetModel();
    model_ = std::move(model);
    analysis_ = std::move(analysis);
    rows_.clear();
    if (analysis_) {
        for (size_t d = 0; d < analysis_->devices.size(); ++d) {
            const DeviceAnalysis& dev = analysis_->devices[d];
            const int group = model_ ? groupForDevice(*model_, dev) : -1;
            for (size_t c = 0; c < dev.collectives.size(); ++c) {
                bool bottleneck = false;
                for (const StepAnalysis& s : dev.steps) bottleneck |= s.bottleneck.collective == static_cast<int>(c);
                rows_.push_back({static_cast<int>(d), static_cast<int>(c), group, bottleneck});
            }
        }
    }
    endResetModel();
}

int CollectiveTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int CollectiveTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

bool CollectiveTableModel::isBottleneck(int row) const {
    return row >= 0 && row < static_cast<int>(rows_.size()) && rows_[static_cast<size_t>(row)].bottleneck;
}

QVariant CollectiveTableModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* kNames[] = {"device", "collective", "step", "start", "duration", "overlapped", "exposed", "bytes", "bandwidth"};
    return section >= 0 && section < ColumnCount ? QString::fromLatin1(kNames[section]) : QVariant();
}

QVariant CollectiveTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= static_cast<int>(rows_.size())) return {};
    const Row& r = rows_[static_cast<size_t>(index.row())];
    const DeviceAnalysis& d = analysis_->devices[static_cast<size_t>(r.device)];
    const CollectiveInstance& c = d.collectives[static_cast<size_t>(r.collective)];
    if (role == StartRole) return QVariant::fromValue<qint64>(c.start_ns);
    if (role == EndRole) return QVariant::fromValue<qint64>(c.end_ns);
    if (role == GroupRole) return r.group;
    if (role == Qt::FontRole && r.bottleneck) {
        QFont f;
        f.setBold(true);
        return f;
    }
    if (role == Qt::BackgroundRole && r.bottleneck) return QBrush(QColor(0xFF, 0xE0, 0xD6));
    if (role == Qt::ToolTipRole && r.bottleneck) return tr("bottleneck bucket: the most exposed communication in its step");
    const bool display = role == Qt::DisplayRole;
    if (!display && role != SortRole) return {};
    switch (index.column()) {
        case Device: return deviceName(d);
        case Name: {
            const QString name = QString::fromStdString(c.collective.empty() ? c.name : c.collective);
            return display && r.bottleneck ? QStringLiteral("⚑ ") + name : name;
        }
        case Step: return c.step;
        case Start: return display ? QVariant(dur(c.start_ns)) : QVariant::fromValue<qint64>(c.start_ns);
        case Duration: return display ? QVariant(dur(c.duration_ns)) : QVariant::fromValue<qint64>(c.duration_ns);
        case Overlapped: return display ? QVariant(dur(c.overlapped_ns)) : QVariant::fromValue<qint64>(c.overlapped_ns);
        case Exposed: return display ? QVariant(dur(c.exposed_ns)) : QVariant::fromValue<qint64>(c.exposed_ns);
        case Bytes: return c.bytes ? QVariant::fromValue<qulonglong>(*c.bytes) : QVariant(display ? QStringLiteral("-") : QVariant());
        case Bandwidth:
            return c.bandwidth_gbps ? (display ? QVariant(QString::number(*c.bandwidth_gbps, 'f', 1) + " GB/s") : QVariant(*c.bandwidth_gbps))
                                    : QVariant(display ? QStringLiteral("-") : QVariant());
    }
    return {};
}

}  // namespace osc::gui
