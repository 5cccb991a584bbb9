// The Selection panel: docs/design.md section 4 metrics of the dragged range, one
// column per device and, with several devices, before them a column that
// says it is their sum (nanoseconds of several GPUs added up, ratios from the sums).
#pragma once

#include "gui/model/time_scale.h"
#include "gui/model/timeline_model.h"

#include <QWidget>

#include <optional>
#include <vector>

class QLabel;
class QTableWidget;

namespace osc::gui {

class SelectionPanel : public QWidget {
    Q_OBJECT
public:
    explicit SelectionPanel(QWidget* parent = nullptr);
    void showRange(const TimelineModel* model, std::optional<ViewRange> range, const std::vector<int>& groups);
    // No table, only `why` (no timeline to select on).
    void showMessage(const QString& why);
    // Everything shown, as plain text (header, then one line per metric).
    QString text() const;

private:
    QLabel* header_ = nullptr;
    QTableWidget* table_ = nullptr;
};

// "rank 3 · GPU 0" (or "host:pid · GPU 0") for a device group.
std::string shortGroupLabel(const TimelineModel& model, int group);

}  // namespace osc::gui
