#include "gui/widgets/wrapping_delegate.h"

#include <QApplication>
#include <QPainter>
#include <QTextLayout>
#include <QTextOption>

#include <algorithm>
#include <cmath>

namespace osc::gui {
namespace {

QTextOption wrapAnywhere(Qt::Alignment alignment) {
    QTextOption o(alignment);
    o.setWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    return o;
}

// `text` broken into lines of at most `width` px. paint() draws this very
// layout and sizeHint() takes its height, so a row is always as tall as the
// lines drawn in it (QPainter::drawText lays text out on its own, with the
// font's leading between lines, and the last lines were cut off).
void layOut(QTextLayout& layout, int width) {
    layout.setTextOption(wrapAnywhere(Qt::AlignLeft));
    layout.beginLayout();
    qreal y = 0;
    for (QTextLine line = layout.createLine(); line.isValid(); line = layout.createLine()) {
        line.setLineWidth(width);
        line.setPosition(QPointF(0, y));
        y += line.height();
    }
    layout.endLayout();
}

int wrappedHeight(const QString& text, const QFont& font, int width) {
    QTextLayout layout(text, font);
    layOut(layout, width);
    return static_cast<int>(std::ceil(layout.boundingRect().height()));
}

}  // namespace

void WrappingDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const {
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const QString text = opt.text;
    opt.text.clear();  // the style draws the background and selection, we the text
    const QStyle* style = opt.widget ? opt.widget->style() : QApplication::style();
    style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, opt.widget);
    const QRect box = opt.rect.adjusted(kMargin, kMargin, -kMargin, -kMargin);
    QTextLayout layout(text, opt.font);
    layOut(layout, std::max(20, opt.rect.width()) - 2 * kMargin);
    // Centred when the row is taller than the text (a neighbour cell's lines).
    const qreal top = box.top() + std::max<qreal>(0, (box.height() - layout.boundingRect().height()) / 2);
    painter->save();
    painter->setClipRect(opt.rect);
    painter->setPen(opt.palette.color(opt.state & QStyle::State_Selected ? QPalette::HighlightedText : QPalette::Text));
    layout.draw(painter, QPointF(box.left(), top));
    painter->restore();
}

QSize WrappingDelegate::sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const {
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const int width = std::max(20, opt.rect.width()) - 2 * kMargin;
    return {opt.rect.width(),
            std::max(QFontMetrics(opt.font).height(), wrappedHeight(opt.text, opt.font, width)) + 2 * kMargin};
}

}  // namespace osc::gui
