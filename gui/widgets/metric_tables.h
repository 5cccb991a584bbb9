// Table models for the panels: per-step metrics and per-collective (bucket)
// overlap, read from osc::Analysis. Each row knows its time range and device
// group, so a click can move the timeline there.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "gui/model/timeline_model.h"

#include <QAbstractTableModel>

#include <memory>

namespace osc::gui {

// Custom roles shared by both models.
enum MetricRoles {
    StartRole = Qt::UserRole + 1,  // qint64 ns
    EndRole,                       // qint64 ns
    GroupRole,                     // int: TimelineModel group, -1 if unknown
    SortRole,                      // numeric value for sorting
};

// The timeline group showing DeviceAnalysis `d`, or -1.
int groupForDevice(const TimelineModel& model, const DeviceAnalysis& d);

class StepTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Device, Step, Start, Duration, Compute, Comm, Overlap, Exposed, OverlapRatio, Verdict, ColumnCount };
    explicit StepTableModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    void setData(std::shared_ptr<const TimelineModel> model, std::shared_ptr<const Analysis> analysis);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

private:
    struct Row {
        int device, step, group;
    };
    std::shared_ptr<const TimelineModel> model_;
    std::shared_ptr<const Analysis> analysis_;
    std::vector<Row> rows_;
};

class CollectiveTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Device, Name, Step, Start, Duration, Overlapped, Exposed, Bytes, Bandwidth, ColumnCount };
    explicit CollectiveTableModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    void setData(std::shared_ptr<const TimelineModel> model, std::shared_ptr<const Analysis> analysis);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;
    // Whether a row is the bottleneck bucket of its step.
    bool isBottleneck(int row) const;

private:
    struct Row {
        int device, collective, group;
        bool bottleneck;
    };
    std::shared_ptr<const TimelineModel> model_;
    std::shared_ptr<const Analysis> analysis_;
    std::vector<Row> rows_;
};

}  // namespace osc::gui
