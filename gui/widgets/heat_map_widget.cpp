#include "gui/widgets/heat_map_widget.h"

#include "gui/model/time_ticks.h"
#include "gui/render/palette.h"
#include "gui/widgets/selection_panel.h"
#include "gui/widgets/timeline_widget.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <array>
#include <cmath>

namespace osc::gui {
namespace {

uint32_t mix(uint32_t a, uint32_t b, double t) {
    auto ch = [&](int shift) {
        const double x = (a >> shift) & 0xFF, y = (b >> shift) & 0xFF;
        return static_cast<uint32_t>(x + (y - x) * t + 0.5) << shift;
    };
    return ch(16) | ch(8) | ch(0);
}

}  // namespace

uint32_t heatColour(float value, HeatMetric metric) {
    if (std::isnan(value)) return metric == HeatMetric::Lateness ? palette::kHeatNoArrival : palette::kHeatNoComm;
    const double v = std::clamp(static_cast<double>(value), 0.0, 1.0);
    if (metric == HeatMetric::ExposedShare) return mix(palette::kBackground, palette::kExposed, v);
    if (metric == HeatMetric::Lateness) return mix(palette::kBackground, palette::kLate, v);
    // Through white, not amber: amber is the timeline's "waiting for the last rank".
    return v < 0.5 ? mix(palette::kExposed, palette::kHeatMiddle, v * 2)
                   : mix(palette::kHeatMiddle, palette::kOverlap, v * 2 - 1);
}

HeatMapView::HeatMapView(TimelineWidget* timeline, QWidget* parent) : QWidget(parent), timeline_(timeline) {
    setMinimumHeight(80);
    setMouseTracking(true);
    // Rebuilt only while shown: a hidden map (another tab in front) is
    // rebuilt when it is shown again, not on every pan and every capture.
    connect(timeline_, &TimelineWidget::viewRangeChanged, this, [this] {
        if (!perStep_) rebuildWhenShown();
    });
    connect(timeline_, &TimelineWidget::modelChanged, this, &HeatMapView::rebuildWhenShown);
}

void HeatMapView::rebuildWhenShown() {
    if (isVisible())
        rebuild();
    else
        stale_ = true;
}

const HeatMap& HeatMapView::heatMap() const {
    // A cache filled on demand: reading it is what makes it current.
    if (stale_) const_cast<HeatMapView*>(this)->rebuild();
    return map_;
}

void HeatMapView::showEvent(QShowEvent* e) {
    QWidget::showEvent(e);
    if (stale_) rebuild();
}

void HeatMapView::setAnalysis(std::shared_ptr<const Analysis> analysis) {
    analysis_ = std::move(analysis);
    lateness_.reset();
    rebuildWhenShown();
}

void HeatMapView::setMode(bool perStep, HeatMetric metric) {
    perStep_ = perStep;
    metric_ = metric;
    rebuild();
}

int HeatMapView::pixelRows() const {
    const int h = std::max(1, height() - kHeaderHeight);
    if (map_.rows() == 0) return 0;
    if (map_.rows() >= h) return h;
    return map_.rows() * std::clamp(h / map_.rows(), 1, 24);
}

int HeatMapView::rowOfPixel(int y) const {
    const int rows = map_.rows(), px = pixelRows();
    if (px <= 0 || y < 0 || y >= px) return -1;
    return static_cast<int>(static_cast<int64_t>(y) * rows / px);
}

std::pair<int, int> HeatMapView::rowsOfPixel(int y) const {
    const int rows = map_.rows(), px = std::max(1, pixelRows());
    const int r0 = static_cast<int>(static_cast<int64_t>(y) * rows / px);
    return {r0, std::max(r0 + 1, static_cast<int>(static_cast<int64_t>(y + 1) * rows / px))};
}

const RankLateness* HeatMapView::lateness() {
    if (!analysis_) return nullptr;
    if (!lateness_) lateness_ = std::make_shared<const RankLateness>(rankLateness(*analysis_));
    return lateness_.get();
}

double HeatMapView::columnWidth() const {
    return map_.columns > 0 ? static_cast<double>(std::max(1, width() - kLabelWidth)) / map_.columns : 1.0;
}

void HeatMapView::rebuild() {
    stale_ = false;
    const TimelineModel* model = timeline_->model();
    const int columns = std::max(1, width() - kLabelWidth);
    const RankLateness* late = metric_ == HeatMetric::Lateness ? lateness() : nullptr;
    if (!model)
        map_ = perStep_ && analysis_ ? heatMapBySteps(*analysis_, metric_, late) : HeatMap{};
    else if (perStep_ && analysis_)
        map_ = heatMapBySteps(*model, *analysis_, metric_, late);
    else
        heatMapByTime(*model, timeline_->viewRange(), columns, metric_, map_, late);
    // One image pixel per column and pixel row; a pixel row holding several
    // ranks shows the worst of them.
    const int px = pixelRows();
    if (px <= 0 || map_.columns <= 0) {
        image_ = QImage();
        update();
        return;
    }
    if (image_.width() != map_.columns || image_.height() != px)
        image_ = QImage(map_.columns, px, QImage::Format_RGB32);
    const int rows = map_.rows();
    // Several ranks per pixel row: each shows the one farthest from its column's median.
    if (rows > px && metric_ != HeatMetric::Lateness)
        medians_ = columnMedians(map_);
    else
        medians_.clear();
    const float scale = map_.fullScale > 0 ? map_.fullScale : 1;
    // Colours from a table of 256 steps (and one for "no communication").
    std::array<QRgb, 257> lut;
    for (int i = 0; i < 256; ++i)
        lut[static_cast<size_t>(i)] = 0xFF000000u | heatColour(static_cast<float>(i) / 255.f, metric_);
    lut[256] = 0xFF000000u | heatColour(std::nanf(""), metric_);
    const auto colourOf = [&](float v) {
        return std::isnan(v) ? lut[256] : lut[static_cast<size_t>(std::clamp(v / scale, 0.f, 1.f) * 255.f + 0.5f)];
    };
    // bits() once: scanLine() would check for a detach from every thread.
    uchar* bits = image_.bits();
    const qsizetype stride = image_.bytesPerLine();
    parallelRows(px, [&](int y) {
        const int r0 = static_cast<int>(static_cast<int64_t>(y) * rows / px);
        const int r1 = std::max(r0 + 1, static_cast<int>(static_cast<int64_t>(y + 1) * rows / px));
        auto* line = reinterpret_cast<QRgb*>(bits + y * stride);
        const float* first = &map_.values[static_cast<size_t>(r0) * static_cast<size_t>(map_.columns)];
        if (r1 == r0 + 1) {  // one rank per pixel row (the common case): a straight copy through the table
            for (int c = 0; c < map_.columns; ++c) line[c] = colourOf(first[c]);
            return;
        }
        for (int c = 0; c < map_.columns; ++c) {
            const float median = medians_.empty() ? std::nanf("") : medians_[static_cast<size_t>(c)];
            line[c] = colourOf(map_.at(shownRow(map_, r0, r1, c, median, metric_), c));
        }
    });
    update();
}

void HeatMapView::resizeEvent(QResizeEvent*) { rebuildWhenShown(); }

void HeatMapView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), QColor::fromRgb(0xFF000000u | palette::kBackground));
    p.fillRect(0, 0, width(), kHeaderHeight, QColor::fromRgb(0xFF000000u | palette::kHeader));
    const TimelineModel* model = timeline_->model();
    p.setPen(QColor::fromRgb(0xFF000000u | palette::kHeaderText));
    if (image_.isNull()) {
        p.setPen(QColor::fromRgb(0xFF000000u | palette::kEmptyText));
        p.drawText(rect(), Qt::AlignCenter,
                   model || (analysis_ && perStep_) ? tr("no GPUs, or no steps to show")
                   : analysis_
                       ? tr("no timeline in this file to cut into time buckets: Columns: per step shows its steps")
                       : tr("no capture open"));
        return;
    }
    p.drawText(QRect(kLabelWidth, 0, width() - kLabelWidth - 4, kHeaderHeight), Qt::AlignVCenter | Qt::AlignLeft,
               fontMetrics().elidedText(headerText(), Qt::ElideRight, width() - kLabelWidth - 4));
    // Cells: the image stretched to the cell area without smoothing.
    const QRect cells(kLabelWidth, kHeaderHeight, width() - kLabelWidth, image_.height());
    p.drawImage(cells, image_);
    // Rank labels, as many as fit (the header says which when not all).
    const int px = pixelRows(), rows = map_.rows();
    const int lineHeight = fontMetrics().height();
    const int every = labelStride();
    p.setPen(QColor::fromRgb(0xFF000000u | palette::kText));
    for (int r = 0; r < rows; r += every) {
        const int y = kHeaderHeight + static_cast<int>(static_cast<int64_t>(r) * px / rows);
        p.drawText(QRect(4, y, kLabelWidth - 8, lineHeight), Qt::AlignVCenter | Qt::AlignLeft, rowLabel(r));
    }
}

int HeatMapView::labelStride() const {
    const int px = std::max(1, pixelRows()), rows = map_.rows();
    return std::max(1, (fontMetrics().height() * rows + px - 1) / px);
}

QString HeatMapView::headerText() const {
    QString what;
    if (metric_ == HeatMetric::OverlapRatio)
        what = tr("overlap ratio: red 0 → white 50% → green 100%, grey: no communication");
    else if (metric_ == HeatMetric::ExposedShare)
        what = tr("exposed communication share: white 0 → red 100%");
    else
        what = tr("lateness, arrival after the median rank: white 0 → indigo %1%2; pale: no collective")
                   .arg(QString::fromStdString(formatDuration(static_cast<TimeNs>(map_.fullScale))),
                        map_.latestRow >= 0 ? tr(" (the latest here: %1)").arg(rowLabel(map_.latestRow)) : QString());
    const int every = labelStride();
    // Labels do not fit one per row: say which rows carry one.
    const QString gpus =
        every > 1
            ? tr("%1 GPUs (a label every %2 rows, from the first; hover for the others)").arg(map_.rows()).arg(every)
            : tr("%1 GPUs").arg(map_.rows());
    const QString columns =
        perStep_ ? tr("%1 × %2 steps").arg(gpus).arg(map_.columns)
                 : tr("%1, %2 to %3, %4 per column")
                       .arg(gpus, QString::fromStdString(formatTimestamp(map_.range.start)),
                            QString::fromStdString(formatTimestamp(map_.range.end)),
                            QString::fromStdString(formatDuration(map_.range.length() / std::max(1, map_.columns))));
    return columns + "   ·   " + what;
}

QString HeatMapView::rowLabel(int row) const {
    if (!map_.rowLabels.empty()) return QString::fromStdString(map_.rowLabels[static_cast<size_t>(row)]);
    const TimelineModel* model = timeline_->model();
    return model ? QString::fromStdString(shortGroupLabel(*model, map_.groups[static_cast<size_t>(row)])) : QString();
}

std::pair<int, int> HeatMapView::cellAt(QPoint p) const {
    if (p.x() < kLabelWidth || map_.columns <= 0) return {-1, -1};
    const int y = p.y() - kHeaderHeight;
    const int column = static_cast<int>((p.x() - kLabelWidth) / columnWidth());
    if (rowOfPixel(y) < 0 || column < 0 || column >= map_.columns) return {-1, -1};
    // The rank whose colour the pixel shows, not the first of its ranks.
    const auto [r0, r1] = rowsOfPixel(y);
    const float median = medians_.empty() ? std::nanf("") : medians_[static_cast<size_t>(column)];
    return {shownRow(map_, r0, r1, column, median, metric_), column};
}

QString HeatMapView::valueText(float v) const {
    if (std::isnan(v))
        return metric_ == HeatMetric::Lateness ? tr(": no collective starts here") : tr(": no communication");
    if (metric_ == HeatMetric::Lateness)
        return tr(": arrived %1 after the median rank (its latest arrival here)")
            .arg(QString::fromStdString(formatDuration(static_cast<TimeNs>(v))));
    return (metric_ == HeatMetric::OverlapRatio ? tr(": %1% of communication hidden")
                                                : tr(": %1% exposed communication"))
        .arg(static_cast<double>(v) * 100, 0, 'f', 1);
}

QPoint HeatMapView::cellCentre(int row, int column) const {
    const int px = pixelRows();
    const int y =
        kHeaderHeight + static_cast<int>((static_cast<int64_t>(row) * px + px / 2) / std::max(1, map_.rows()));
    return {kLabelWidth + static_cast<int>((column + 0.5) * columnWidth()), y};
}

void HeatMapView::mouseReleaseEvent(QMouseEvent* e) {
    const auto [row, column] = cellAt(e->position().toPoint());
    if (row < 0) return;
    ViewRange w = map_.window(row, column);
    if (!map_.perStep) {
        // Ten times closer around the cell: the cell and some context, not one sliver.
        const TimeNs len = std::max<TimeNs>(w.length(), map_.range.length() / 10);
        const TimeNs centre = w.start + w.length() / 2;
        w = {centre - len / 2, centre - len / 2 + len};
    }
    emit cellClicked(map_.groups[static_cast<size_t>(row)], w);
}

bool HeatMapView::event(QEvent* e) {
    if (e->type() != QEvent::ToolTip) return QWidget::event(e);
    auto* help = static_cast<QHelpEvent*>(e);
    const auto [row, column] = cellAt(help->pos());
    const bool timeline = timeline_->model() != nullptr;
    if (row < 0 || (!timeline && map_.rowLabels.empty())) {
        QToolTip::hideText();
        return true;
    }
    const float v = map_.at(row, column);
    const ViewRange w = map_.window(row, column);
    QString text = rowLabel(row);
    text += map_.perStep ? tr(", %1").arg(QString::fromStdString(map_.stepNames[static_cast<size_t>(column)]))
                         : tr(", %1 to %2")
                               .arg(QString::fromStdString(formatTimestamp(w.start)),
                                    QString::fromStdString(formatTimestamp(w.end)));
    text += valueText(v);
    if (pixelRows() < map_.rows())
        text += metric_ == HeatMetric::Lateness
                    ? tr("\n(several ranks per pixel row: the latest is shown)")
                    : tr("\n(several ranks per pixel row: the one farthest from the column's median is shown)");
    if (timeline) text += tr("\nclick: zoom the timeline here");
    QToolTip::showText(help->globalPos(), text, this);
    return true;
}

HeatMapPanel::HeatMapPanel(TimelineWidget* timeline, QWidget* parent) : QWidget(parent) {
    view_ = new HeatMapView(timeline, this);
    mode_ = new QComboBox(this);
    mode_->addItems({tr("per time bucket of the view"), tr("per step")});
    metric_ = new QComboBox(this);
    metric_->addItems({tr("overlap ratio"), tr("exposed communication"), tr("lateness (arrival after the median)")});
    metric_->setItemData(2,
                         tr("How long after the median rank each rank arrived at its collectives: a late rank "
                            "is the dark row (it waits least, so the overlap colours hide it)"),
                         Qt::ToolTipRole);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Columns:"), this));
    bar->addWidget(mode_);
    bar->addWidget(new QLabel(tr("Colour:"), this));
    bar->addWidget(metric_);
    bar->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(bar);
    layout->addWidget(view_, 1);
    connect(mode_, &QComboBox::currentIndexChanged, this, &HeatMapPanel::apply);
    connect(metric_, &QComboBox::currentIndexChanged, this, &HeatMapPanel::apply);
}

void HeatMapPanel::setPerStep(bool perStep) { mode_->setCurrentIndex(perStep ? 1 : 0); }

void HeatMapPanel::setMetric(HeatMetric metric) {
    metric_->setCurrentIndex(metric == HeatMetric::ExposedShare ? 1 : metric == HeatMetric::Lateness ? 2 : 0);
}

void HeatMapPanel::apply() {
    static constexpr HeatMetric kMetrics[] = {HeatMetric::OverlapRatio, HeatMetric::ExposedShare, HeatMetric::Lateness};
    view_->setMode(mode_->currentIndex() == 1, kMetrics[std::clamp(metric_->currentIndex(), 0, 2)]);
}

}  // namespace osc::gui
