// The Statistics panel: per kernel name or signature, count, total, mean,
// median, min, max and share of GPU time, for the whole capture, one step
// or the selected range; sortable off the GUI thread; a click jumps to the
// longest instance. Computed on a worker (ten million kernels take a second).
#pragma once

#include "analyzer/metrics/analysis.h"
#include "gui/model/column_units.h"
#include "gui/model/kernel_stats.h"
#include "gui/widgets/sorted_table_model.h"

#include <QPointer>
#include <QWidget>

#include <array>
#include <atomic>
#include <memory>

class QComboBox;
class QLabel;
class QTableView;

namespace osc::gui {

class TimelineWidget;

class StatsTableModel : public AsyncSortedTableModel {
    Q_OBJECT
public:
    enum Column { Name, Grid, Block, Count, Total, Mean, Median, Min, Max, Share, ColumnCount };
    explicit StatsTableModel(QObject* parent = nullptr) : AsyncSortedTableModel(parent) {}
    void setRows(std::shared_ptr<const std::vector<KernelStatsRow>> rows);
    const KernelStatsRow& rowAt(int viewRow) const { return (*rows_)[static_cast<size_t>(sourceRow(viewRow))]; }

    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

protected:
    std::function<Keys()> sortKeys(int column) const override;

private:
    std::shared_ptr<const std::vector<KernelStatsRow>> rows_ = std::make_shared<std::vector<KernelStatsRow>>();
    std::array<ColumnUnit, ColumnCount> units_{};  // one per time column (column_units.h)
};

class StatisticsPanel : public QWidget {
    Q_OBJECT
public:
    StatisticsPanel(TimelineWidget* timeline, QWidget* parent = nullptr);
    ~StatisticsPanel() override;
    // A new capture: scopes from its steps, then the whole capture.
    void setCapture(std::shared_ptr<const TimelineModel> model, std::shared_ptr<const Analysis> analysis);
    StatsTableModel* tableModel() const { return table_; }
    // Picks a scope by its text ("whole capture", "selected range", "step: ProfilerStep#3").
    bool setScope(const QString& text);
    void setGrouping(StatsGrouping g);
    bool computing() const { return worker_ != nullptr; }
    void waitForResult();  // tests
    // Jumps to the longest instance of the row shown at `viewRow`.
    void jumpTo(int viewRow);
    QString status() const;

signals:
    void computed();

private:
    void recompute();
    StatsScope currentScope() const;

    TimelineWidget* timeline_;
    std::shared_ptr<const TimelineModel> model_;
    std::shared_ptr<const Analysis> analysis_;
    QComboBox* scopeBox_ = nullptr;
    QComboBox* groupBox_ = nullptr;
    QLabel* status_ = nullptr;
    QTableView* view_ = nullptr;
    StatsTableModel* table_ = nullptr;
    QPointer<QThread> worker_;
    std::shared_ptr<std::atomic<bool>> cancel_;
    uint64_t generation_ = 0;
};

}  // namespace osc::gui
