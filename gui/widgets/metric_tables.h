// Table models for the panels: per-step metrics and per-collective (bucket)
// overlap, read from osc::Analysis. Each row knows its time range, device
// group and event, so a click can move the timeline there and show the event
// in Details. Both sort off the GUI thread (AsyncSortedTableModel).
#pragma once

#include "analyzer/metrics/analysis.h"
#include "gui/model/column_units.h"
#include "gui/model/timeline_model.h"
#include "gui/widgets/sorted_table_model.h"

#include <array>
#include <memory>

namespace osc::gui {

// Custom roles shared by the panel models.
enum MetricRoles {
    StartRole = Qt::UserRole + 1,  // qint64 ns
    EndRole,                       // qint64 ns
    GroupRole,                     // int: TimelineModel group, -1 if unknown
    EventRole,                     // QVariant of EventRef packed as (lane, row, index), invalid if none
};

// The timeline group showing DeviceAnalysis `d`, or -1.
int groupForDevice(const TimelineModel& model, const DeviceAnalysis& d);
// "rank 3 · GPU 0", or "host:pid · GPU 0" without a rank.
QString deviceName(const DeviceAnalysis& d);

class StepTableModel : public AsyncSortedTableModel {
    Q_OBJECT
public:
    enum Column {
        Device,
        Step,
        Start,
        Duration,
        Compute,
        Comm,
        Overlap,
        Exposed,
        Idle,
        IdleShare,
        OverlapRatio,
        Bubble,             // pipeline bubble share of the step (theory in brackets), docs/metrics.md 7e
        AllToAllImbalance,  // the step's all-to-all imbalance over ranks, 7f
        Verdict,
        Finding,
        ColumnCount
    };
    explicit StepTableModel(QObject* parent = nullptr) : AsyncSortedTableModel(parent) {}
    void setData(std::shared_ptr<const TimelineModel> model, std::shared_ptr<const Analysis> analysis);

    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

    struct Row {
        int device, step, group;
        int alltoall;  // into Analysis::alltoall, -1 when the step ran none
    };
    // Whether any step is a pipeline step / ran all-to-all: the window shows
    // those columns only then.
    bool hasPipeline() const { return hasPipeline_; }
    bool hasAllToAll() const { return hasAllToAll_; }

protected:
    std::function<Keys()> sortKeys(int column) const override;

private:
    std::shared_ptr<const TimelineModel> model_;
    std::shared_ptr<const Analysis> analysis_;
    std::shared_ptr<const std::vector<Row>> rows_;
    bool hasPipeline_ = false, hasAllToAll_ = false;
    std::array<ColumnUnit, ColumnCount> units_{};  // one per time column (column_units.h)
};

class CollectiveTableModel : public AsyncSortedTableModel {
    Q_OBJECT
public:
    enum Column {
        Device,
        Name,
        Step,
        Start,
        Duration,
        Overlapped,
        Exposed,
        Bytes,
        Bandwidth,
        BusBandwidth,  // docs/design.md 4d: over the transfer time, nccl-tests' factor
        OfPeak,        // that against the link's peak
        ColumnCount
    };
    explicit CollectiveTableModel(QObject* parent = nullptr) : AsyncSortedTableModel(parent) {}
    void setData(std::shared_ptr<const TimelineModel> model, std::shared_ptr<const Analysis> analysis);

    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;
    // Whether the row shown at `row` is the bottleneck bucket of its step.
    bool isBottleneck(int row) const;

    struct Row {
        int device, collective, group;
        bool bottleneck;
    };

protected:
    std::function<Keys()> sortKeys(int column) const override;

private:
    // How the bus bandwidth of `c` was measured, and against which link.
    QVariant busBandwidthTip(const DeviceAnalysis& d, const CollectiveInstance& c) const;

    std::shared_ptr<const TimelineModel> model_;
    std::shared_ptr<const Analysis> analysis_;
    std::shared_ptr<const std::vector<Row>> rows_;
    std::array<ColumnUnit, ColumnCount> units_{};
};

// EventRef through a QVariant (EventRole).
QVariant packEvent(EventRef ref);
EventRef unpackEvent(const QVariant& v);

}  // namespace osc::gui
