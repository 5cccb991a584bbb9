#include "gui/widgets/device_table.h"

#include "analyzer/report/report_format.h"
#include "gui/model/time_ticks.h"
#include "gui/widgets/metric_tables.h"

#include <iterator>

namespace osc::gui {
namespace {

// One unit per column, as the Steps table: neighbouring ranks must not read alike.
QString in(TimeNs ns, const ColumnUnit& unit) { return QString::fromStdString(formatInUnit(ns, unit)); }

QString percent(const std::optional<double>& v) {
    return v ? QString::number(*v * 100.0, 'f', 1) + " %" : QStringLiteral("–");
}

}  // namespace

std::string deviceFindingsText(const DeviceAnalysis& device) {
    std::string text = report::headline(device);
    for (const Finding& f : device.findings) text += "\n• " + report::toString(f.kind) + ": " + f.message;
    if (device.findings.empty()) text += "\nno findings over the whole span";
    return text;
}

void DeviceTableModel::setAnalysis(std::shared_ptr<const Analysis> analysis) {
    beginResetModel();
    analysis_ = std::move(analysis);
    auto words = std::make_shared<std::vector<Words>>();
    std::array<ColumnUnitPicker, ColumnCount> pick;
    if (analysis_) {
        for (const DeviceAnalysis& d : analysis_->devices) {
            const OverlapMetrics& m = d.totals;
            for (const auto& [column, v] : {std::pair{Window, m.window_ns},
                                            {Compute, m.compute_ns},
                                            {Comm, m.comm_ns},
                                            {Overlap, m.overlap_ns},
                                            {Exposed, m.exposed_comm_ns},
                                            {Idle, m.idle_ns}})
                pick[static_cast<size_t>(column)].see(v);
            Words w;
            w.verdict = report::verdict(d.totals);
            if (const auto b = report::deviceBottleneck(d); b.found) w.bottleneck = b.label;
            if (!d.findings.empty()) {
                w.finding =
                    report::toString(d.findings.front().kind) + " " + formatDuration(d.findings.front().exposed_ns);
                if (d.findings.size() > 1) w.finding += " (+" + std::to_string(d.findings.size() - 1) + ")";
            }
            words->push_back(std::move(w));
        }
    }
    for (size_t c = 0; c < units_.size(); ++c) units_[c] = pick[c].durations();
    resetRows(words->size());
    words_ = std::move(words);
    endResetModel();
    endReset();
}

int DeviceTableModel::deviceAt(int viewRow) const {
    return viewRow >= 0 && viewRow < rowCount() ? sourceRow(viewRow) : -1;
}

int DeviceTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant DeviceTableModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
    static const char* kNames[] = {"device",  "steps",           "collectives", "window", "compute",
                                   "comm",    "overlap",         "exposed",     "idle",   "overlap %",
                                   "verdict", "largest finding", "bottleneck"};
    static_assert(std::size(kNames) == ColumnCount);
    if (role == Qt::DisplayRole) return QString::fromUtf8(kNames[section]);
    if (role != Qt::ToolTipRole) return {};
    switch (section) {
        case Window:
            return tr("the device's span: first to last GPU activity");
        case Overlap:
            return tr("communication hidden behind compute");
        case Exposed:
            return tr("communication with no compute under it");
        case OverlapRatio:
            return tr("hidden share of the communication");
        case Bottleneck:
            return tr("the collective position in a step (DDP's bucket) with the most exposed time over all steps");
        case Finding:
            return tr("the analyzer's largest finding over the whole span (select the row for all of them)");
        default:
            return {};
    }
}

QVariant DeviceTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const int row = sourceRow(index.row());
    const DeviceAnalysis& d = analysis_->devices[static_cast<size_t>(row)];
    const Words& w = (*words_)[static_cast<size_t>(row)];
    const OverlapMetrics& m = d.totals;
    if (role == Qt::TextAlignmentRole)
        return index.column() >= Steps && index.column() <= OverlapRatio ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                                                                         : QVariant();
    // The headline gives the bottleneck's exposed time and share, and every finding.
    if (role == Qt::ToolTipRole && (index.column() == Finding || index.column() == Bottleneck))
        return QString::fromStdString(deviceFindingsText(d));
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
        case Device:
            return deviceName(d);
        case Steps:
            return static_cast<qulonglong>(d.steps.size());
        case Collectives:
            return static_cast<qulonglong>(d.collectives.size());
        case Window:
            return in(m.window_ns, units_[Window]);
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
        case OverlapRatio:
            return percent(m.overlap_ratio);
        case Verdict:
            return QString::fromStdString(w.verdict);
        case Bottleneck:
            return w.bottleneck.empty() ? QStringLiteral("–") : QString::fromStdString(w.bottleneck);
        case Finding:
            return QString::fromStdString(w.finding);
    }
    return {};
}

std::function<AsyncSortedTableModel::Keys()> DeviceTableModel::sortKeys(int column) const {
    if (!analysis_ || !words_) return {};
    return [a = analysis_, words = words_, column]() {
        Keys k;
        std::vector<std::string> text;
        for (size_t i = 0; i < a->devices.size(); ++i) {
            const DeviceAnalysis& d = a->devices[i];
            const OverlapMetrics& m = d.totals;
            switch (column) {
                case Device:
                    k.push_back(static_cast<double>(i));
                    break;
                case Steps:
                    k.push_back(static_cast<double>(d.steps.size()));
                    break;
                case Collectives:
                    k.push_back(static_cast<double>(d.collectives.size()));
                    break;
                case Window:
                    k.push_back(static_cast<double>(m.window_ns));
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
                case OverlapRatio:
                    k.push_back(m.overlap_ratio.value_or(-1));
                    break;
                case Verdict:
                    text.push_back((*words)[i].verdict);
                    break;
                case Finding:
                    text.push_back((*words)[i].finding);
                    break;
                default:
                    text.push_back((*words)[i].bottleneck);
                    break;
            }
        }
        return text.empty() ? k : rankStrings(text);
    };
}

}  // namespace osc::gui
