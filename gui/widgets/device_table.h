// The per-device table of a job shown without a timeline (a saved report or
// partial results): each device's totals over its span, its verdict,
// bottleneck and largest finding, as `overlapscope report` prints them.
// Sorted off the GUI thread like the other panel tables: a merged job can
// have thousands of devices.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "gui/model/column_units.h"
#include "gui/widgets/sorted_table_model.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace osc::gui {

class DeviceTableModel : public AsyncSortedTableModel {
    Q_OBJECT
public:
    enum Column {
        Device,
        Steps,
        Collectives,
        Window,
        Compute,
        Comm,
        Overlap,
        Exposed,
        Idle,
        OverlapRatio,
        Verdict,
        Finding,
        Bottleneck,
        ColumnCount
    };
    explicit DeviceTableModel(QObject* parent = nullptr) : AsyncSortedTableModel(parent) {}
    void setAnalysis(std::shared_ptr<const Analysis> analysis);
    // Index into Analysis::devices of the row shown at `viewRow`, or -1.
    int deviceAt(int viewRow) const;

    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

protected:
    std::function<Keys()> sortKeys(int column) const override;

private:
    // Words computed once per device: the bottleneck walks every collective.
    struct Words {
        std::string verdict, bottleneck, finding;
    };
    std::shared_ptr<const Analysis> analysis_;
    std::shared_ptr<const std::vector<Words>> words_;
    std::array<ColumnUnit, ColumnCount> units_{};  // one per time column (column_units.h)
};

// A device's headline and every finding of it, one per line, in the report's
// words (the findings view under the device table).
std::string deviceFindingsText(const DeviceAnalysis& device);

}  // namespace osc::gui
