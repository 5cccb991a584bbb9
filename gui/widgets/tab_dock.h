// A panel shown on demand from the View menu: docked at the bottom, hidden
// until asked for, then a tab beside the Steps table (wide plots want the
// room), the way the what-if and collective-progress panels open.
#pragma once

#include <QString>

class QMainWindow;
class QMenu;
class QWidget;

namespace osc::gui {

struct TabDockText {
    QString title;       // the dock's title bar
    QString objectName;  // what --panel and raisePanel() name it by
    QString menuText;    // the View menu's entry
    QString toolTip;
};

// Adds `panel` (parented to `window`) in such a dock and its toggle to `viewMenu`.
void addTabDock(QMainWindow* window, QMenu* viewMenu, QWidget* panel, const TabDockText& text);

}  // namespace osc::gui
