#include "gui/widgets/legend_bar.h"

#include "gui/render/palette.h"

#include <QPainter>

namespace osc::gui {

LegendBar::LegendBar(QWidget* parent) : QWidget(parent) {
    all_ = {
        {palette::kCompute, tr("compute"), false},
        {palette::kCommunication, tr("communication"), false},
        {palette::kMemory, tr("memory copy / set"), false},
        {palette::kOverlap, tr("comm hidden behind compute"), false},
        {palette::kExposed, tr("comm exposed"), false},
        {palette::kExposedWait, tr("exposed, waiting for the last rank"), false},
        {palette::shaded(palette::kCompute, 0.25), tr("folded: events too small to show (shade = busy share)"), false},
        {palette::kApiCall, tr("CUDA API call"), false},
        {palette::rangeColour("ProfilerStep#1"), tr("NVTX range / step / operator"), false},
        {palette::kHighlight, tr("same collective / send-receive partner on other ranks"), true},
        {palette::kPeerLink, tr("send → receive"), false, false, Shown::WithSendReceive},
        {palette::kBubbleHatch, tr("pipeline bubble (no compute on the stage)"), false, true, Shown::WithPipeline},
        {palette::kFindHit, tr("find hit"), true},
        {palette::kFlow, tr("launch → GPU work"), false},
    };
    shown_ = all_;
    setToolTip(tr("What the timeline's colours mean"));
    QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Preferred);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
}

void LegendBar::setCaptureHas(bool sendReceive, bool pipeline, const QString& apiFamilies) {
    for (Entry& e : all_)
        if (e.rgb == palette::kApiCall) e.text = tr("%1 API call").arg(apiFamilies);
    shown_.clear();
    for (const Entry& e : all_)
        if (e.shown == Shown::Always || (e.shown == Shown::WithSendReceive && sendReceive) ||
            (e.shown == Shown::WithPipeline && pipeline))
            shown_.push_back(e);
    updateGeometry();  // fewer entries may need fewer lines
    update();
}

int LegendBar::layoutLines(int width, std::vector<QPoint>* at) const {
    const QFontMetrics fm = fontMetrics();
    const int chip = fm.height() - 4, lineHeight = fm.height() + 6;
    int x = 8, line = 0;
    for (const Entry& e : shown_) {
        const int w = chip + 4 + fm.horizontalAdvance(e.text) + 14;
        if (x + w > width && x > 8) {  // wrap rather than cut an entry
            x = 8;
            ++line;
        }
        if (at) at->push_back({x, line * lineHeight});
        x += w;
    }
    return line + 1;
}

QSize LegendBar::sizeHint() const { return {800, heightForWidth(800)}; }

int LegendBar::heightForWidth(int width) const { return layoutLines(width, nullptr) * (fontMetrics().height() + 6); }

void LegendBar::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), QColor::fromRgb(0xFF000000u | palette::kHeader));
    const QFontMetrics fm = fontMetrics();
    const int chip = fm.height() - 4, lineHeight = fm.height() + 6;
    std::vector<QPoint> at;
    layoutLines(width(), &at);
    for (size_t i = 0; i < shown_.size(); ++i) {
        const Entry& e = shown_[i];
        const int x = at[i].x(), top = at[i].y(), y = top + (lineHeight - chip) / 2;
        const QColor c = QColor::fromRgb(0xFF000000u | e.rgb);
        if (e.hatch) {
            p.fillRect(x, y, chip, chip, QColor::fromRgb(0xFF000000u | palette::kBubbleTint));
            p.fillRect(x, y, chip, chip, QBrush(c, Qt::BDiagPattern));
        } else if (e.outline) {
            p.setPen(QPen(c, 2));
            p.setBrush(Qt::NoBrush);
            p.drawRect(x + 1, y + 1, chip - 2, chip - 2);
        } else {
            p.fillRect(x, y, chip, chip, c);
        }
        p.setPen(QColor::fromRgb(0xFF000000u | palette::kText));
        p.drawText(QRect(x + chip + 4, top, width() - x, lineHeight), Qt::AlignVCenter | Qt::AlignLeft, e.text);
    }
}

}  // namespace osc::gui
