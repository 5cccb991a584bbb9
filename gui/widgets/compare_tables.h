// The Steps and Collectives panels when two runs are compared (issue 30
// item 1): each row one step (or collective) of base run A and candidate run
// B, both values side by side and the change. Pairing and changes come from
// RunComparison (gui/model/run_compare.h); these models only lay them out,
// colour the changes (worse in vermilion, better in green) and sort off the
// GUI thread like the single-run tables.
#pragma once

#include "gui/model/column_units.h"
#include "gui/model/run_compare.h"
#include "gui/model/timeline_model.h"
#include "gui/widgets/sorted_table_model.h"

#include <array>
#include <memory>

namespace osc::gui {

// What both compare models show: the two analyses, their comparison and the
// base's timeline (rows of the base jump there, as in the single-run tables).
struct ComparedRuns {
    std::shared_ptr<const TimelineModel> baseModel;  // null without a timeline
    std::shared_ptr<const Analysis> base, candidate;
    std::shared_ptr<const RunComparison> comparison;
};

class StepCompareModel : public AsyncSortedTableModel {
    Q_OBJECT
public:
    // Per metric three columns: A, B and the change B − A.
    enum Column {
        Device,
        Step,
        TimeA,
        TimeB,
        TimeChange,
        ExposedA,
        ExposedB,
        ExposedChange,
        OverlapA,
        OverlapB,
        OverlapChange,
        ComputeA,
        ComputeB,
        ComputeChange,
        CommA,
        CommB,
        CommChange,
        ColumnCount
    };
    explicit StepCompareModel(QObject* parent = nullptr) : AsyncSortedTableModel(parent) {}
    void setData(ComparedRuns runs);

    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

protected:
    std::function<Keys()> sortKeys(int column) const override;

private:
    ComparedRuns runs_;
    std::array<ColumnUnit, ColumnCount> units_{};  // per time column (column_units.h)
};

class CollectiveCompareModel : public AsyncSortedTableModel {
    Q_OBJECT
public:
    enum Column {
        Device,
        Step,
        Name,
        Group,   // the ranks that ran its communicator
        Bucket,  // k-th of its type, group and size in the step: with them, what pairs it
        Paired,  // both runs, or which one alone
        DurationA,
        DurationB,
        DurationChange,
        ExposedA,
        ExposedB,
        ExposedChange,
        BytesA,
        BytesB,
        ColumnCount
    };
    explicit CollectiveCompareModel(QObject* parent = nullptr) : AsyncSortedTableModel(parent) {}
    void setData(ComparedRuns runs);

    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

protected:
    std::function<Keys()> sortKeys(int column) const override;

private:
    ComparedRuns runs_;
    std::array<ColumnUnit, ColumnCount> units_{};  // per time column
};

}  // namespace osc::gui
