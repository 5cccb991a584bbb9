// The Selection panel: docs/design.md section 4 metrics of the dragged range, one
// column per device and, with several devices, before them a column that
// says it is their sum (nanoseconds of several GPUs added up, ratios from the sums).
//
// A table model, not a QTableWidget: a drag over 1,024 ranks refreshes it on
// every mouse move, and a widget item per cell with columns resized to their
// contents froze the window for seconds (issue 40). Cells are formatted when
// the view asks for them, which is only for the columns on screen.
#pragma once

#include "gui/model/range_metrics.h"
#include "gui/model/time_scale.h"
#include "gui/model/timeline_model.h"

#include <QAbstractTableModel>
#include <QStringList>
#include <QWidget>

#include <optional>
#include <vector>

class QLabel;
class QTableView;

namespace osc::gui {

class SelectionTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    static constexpr int kMetricRows = 9;
    explicit SelectionTableModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    // `labels` name the devices of `metrics.perDevice`, in its order.
    void setMetrics(SelectionMetrics metrics, QStringList labels);
    void clear() { setMetrics({}, {}); }
    int devices() const { return static_cast<int>(metrics_.perDevice.size()); }
    // A column for the sum comes first when there are several devices.
    bool hasSum() const { return devices() > 1; }
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;
    // The metrics of a column (the sum, or one device).
    const OverlapMetrics& column(int c) const;

private:
    SelectionMetrics metrics_;
    QStringList labels_;
};

class SelectionPanel : public QWidget {
    Q_OBJECT
public:
    // Up to this many columns are sized to their contents; more get one fixed width.
    static constexpr int kFittedColumns = 64;
    explicit SelectionPanel(QWidget* parent = nullptr);
    void showRange(const TimelineModel* model, std::optional<ViewRange> range, const std::vector<int>& groups);
    // No table, only `why` (no timeline to select on).
    void showMessage(const QString& why);
    // Everything shown, as plain text (header, then one line per metric).
    QString text() const;
    QTableView* table() const { return table_; }
    const SelectionTableModel* model() const { return model_; }

private:
    // Device labels of the last selection: a drag keeps its devices while the range moves.
    QStringList labelsOf(const TimelineModel& model, const SelectionMetrics& sel);
    void fitColumns();

    QLabel* header_ = nullptr;
    QTableView* table_ = nullptr;
    SelectionTableModel* model_ = nullptr;
    const TimelineModel* labelledModel_ = nullptr;
    std::vector<int> labelledGroups_;
    QStringList labels_;
};

// "rank 3 · GPU 0" (or "host:pid · GPU 0") for a device group.
std::string shortGroupLabel(const TimelineModel& model, int group);

}  // namespace osc::gui
