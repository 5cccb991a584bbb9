// Table cells that wrap long text onto more lines instead of cutting it
// ("ncclDevKernel_AllGather_RING_LL(ncc…"): kernel names and C++ signatures
// have few spaces, so lines break anywhere when a word does not fit. The
// row grows to hold it (QTableView::resizeRowsToContents asks sizeHint).
#pragma once

#include <QStyledItemDelegate>

namespace osc::gui {

class WrappingDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;

    static constexpr int kMargin = 3;  // px around the text
};

}  // namespace osc::gui
