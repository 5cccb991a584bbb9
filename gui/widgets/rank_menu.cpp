#include "gui/widgets/rank_menu.h"

#include "gui/widgets/timeline_widget.h"

#include <QAction>
#include <QActionGroup>
#include <QMainWindow>
#include <QMenu>
#include <QSignalBlocker>

namespace osc::gui {

QList<QAction*> addRankMenu(QMenu* view, TimelineWidget* timeline) {
    QList<QAction*> actions;
    QMenu* group = view->addMenu(QObject::tr("&Group ranks by"));
    auto* exclusive = new QActionGroup(group);
    const struct {
        const char* text;
        const char* name;
        RankGrouping grouping;
        const char* tip;
    } kChoices[] = {
        {"&None", "none", RankGrouping::None, "Ranks in rank order, one title bar per device"},
        {"&Host", "host", RankGrouping::Host, "A header per host (node); click it to fold its ranks"},
        {"&Communicator", "communicator", RankGrouping::Communicator,
         "A header per NCCL communicator, the smallest first (tensor-parallel groups before the data-parallel one)"},
    };
    for (const auto& c : kChoices) {
        QAction* a = group->addAction(QObject::tr(c.text));
        a->setObjectName(QStringLiteral("groupRanks.") + c.name);
        a->setToolTip(QObject::tr(c.tip));
        a->setCheckable(true);
        a->setChecked(c.grouping == RankGrouping::None);
        exclusive->addAction(a);
        QObject::connect(a, &QAction::triggered, timeline,
                         [timeline, g = c.grouping] { timeline->setRankGrouping(g); });
        actions << a;
    }
    QAction* oneRow = view->addAction(QObject::tr("One &row per rank"));
    oneRow->setObjectName("oneRowPerRank");
    oneRow->setCheckable(true);
    oneRow->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    oneRow->setToolTip(QObject::tr("Each GPU as one thin row: compute, hidden and exposed communication, waiting"));
    QObject::connect(oneRow, &QAction::toggled, timeline, [timeline](bool on) { timeline->setOneRowPerRank(on); });
    actions << oneRow;
    return actions;
}

bool applyRankView(QMainWindow* window, const QString& grouping, bool oneRow) {
    auto* choice = window->findChild<QAction*>("groupRanks." + (grouping.isEmpty() ? QString("none") : grouping));
    auto* row = window->findChild<QAction*>("oneRowPerRank");
    if (!choice || !row) return false;
    choice->trigger();
    row->setChecked(oneRow);
    return true;
}

void showRankView(QMainWindow* window, const RankView& view) {
    static const char* kNames[] = {"none", "host", "communicator"};
    if (auto* choice =
            window->findChild<QAction*>(QStringLiteral("groupRanks.") + kNames[static_cast<size_t>(view.grouping())])) {
        const QSignalBlocker quiet(choice);
        choice->setChecked(true);
    }
    if (auto* row = window->findChild<QAction*>("oneRowPerRank")) {
        const QSignalBlocker quiet(row);
        row->setChecked(view.oneRow());
    }
}

}  // namespace osc::gui
