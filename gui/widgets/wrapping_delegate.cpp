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

// The height of `text` laid out as paint() lays it out.
int wrappedHeight(const QString& text, const QFont& font, int width) {
    QTextLayout layout(text, font);
    layout.setTextOption(wrapAnywhere(Qt::AlignLeft));
    layout.beginLayout();
    qreal height = 0;
    for (QTextLine line = layout.createLine(); line.isValid(); line = layout.createLine()) {
        line.setLineWidth(width);
        height += line.height();
    }
    layout.endLayout();
    return static_cast<int>(std::ceil(height));
}

}  // namespace

void WrappingDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const {
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const QString text = opt.text;
    opt.text.clear();  // the style draws the background and selection, we the text
    const QStyle* style = opt.widget ? opt.widget->style() : QApplication::style();
    style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, opt.widget);
    painter->save();
    painter->setFont(opt.font);
    painter->setPen(opt.palette.color(opt.state & QStyle::State_Selected ? QPalette::HighlightedText : QPalette::Text));
    painter->drawText(QRectF(opt.rect.adjusted(kMargin, kMargin, -kMargin, -kMargin)), text,
                      wrapAnywhere(Qt::AlignLeft | Qt::AlignVCenter));
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
