#include "gui/widgets/timeline_keys.h"

#include "gui/widgets/timeline_widget.h"

#include <QAbstractScrollArea>
#include <QApplication>
#include <QKeyEvent>

namespace osc::gui {

TimelineKeyForwarder::TimelineKeyForwarder(TimelineWidget* timeline, QObject* parent)
    : QObject(parent), timeline_(timeline) {}

void TimelineKeyForwarder::watch(QWidget* panel) {
    panel->installEventFilter(this);
    if (auto* area = qobject_cast<QAbstractScrollArea*>(panel)) area->viewport()->installEventFilter(this);
}

bool TimelineKeyForwarder::isTimelineKey(int key, Qt::KeyboardModifiers modifiers) {
    if (modifiers & ~(Qt::KeypadModifier | Qt::ShiftModifier)) return false;
    switch (key) {
        case Qt::Key_W:
        case Qt::Key_A:
        case Qt::Key_S:
        case Qt::Key_D:
        case Qt::Key_F:
        case Qt::Key_BracketLeft:
        case Qt::Key_BracketRight:
        case Qt::Key_M:
            return !(modifiers & Qt::ShiftModifier);
        default:
            return false;
    }
}

bool TimelineKeyForwarder::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() != QEvent::KeyPress && event->type() != QEvent::ShortcutOverride)
        return QObject::eventFilter(watched, event);
    auto* key = static_cast<QKeyEvent*>(event);
    if (!timeline_->model() || !isTimelineKey(key->key(), key->modifiers()))
        return QObject::eventFilter(watched, event);
    if (event->type() == QEvent::ShortcutOverride) {
        event->accept();  // ours, not a menu shortcut's
        return true;
    }
    QKeyEvent copy(QEvent::KeyPress, key->key(), key->modifiers(), key->text());
    QApplication::sendEvent(timeline_, &copy);
    return true;
}

}  // namespace osc::gui
