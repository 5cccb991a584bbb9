// The Ranks panel (issue 30 item 3a): one row per collective matched across
// ranks (gui/model/rank_collectives.h), sortable; a click frames the
// collective on every rank in the timeline and selects it there. Rows name
// their communicator (process group); the panel filters by one and groups
// the rows by it (issue 40 part 4).
#pragma once

#include "gui/model/rank_collectives.h"
#include "gui/model/timeline_model.h"
#include "gui/widgets/sorted_table_model.h"

#include <QWidget>

#include <memory>

class QCheckBox;
class QComboBox;
class QMainWindow;
class QMenu;
class QStackedWidget;
class QTableView;

namespace osc::gui {

class TimelineWidget;

class RankCollectiveModel : public AsyncSortedTableModel {
    Q_OBJECT
public:
    enum Column {
        Step,
        Collective,
        Group,
        Sequence,
        Bytes,
        Ranks,
        Skew,
        LastRank,
        Waiting,
        WaitingShare,
        Transfer,
        BusBandwidth,
        Start,
        ColumnCount
    };
    explicit RankCollectiveModel(QObject* parent = nullptr) : AsyncSortedTableModel(parent) {}
    void setData(std::shared_ptr<const Analysis> analysis);
    // Only the rows of one communicator (an index into communicators()), or all (-1).
    void setCommunicatorFilter(int communicator);
    int communicatorFilter() const { return filter_; }
    const std::vector<RankCommunicator>& communicators() const { return communicators_; }
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;
    // The row shown at view row `row`.
    const RankCollectiveRow& row(int viewRow) const { return (*rows_)[static_cast<size_t>(sourceRow(viewRow))]; }

protected:
    std::function<Keys()> sortKeys(int column) const override;

private:
    void showRows();

    std::shared_ptr<const std::vector<RankCollectiveRow>> all_ = std::make_shared<std::vector<RankCollectiveRow>>();
    std::shared_ptr<const std::vector<RankCollectiveRow>> rows_ = all_;  // all_, or the filter's part of it
    std::vector<RankCommunicator> communicators_;
    int filter_ = -1;
};

class RanksPanel : public QWidget {
    Q_OBJECT
public:
    RanksPanel(TimelineWidget* timeline, QWidget* parent = nullptr);
    void setData(std::shared_ptr<const TimelineModel> model, std::shared_ptr<const Analysis> analysis);
    RankCollectiveModel* model() const { return model_; }
    QTableView* table() const { return table_; }
    // Why the table is empty, or "" when it is not.
    QString hint() const;
    // Frames the collective of view row `row` on every rank and selects it.
    void frameRow(int row);
    // Rows of one communicator only (an index into the model's communicators(), -1: all).
    void filterCommunicator(int communicator);
    // Rows grouped by communicator (sorted by the group column, time order
    // inside each), or back in time order.
    void groupByCommunicator(bool on);

private:
    void fillCommunicators();

    TimelineWidget* timeline_;
    std::shared_ptr<const TimelineModel> timelineModel_;
    std::shared_ptr<const Analysis> analysis_;
    RankCollectiveModel* model_;
    QTableView* table_;
    QStackedWidget* stack_;
    QComboBox* communicator_;
    QCheckBox* grouped_;
};

// A "Collectives across ranks" dock (object name "ranks": `--panel ranks`),
// a tab beside Steps, and its View menu entry.
RanksPanel* addRanksDock(QMainWindow* window, QMenu* viewMenu, TimelineWidget* timeline);

}  // namespace osc::gui
