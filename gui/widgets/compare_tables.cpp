#include "gui/widgets/compare_tables.h"

#include "gui/model/time_ticks.h"
#include "gui/widgets/metric_tables.h"
#include "gui/widgets/qt_values.h"

#include <QBrush>
#include <QColor>

#include <iterator>

namespace osc::gui {
namespace {

// Text colours for a change: darker shades of the overlap lane's exposed
// (vermilion) and hidden (green), so "worse" and "better" read as they do
// on the timeline while staying legible on white and the alternate rows.
const QColor kWorse(0xB0, 0x36, 0x18);
const QColor kBetter(0x1B, 0x7A, 0x43);

// The step metrics, three columns each, by their `overlapscope diff` names.
struct StepMetric {
    const char* diffName;
    const char* title;
    int worse;  // +1: higher is worse, -1: lower is worse, 0: neither
    bool ratio;
};
constexpr StepMetric kStepMetrics[] = {{"window_ns", "step time", +1, false},
                                       {"exposed_comm_ns", "exposed", +1, false},
                                       {"overlap_ratio", "overlap %", -1, true},
                                       {"compute_ns", "compute", 0, false},
                                       {"comm_ns", "comm", 0, false}};

QVariant changeColour(std::optional<double> change, int worse) {
    if (!change || *change == 0 || worse == 0) return {};
    return QBrush((*change > 0) == (worse > 0) ? kWorse : kBetter);
}

QString dash() { return QStringLiteral("–"); }

}  // namespace

// ---- steps ----

void StepCompareModel::setData(ComparedRuns runs) {
    beginResetModel();
    runs_ = std::move(runs);
    // A and B of a metric share a unit; the change has its own, to the
    // microsecond (a change of a few ns would give the values six decimals).
    std::array<ColumnUnitPicker, std::size(kStepMetrics)> values, changes;
    size_t rows = 0;
    if (runs_.comparison) {
        rows = runs_.comparison->steps.size();
        for (const StepPair& p : runs_.comparison->steps)
            for (size_t m = 0; m < values.size(); ++m) {
                const report::MetricDelta* d =
                    findMetric(runs_.comparison->diff.rows[p.diffRow], kStepMetrics[m].diffName);
                if (!d || kStepMetrics[m].ratio) continue;
                for (const auto& v : {d->base, d->candidate})
                    if (v) values[m].see(static_cast<TimeNs>(*v));
                if (d->change) changes[m].see(static_cast<TimeNs>(*d->change));
            }
    }
    for (size_t m = 0; m < values.size(); ++m) {
        const size_t first = TimeA + 3 * m;
        units_[first] = units_[first + 1] = values[m].durations();
        units_[first + 2] = changes[m].timestamps();
    }
    resetRows(rows);
    endResetModel();
    endReset();
}

int StepCompareModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant StepCompareModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
    if (section < TimeA) {
        if (role == Qt::DisplayRole) return section == Device ? tr("device") : tr("step (A / B)");
        return {};
    }
    const StepMetric& m = kStepMetrics[(section - TimeA) / 3];
    const int which = (section - TimeA) % 3;
    if (role == Qt::DisplayRole)
        return which == 2 ? QStringLiteral("Δ ") + QString::fromLatin1(m.title)
                          : QString::fromLatin1(m.title) + (which == 0 ? " A" : " B");
    if (role == Qt::ToolTipRole)
        return which == 0   ? tr("A: the base run")
               : which == 1 ? tr("B: the candidate run")
                            : tr("B − A, and its share of A; vermilion: worse, green: better");
    return {};
}

QVariant StepCompareModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || !runs_.comparison) return {};
    const StepPair& p = runs_.comparison->steps[static_cast<size_t>(sourceRow(index.row()))];
    const report::DiffRow& row = runs_.comparison->diff.rows[p.diffRow];
    const DeviceAnalysis& da = runs_.base->devices[static_cast<size_t>(p.baseDevice)];
    const DeviceAnalysis& db = runs_.candidate->devices[static_cast<size_t>(p.candidateDevice)];
    const StepAnalysis& sa = da.steps[static_cast<size_t>(p.step)];
    const StepAnalysis& sb = db.steps[static_cast<size_t>(p.step)];
    const int group = runs_.baseModel ? runs_.baseModel->groupOf(da) : -1;
    const int column = index.column();
    const StepMetric* metric = column >= TimeA ? &kStepMetrics[(column - TimeA) / 3] : nullptr;
    const int which = column >= TimeA ? (column - TimeA) % 3 : -1;
    const report::MetricDelta* d = metric ? findMetric(row, metric->diffName) : nullptr;
    switch (role) {
        case StartRole:
            return nsValue(sa.start_ns);
        case EndRole:
            return nsValue(sa.end_ns);
        case GroupRole:
            return group;
        case EventRole:
            return runs_.baseModel && group >= 0 ? packEvent(runs_.baseModel->findStep(group, sa.start_ns))
                                                 : QVariant();
        case Qt::TextAlignmentRole:
            return column >= TimeA ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
        case Qt::ForegroundRole:
            return which == 2 && d ? changeColour(d->change, metric->worse) : QVariant();
        case Qt::ToolTipRole:
            return column == Step && sa.name != sb.name
                       ? QVariant(tr("A ran %1, B ran %2: paired by position (step %3 of each)")
                                      .arg(QString::fromStdString(sa.name), QString::fromStdString(sb.name))
                                      .arg(p.step))
                       : QVariant();
        case Qt::DisplayRole:
            break;
        default:
            return {};
    }
    if (column == Device) return deviceName(da);
    if (column == Step)
        return sa.name == sb.name ? QString::fromStdString(sa.name) : QString::fromStdString(sa.name + " / " + sb.name);
    if (!d) return dash();
    const std::optional<double> v = which == 0 ? d->base : which == 1 ? d->candidate : d->change;
    if (!v) return dash();
    if (metric->ratio) {
        if (which == 2) return QString::fromStdString(pointsText(*v));
        return QString::number(*v * 100.0, 'f', 1) + " %";
    }
    const ColumnUnit& unit = units_[static_cast<size_t>(column)];
    if (which == 2) return QString::fromStdString(changeText(static_cast<TimeNs>(*v), unit, d->relativePct));
    return QString::fromStdString(formatInUnit(static_cast<TimeNs>(*v), unit));
}

std::function<AsyncSortedTableModel::Keys()> StepCompareModel::sortKeys(int column) const {
    if (!runs_.comparison) return {};
    return [c = runs_.comparison, column]() {
        Keys k;
        k.reserve(c->steps.size());
        for (const StepPair& p : c->steps) {
            if (column == Device || column == Step) {
                // Device order, then step order, as the rows start.
                k.push_back(column == Device ? p.baseDevice * 1e9 + p.step : p.step * 1e6 + p.baseDevice);
                continue;
            }
            const StepMetric& m = kStepMetrics[(column - TimeA) / 3];
            const int which = (column - TimeA) % 3;
            const report::MetricDelta* d = findMetric(c->diff.rows[p.diffRow], m.diffName);
            const std::optional<double> v = !d           ? std::nullopt
                                            : which == 0 ? d->base
                                            : which == 1 ? d->candidate
                                                         : d->change;
            k.push_back(v.value_or(-1e300));
        }
        return k;
    };
}

// ---- collectives ----

void CollectiveCompareModel::setData(ComparedRuns runs) {
    beginResetModel();
    runs_ = std::move(runs);
    // As in the Steps table: A and B in one unit, the change to the microsecond.
    std::array<ColumnUnitPicker, 4> pick;  // duration, exposed, their changes
    size_t rows = 0;
    if (runs_.comparison) {
        rows = runs_.comparison->collectives.size();
        for (const CollectivePair& p : runs_.comparison->collectives) {
            for (const auto& [analysis, device, collective] :
                 {std::tuple{runs_.base.get(), p.baseDevice, p.baseCollective},
                  std::tuple{runs_.candidate.get(), p.candidateDevice, p.candidateCollective}}) {
                if (collective < 0) continue;
                const CollectiveInstance& c =
                    analysis->devices[static_cast<size_t>(device)].collectives[static_cast<size_t>(collective)];
                pick[0].see(c.duration_ns);
                pick[1].see(c.exposed_ns);
            }
            if (p.durationChange) pick[2].see(*p.durationChange);
            if (p.exposedChange) pick[3].see(*p.exposedChange);
        }
    }
    units_[DurationA] = units_[DurationB] = pick[0].durations();
    units_[ExposedA] = units_[ExposedB] = pick[1].durations();
    units_[DurationChange] = pick[2].timestamps();
    units_[ExposedChange] = pick[3].timestamps();
    resetRows(rows);
    endResetModel();
    endReset();
}

int CollectiveCompareModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant CollectiveCompareModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
    static const char* kNames[] = {
        "device",     "step",       "collective (A / B)", "group",     "bucket",    "in",      "duration A",
        "duration B", "Δ duration", "exposed A",          "exposed B", "Δ exposed", "bytes A", "bytes B"};
    static_assert(std::size(kNames) == ColumnCount);
    if (role == Qt::DisplayRole) return QString::fromUtf8(kNames[section]);
    if (role == Qt::ToolTipRole && section == Group)
        return tr("the ranks that ran the collective's communicator (its hash is new in every run)");
    if (role == Qt::ToolTipRole && section == Bucket)
        return tr(
            "the k-th collective of this type, group and size in the step (from 0): collectives pair by "
            "type, group, size and bucket, not by their place in the step");
    if (role == Qt::ToolTipRole && section == Paired)
        return tr("A and B: paired; A or B: only that run had this collective in the step");
    if (role == Qt::ToolTipRole && (section == DurationChange || section == ExposedChange))
        return tr("B − A, and its share of A; vermilion: worse, green: better");
    return {};
}

QVariant CollectiveCompareModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || !runs_.comparison) return {};
    const CollectivePair& p = runs_.comparison->collectives[static_cast<size_t>(sourceRow(index.row()))];
    const DeviceAnalysis& da = runs_.base->devices[static_cast<size_t>(p.baseDevice)];
    const DeviceAnalysis& db = runs_.candidate->devices[static_cast<size_t>(p.candidateDevice)];
    const CollectiveInstance* ca =
        p.baseCollective >= 0 ? &da.collectives[static_cast<size_t>(p.baseCollective)] : nullptr;
    const CollectiveInstance* cb =
        p.candidateCollective >= 0 ? &db.collectives[static_cast<size_t>(p.candidateCollective)] : nullptr;
    const int group = runs_.baseModel ? runs_.baseModel->groupOf(da) : -1;
    const int column = index.column();
    const auto name = [](const CollectiveInstance* c) {
        return c ? c->collectiveOrName().str() : std::string("(none)");
    };
    switch (role) {
        case StartRole:
            return ca ? nsValue(ca->start_ns) : QVariant();
        case EndRole:
            return ca ? nsValue(ca->end_ns) : QVariant();
        case GroupRole:
            return group;
        case EventRole:
            if (!ca || !runs_.baseModel || group < 0) return {};
            if (ca->kernelIndex != static_cast<size_t>(-1))
                return packEvent(runs_.baseModel->findKernel(group, static_cast<uint32_t>(ca->kernelIndex)));
            return packEvent(runs_.baseModel->findOnStream(group, ca->stream, ca->start_ns, EventSource::Copy));
        case Qt::TextAlignmentRole:
            return column >= DurationA ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
        case Qt::ForegroundRole:
            if (column == DurationChange) return changeColour(p.durationChange, +1);
            if (column == ExposedChange) return changeColour(p.exposedChange, +1);
            return {};
        case Qt::ToolTipRole:
            if (!ca || !cb)
                return tr("only in %1: the other run has no %2 of this group, size and bucket in this step")
                    .arg(ca ? "A" : "B", QString::fromStdString(name(ca ? ca : cb)));
            return {};
        case Qt::DisplayRole:
            break;
        default:
            return {};
    }
    const auto time = [this](const CollectiveInstance* c, TimeNs CollectiveInstance::*f, int unit) {
        return c ? QString::fromStdString(formatInUnit(c->*f, units_[unit])) : dash();
    };
    const auto change = [this](const std::optional<TimeNs>& v, const CollectiveInstance* base, int unit) {
        if (!v) return dash();
        const TimeNs whole = base ? (unit == DurationChange ? base->duration_ns : base->exposed_ns) : 0;
        const std::optional<double> pct =
            whole > 0 ? std::optional<double>(static_cast<double>(*v) / static_cast<double>(whole) * 100.0)
                      : std::nullopt;
        return QString::fromStdString(changeText(*v, units_[unit], pct));
    };
    const auto bytes = [](const CollectiveInstance* c) {
        return c && c->bytes ? QString::fromStdString(formatBytes(*c->bytes)) : dash();
    };
    switch (column) {
        case Device:
            return deviceName(da);
        case Step:
            return p.step >= 0 ? QString::fromStdString(da.steps[static_cast<size_t>(p.step)].name)
                               : tr("outside steps");
        case Name:
            return name(ca) == name(cb) || !ca || !cb ? QString::fromStdString(ca ? name(ca) : name(cb))
                                                      : QString::fromStdString(name(ca) + " / " + name(cb));
        case Group:
            return p.group.empty() ? dash() : QString::fromStdString(p.group);
        case Bucket:
            return p.bucket;
        case Paired:
            return ca && cb ? tr("A and B") : ca ? tr("A only") : tr("B only");
        case DurationA:
            return time(ca, &CollectiveInstance::duration_ns, DurationA);
        case DurationB:
            return time(cb, &CollectiveInstance::duration_ns, DurationB);
        case DurationChange:
            return change(p.durationChange, ca, DurationChange);
        case ExposedA:
            return time(ca, &CollectiveInstance::exposed_ns, ExposedA);
        case ExposedB:
            return time(cb, &CollectiveInstance::exposed_ns, ExposedB);
        case ExposedChange:
            return change(p.exposedChange, ca, ExposedChange);
        case BytesA:
            return bytes(ca);
        case BytesB:
            return bytes(cb);
    }
    return {};
}

std::function<AsyncSortedTableModel::Keys()> CollectiveCompareModel::sortKeys(int column) const {
    if (!runs_.comparison) return {};
    return [r = runs_, column]() {
        Keys k;
        k.reserve(r.comparison->collectives.size());
        std::vector<std::string> text;
        for (const CollectivePair& p : r.comparison->collectives) {
            const auto at = [&](const Analysis& a, int device, int collective) -> const CollectiveInstance* {
                return collective >= 0
                           ? &a.devices[static_cast<size_t>(device)].collectives[static_cast<size_t>(collective)]
                           : nullptr;
            };
            const CollectiveInstance* ca = at(*r.base, p.baseDevice, p.baseCollective);
            const CollectiveInstance* cb = at(*r.candidate, p.candidateDevice, p.candidateCollective);
            const auto val = [](const CollectiveInstance* c, TimeNs CollectiveInstance::*f) {
                return c ? static_cast<double>(c->*f) : -1e300;
            };
            const auto opt = [](const std::optional<TimeNs>& v) { return v ? static_cast<double>(*v) : -1e300; };
            const auto byteKey = [](const CollectiveInstance* c) {
                return c && c->bytes ? static_cast<double>(*c->bytes) : -1.0;
            };
            switch (column) {
                case Device:
                    k.push_back(static_cast<double>(k.size()));  // the rows' own order: device, step, time
                    break;
                case Step:
                    k.push_back((p.step + 1) * 1e9 + p.baseDevice * 1e6 + static_cast<double>(k.size()));
                    break;
                case Bucket:
                    k.push_back(p.bucket);
                    break;
                case Paired:
                    k.push_back(ca && cb ? 0 : ca ? 1 : 2);
                    break;
                case Name:
                case Group: {
                    const CollectiveInstance* c = ca ? ca : cb;
                    text.push_back(column == Group ? p.group : c->collectiveOrName().str());
                    break;
                }
                case DurationA:
                    k.push_back(val(ca, &CollectiveInstance::duration_ns));
                    break;
                case DurationB:
                    k.push_back(val(cb, &CollectiveInstance::duration_ns));
                    break;
                case DurationChange:
                    k.push_back(opt(p.durationChange));
                    break;
                case ExposedA:
                    k.push_back(val(ca, &CollectiveInstance::exposed_ns));
                    break;
                case ExposedB:
                    k.push_back(val(cb, &CollectiveInstance::exposed_ns));
                    break;
                case ExposedChange:
                    k.push_back(opt(p.exposedChange));
                    break;
                case BytesA:
                    k.push_back(byteKey(ca));
                    break;
                default:
                    k.push_back(byteKey(cb));
                    break;
            }
        }
        return text.empty() ? k : rankStrings(text);
    };
}

}  // namespace osc::gui
