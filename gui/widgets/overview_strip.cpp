#include "gui/widgets/overview_strip.h"

#include "gui/render/palette.h"
#include "gui/widgets/qt_values.h"
#include "gui/widgets/timeline_widget.h"

#include <QMouseEvent>
#include <QPainter>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace osc::gui {
namespace {}  // namespace

OverviewStrip::OverviewStrip(TimelineWidget* timeline, QWidget* parent) : QWidget(parent), timeline_(timeline) {
    setFixedHeight(kHeight);
    setMouseTracking(false);
    setToolTip(
        tr("The whole capture: compute (blue), communication hidden (green) and exposed (vermilion),\n"
           "averaged over GPUs. The clear box is the visible range: click or drag to move it, wheel to zoom."));
    connect(timeline_, &TimelineWidget::viewRangeChanged, this, [this] { update(); });
}

int OverviewStrip::stripLeft() const { return TimelineWidget::kLabelWidth; }

void OverviewStrip::rebuild() {
    const TimelineModel* m = timeline_->model();
    const int columns = std::max(1, width() - stripLeft());
    overview_ = m && !m->empty() ? buildOverview(*m, timeline_->limits().bounds, columns) : Overview{};
    update();
}

void OverviewStrip::resizeEvent(QResizeEvent*) { rebuild(); }

double OverviewStrip::xOf(TimeNs t) const {
    if (overview_.columns.empty()) return stripLeft();
    return stripLeft() + TimeScale(overview_.range, static_cast<double>(overview_.columns.size())).toX(t);
}

TimeNs OverviewStrip::timeAt(double x) const {
    if (overview_.columns.empty()) return 0;
    return TimeScale(overview_.range, static_cast<double>(overview_.columns.size())).toTime(x - stripLeft());
}

void OverviewStrip::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), qcolour(palette::kHeader));
    p.setPen(qcolour(palette::kHeaderText));
    p.drawText(QRect(6, 0, stripLeft() - 12, height()), Qt::AlignVCenter | Qt::AlignLeft, tr("overview (all GPUs)"));
    if (overview_.columns.empty()) return;
    const int h = height() - 4, half = h / 2;
    p.fillRect(stripLeft(), 2, static_cast<int>(overview_.columns.size()), h, qcolour(palette::kBackground));
    // Upper half: communication (hidden under exposed); lower half: compute.
    for (size_t i = 0; i < overview_.columns.size(); ++i) {
        const OverviewColumn& c = overview_.columns[i];
        const int x = stripLeft() + static_cast<int>(i);
        const int ch = static_cast<int>(std::lround(std::min(1.0f, c.compute) * static_cast<float>(half)));
        if (ch > 0) p.fillRect(x, 2 + h - ch, 1, ch, qcolour(palette::kCompute));
        const int hh = static_cast<int>(std::lround(std::min(1.0f, c.hidden) * static_cast<float>(half)));
        const int eh = static_cast<int>(std::lround(std::min(1.0f, c.exposed) * static_cast<float>(half)));
        if (hh > 0) p.fillRect(x, 2 + half - hh, 1, hh, qcolour(palette::kOverlap));
        if (eh > 0) p.fillRect(x, 2 + half - hh - eh, 1, eh, qcolour(palette::kExposed));
    }
    // The visible range: everything else dimmed, the range outlined.
    const ViewRange v = timeline_->viewRange();
    const double x0 = std::clamp(xOf(v.start), static_cast<double>(stripLeft()), static_cast<double>(width()));
    const double x1 = std::clamp(xOf(v.end), static_cast<double>(stripLeft()), static_cast<double>(width()));
    const QColor dim = qcolour(palette::kHeader, 170);
    p.fillRect(QRectF(stripLeft(), 0, x0 - stripLeft(), height()), dim);
    p.fillRect(QRectF(x1, 0, width() - x1, height()), dim);
    p.setPen(QPen(qcolour(palette::kSelection), 2));
    p.setBrush(Qt::NoBrush);
    p.drawRect(QRectF(x0, 1, std::max(2.0, x1 - x0), height() - 2));
}

void OverviewStrip::centreAt(double x) {
    if (overview_.columns.empty()) return;
    const ViewRange v = timeline_->viewRange();
    const TimeNs centre = timeAt(x);
    timeline_->setViewRange({centre - v.length() / 2, centre - v.length() / 2 + v.length()}, false);
}

void OverviewStrip::mousePressEvent(QMouseEvent* e) {
    if (e->button() != Qt::LeftButton) return;
    // Remember the view once per press, so Backspace returns from a drag.
    timeline_->setViewRange(timeline_->viewRange(), true);
    centreAt(e->position().x());
}

void OverviewStrip::mouseMoveEvent(QMouseEvent* e) {
    if (e->buttons() & Qt::LeftButton) centreAt(e->position().x());
}

void OverviewStrip::wheelEvent(QWheelEvent* e) {
    if (overview_.columns.empty()) return;
    const ViewRange v = timeline_->viewRange();
    const double factor = std::pow(TimelineWidget::kWheelZoomStep, e->angleDelta().y() / 120.0);
    const TimeNs at = timeAt(e->position().x());
    const auto len = static_cast<TimeNs>(static_cast<double>(v.length()) * factor);
    timeline_->setViewRange({at - len / 2, at - len / 2 + len});
    e->accept();
}

}  // namespace osc::gui
