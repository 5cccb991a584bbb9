#include "gui/widgets/timeline_frame.h"

#include "gui/widgets/legend_bar.h"
#include "gui/widgets/overview_strip.h"
#include "gui/widgets/timeline_widget.h"

#include <QGridLayout>
#include <QScrollBar>

namespace osc::gui {

TimelineFrame::TimelineFrame(QWidget* parent) : QWidget(parent) {
    timeline_ = new TimelineWidget(this);
    overview_ = new OverviewStrip(timeline_, this);
    legend_ = new LegendBar(this);
    scrollBar_ = new QScrollBar(Qt::Vertical, this);
    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setSpacing(0);
    grid->addWidget(overview_, 0, 0, 1, 2);
    grid->addWidget(timeline_, 1, 0);
    grid->addWidget(scrollBar_, 1, 1);
    grid->addWidget(legend_, 2, 0, 1, 2);
    grid->setRowStretch(1, 1);
    connect(timeline_, &TimelineWidget::scrollChanged, this, &TimelineFrame::syncScrollBar);
    connect(timeline_, &TimelineWidget::modelChanged, overview_, &OverviewStrip::rebuild);
    connect(scrollBar_, &QScrollBar::valueChanged, timeline_, &TimelineWidget::setScrollY);
    syncScrollBar();
}

void TimelineFrame::syncScrollBar() {
    const QSignalBlocker block(scrollBar_);
    scrollBar_->setRange(0, timeline_->maxScrollY());
    scrollBar_->setPageStep(timeline_->pageHeight());
    scrollBar_->setSingleStep(timeline_->layout().metrics().rowHeight);
    scrollBar_->setValue(timeline_->scrollY());
}

}  // namespace osc::gui
