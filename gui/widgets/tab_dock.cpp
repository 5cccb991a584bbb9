#include "gui/widgets/tab_dock.h"

#include <QAction>
#include <QDockWidget>
#include <QMainWindow>
#include <QMenu>

#include <memory>

namespace osc::gui {

void addTabDock(QMainWindow* window, QMenu* viewMenu, QWidget* panel, const TabDockText& text) {
    auto* dock = new QDockWidget(text.title, window);
    dock->setObjectName(text.objectName);
    dock->setWidget(panel);
    window->addDockWidget(Qt::BottomDockWidgetArea, dock);
    dock->hide();
    // Tabified the first time it shows, not at creation: the window builds
    // its docks after its menus, so the Steps dock may not exist yet.
    auto placed = std::make_shared<bool>(false);
    QObject::connect(dock, &QDockWidget::visibilityChanged, dock, [window, dock, placed](bool visible) {
        if (!visible || *placed) return;
        *placed = true;
        auto* steps = window->findChild<QDockWidget*>("steps");
        if (steps && window->dockWidgetArea(steps) == Qt::BottomDockWidgetArea) window->tabifyDockWidget(steps, dock);
        dock->show();
        dock->raise();
    });
    QAction* show = dock->toggleViewAction();
    show->setText(text.menuText);
    show->setToolTip(text.toolTip);
    viewMenu->addAction(show);
}

}  // namespace osc::gui
