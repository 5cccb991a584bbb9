#include "gui/widgets/rank_labels.h"

#include "gui/model/rank_groups.h"
#include "gui/render/palette.h"
#include "gui/widgets/qt_values.h"

#include <QFontMetrics>
#include <QPainter>

#include <algorithm>
#include <map>

namespace osc::gui {
namespace {

constexpr uint32_t kSectionFill = 0xCBD3DC;  // a shade darker than a device's title bar
constexpr uint32_t kRowTick = 0xB8BEC6, kRowTickLabelled = 0x5A626C;

void paintSections(QPainter& p, const TimelineView& v, const QFont& font) {
    const LaneLayout& l = *v.layout;
    const int h = l.metrics().sectionHeight;
    QFont bold = font;
    bold.setBold(true);
    const QFontMetrics fm(bold);
    p.setFont(bold);
    for (const SectionSlot& s : l.sections()) {
        const int y = v.rulerHeight - v.scrollY + s.y;
        if (y + h < v.rulerHeight || y > v.height) continue;
        const RankSection& sec = l.rankSections()[static_cast<size_t>(s.section)];
        p.fillRect(0, y, v.width, h, qcolour(kSectionFill));
        p.setPen(qcolour(palette::kHeaderText));
        const QString text = QString::fromUtf8(sec.collapsed ? "▸ " : "▾ ") + QString::fromStdString(sec.title);
        p.drawText(QRect(6, y, v.width - 12, h), Qt::AlignVCenter | Qt::AlignLeft,
                   fm.elidedText(text, Qt::ElideRight, v.width - 12));
    }
    p.setFont(font);
}

void paintRankRows(QPainter& p, const TimelineView& v, const QFont& font) {
    const LaneLayout& l = *v.layout;
    if (!l.oneRow() || !v.rankView || l.lanes().empty()) return;
    const int pitch = l.rankPitch();
    // Rows of 9 px or more take a label each in a font no taller than the
    // row. Thinner rows get a font about two rows tall, and neighbouring
    // rows' labels go side by side in `stride` columns, each centred on its
    // own row: every row keeps its label and none covers another.
    const int base = QFontMetrics(font).height();
    const int textPx = pitch >= 9 ? std::min(base, pitch + 1) : std::clamp(2 * pitch - 2, 8, base);
    QFont small = font;
    small.setPixelSize(textPx);
    const QFontMetrics fm(small);
    const int stride = LaneLayout::labelStride(pitch, textPx + 1);
    const int columnWidth = (v.labelWidth - 20) / stride;
    // The GPU is named only where a process has several.
    std::map<std::pair<std::string, int64_t>, int> perProcess;
    for (const RankIdentity& id : v.rankView->identities())
        if (id.device >= 0) ++perProcess[{id.host, id.pid}];
    const bool withHost = v.rankView->grouping() != RankGrouping::Host;
    const int top = v.rulerHeight - v.scrollY;
    p.save();
    p.setClipRect(0, v.rulerHeight, v.labelWidth, v.height - v.rulerHeight);
    p.setFont(small);
    // A new section restarts the label columns; rows and headers both come in y order.
    auto nextSection = l.sections().begin();
    int indexInSection = 0;
    for (const LaneSlot& s : l.lanes()) {
        if (!s.rankRow) continue;
        for (; nextSection != l.sections().end() && nextSection->y < s.y; ++nextSection) indexInSection = 0;
        const int column = indexInSection++ % stride;
        const int y = top + s.y;
        if (y + pitch + textPx < v.rulerHeight || y - textPx > v.height) continue;
        // A tick per row at the column's edge: the rows stay countable.
        p.fillRect(v.labelWidth - 7, y, 5, std::max(1, s.height), qcolour(column == 0 ? kRowTickLabelled : kRowTick));
        const RankIdentity* id = v.rankView->identityOf(s.group);
        if (!id) continue;
        const bool withGpu = perProcess[{id->host, id->pid}] > 1;
        const QString text = fm.elidedText(QString::fromStdString(rankRowLabel(*id, withGpu, withHost)), Qt::ElideRight,
                                           columnWidth - 4);
        // Centred on its row; at a section's first or last row the box may
        // reach a pixel or two over the header (drawn first), never its text.
        const int boxH = textPx + 2;
        const int boxY = s.y + s.height / 2 - boxH / 2;
        p.setPen(qcolour(palette::kText));
        p.drawText(QRect(10 + column * columnWidth, top + boxY, columnWidth - 4, boxH),
                   Qt::AlignVCenter | Qt::AlignLeft, text);
    }
    p.restore();
}

}  // namespace

void paintRankLabels(QPainter& p, const TimelineView& v, const QFont& font) {
    if (!v.layout) return;
    paintSections(p, v, font);
    paintRankRows(p, v, font);
}

}  // namespace osc::gui
