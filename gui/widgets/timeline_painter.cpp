#include "gui/widgets/timeline_painter.h"

#include "gui/model/arrival_summary.h"
#include "gui/model/markers.h"
#include "gui/model/time_ticks.h"
#include "gui/render/palette.h"
#include "gui/widgets/qt_values.h"
#include "gui/widgets/rank_labels.h"

#include <QCoreApplication>
#include <QFontMetrics>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>
#include <map>

namespace osc::gui {
namespace {

// A curved arrow from the end of the launching call to the start of its GPU work.
void drawFlow(QPainter& p, QPointF from, QPointF to) {
    QPainterPath path(from);
    const double dy = (to.y() - from.y()) / 2;
    path.cubicTo(from + QPointF(0, dy), to - QPointF(0, dy), to);
    p.setPen(QPen(qcolour(palette::kFlow), 1.5));
    p.setBrush(Qt::NoBrush);
    p.drawPath(path);
    // Arrowhead along the curve's last direction (vertical at the target).
    const double dir = to.y() >= from.y() ? -1 : 1;
    QPolygonF head;
    head << to << to + QPointF(-4, dir * 7) << to + QPointF(4, dir * 7);
    p.setBrush(qcolour(palette::kFlow));
    p.drawPolygon(head);
}

// A straight arrow from a sender's kernel to its receiver's; heads at both
// ends when the two kernels also exchanged data the other way.
void drawPeerLink(QPainter& p, QPointF from, QPointF to, bool bothWays) {
    const QColor c = qcolour(palette::kPeerLink);
    p.setPen(QPen(c, 2));
    p.drawLine(from, to);
    const QPointF d = to - from;
    const double len = std::hypot(d.x(), d.y());
    if (len < 1) return;
    const QPointF u = d / len, n(-u.y(), u.x());
    auto head = [&](QPointF tip, QPointF dir) {
        QPolygonF poly;
        poly << tip << tip - dir * 8 + n * 4 << tip - dir * 8 - n * 4;
        p.setPen(Qt::NoPen);
        p.setBrush(c);
        p.drawPolygon(poly);
    };
    head(to, u);
    if (bothWays) head(from, -u);
}

// Arrival skew of the selected collective: with a few ranks a dashed line at
// each rank's start; with many, the band from the first to the last arrival,
// a line at the median rank's start and one at the last rank's, and a
// caption naming the last rank (arrival_summary.h).
void paintArrivals(QPainter& p, const TimelineView& v) {
    const ArrivalSummary s = arrivalSummary(*v.model, v.selectedEvent, *v.matches);
    const ArrivalMarks marks = arrivalMarks(s, v.vp.scale, v.labelWidth);
    const QColor c = qcolour(palette::kHighlight);
    if (!marks.summarised) {
        p.setPen(QPen(c, 1, Qt::DashLine));
        for (double x : marks.lines) p.drawLine(QPointF(x, v.rulerHeight), QPointF(x, v.height));
        return;
    }
    QColor band = c;
    band.setAlpha(70);
    p.fillRect(
        QRectF(marks.bandFrom, v.rulerHeight, std::max(1.0, marks.bandTo - marks.bandFrom), v.height - v.rulerHeight),
        band);
    p.setPen(QPen(c, 1));
    p.drawLine(QPointF(marks.medianX, v.rulerHeight), QPointF(marks.medianX, v.height));
    p.setPen(QPen(c.darker(130), 2, Qt::DashLine));
    p.drawLine(QPointF(marks.latestX, v.rulerHeight), QPointF(marks.latestX, v.height));
    // The caption on a chip at the top, starting at the last arrival (or
    // ending there when it would run off the right edge).
    const QString text = QString::fromStdString(arrivalCaption(*v.model, s));
    const QFontMetrics fm(p.font());
    const double w = fm.horizontalAdvance(text) + 8, h = fm.height() + 2;
    double x = marks.latestX + 3;
    if (x + w > v.width) x = std::max<double>(v.labelWidth, marks.latestX - 3 - w);
    const QRectF chip(x, v.rulerHeight + 2, w, h);
    p.fillRect(chip, qcolour(palette::kBackground));
    p.setPen(qcolour(palette::kText));
    p.drawText(chip, Qt::AlignCenter, text);
}

}  // namespace

int pinnedGroup(const TimelineView& v) {
    if (!v.layout || v.scrollY <= 0) return -1;
    const LaneSlot* first = nullptr;
    for (const LaneSlot& s : v.layout->lanes())
        if (s.y + s.height > v.scrollY) {
            first = &s;
            break;
        }
    if (!first) return -1;
    const int group = v.model->lane(first->lane).group;
    for (const GroupSlot& g : v.layout->groups())
        if (g.group == group) return g.y < v.scrollY ? group : -1;
    return -1;
}

void paintOverlays(QPainter& p, const TimelineView& v) {
    const TimelineModel& model = *v.model;
    FrameBuilder fb(model, *v.layout);
    p.save();
    p.setClipRect(v.labelWidth, v.rulerHeight, v.width - v.labelWidth, v.height - v.rulerHeight);
    auto outline = [&](EventRef ref, uint32_t rgb, int widthPx) {
        if (auto r = fb.eventRect(v.vp, ref)) {
            p.setPen(QPen(qcolour(rgb), widthPx));
            p.setBrush(Qt::NoBrush);
            p.drawRect(QRectF(r->x, r->y + 0.5, std::max(2.f, r->w), r->h - 1));
        }
    };
    // Only hits on screen are outlined, at most one per pixel column and lane:
    // the result may hold millions.
    if (v.findHits) {
        for (const LaneSlot& s : v.layout->lanes()) {
            const float y = v.vp.top + static_cast<float>(s.y);
            if (y + static_cast<float>(s.height) < v.vp.clipTop || y > v.vp.clipBottom) continue;
            const Lane& lane = model.lane(s.lane);
            for (int r = 0; r < std::min(s.rows, static_cast<int>(lane.rows.size())); ++r) {
                const auto& rowHits = v.findHits->hitsOf(s.lane, r);
                if (rowHits.empty()) continue;
                for (uint32_t i : visibleHits(lane.rows[static_cast<size_t>(r)], rowHits, v.vp.scale))
                    outline({s.lane, r, i}, palette::kFindHit, 2);
            }
        }
    }
    if (v.matches)
        for (const EventRef& m : *v.matches) {
            // On thin rank rows an outline would hide the row's colours: its two ends are marked instead.
            if (!v.layout->oneRow()) {
                outline(m, palette::kHighlight, 2);
            } else if (auto r = fb.eventRect(v.vp, m)) {
                p.fillRect(QRectF(r->x, r->y, 2, r->h), qcolour(palette::kHighlight));
                p.fillRect(QRectF(r->x + std::max(2.f, r->w) - 2, r->y, 2, r->h), qcolour(palette::kHighlight));
            }
        }
    // One row per rank has no CPU lanes: a launch arrow would run along the row.
    if (v.flows && !v.layout->oneRow()) {
        p.setRenderHint(QPainter::Antialiasing, true);
        for (const Flow& f : *v.flows) {
            const auto a = fb.eventRect(v.vp, f.from), b = fb.eventRect(v.vp, f.to);
            if (!a || !b) continue;  // a lane is hidden or collapsed
            outline(f.from == v.selectedEvent ? f.to : f.from, palette::kFlow, 1);
            const QPointF from(a->x + std::max(1.f, a->w), a->y + a->h / 2);
            const QPointF to(b->x + 1, b->y > a->y ? b->y + 1 : b->y + b->h - 1);
            drawFlow(p, from, to);
        }
        p.setRenderHint(QPainter::Antialiasing, false);
    }
    if (v.selectedEvent.valid()) outline(v.selectedEvent, 0x000000, 2);
    if (v.matches && !v.matches->empty() && v.selectedEvent.valid()) paintArrivals(p, v);
    if (v.peerLinks && !v.peerLinks->empty()) {
        // Over the arrival lines: at the moment both kernels were there,
        // from the sender's edge to the receiver's (each end kept on its own kernel).
        p.setRenderHint(QPainter::Antialiasing, true);
        std::map<int, int> atColumn;  // arrows already at a pixel column: spread them apart
        for (const PeerLink& l : *v.peerLinks) {
            const auto a = fb.eventRect(v.vp, l.from), b = fb.eventRect(v.vp, l.to);
            if (!a || !b) continue;  // a lane is hidden or collapsed
            const double at = v.vp.left + v.vp.scale.toX(l.at);
            const double x = at + 10 * atColumn[static_cast<int>(std::lround(at))]++;
            const bool down = b->y > a->y;
            const QPointF from(std::clamp<double>(x, a->x, a->x + std::max(1.f, a->w)), down ? a->y + a->h : a->y);
            const QPointF to(std::clamp<double>(x, b->x, b->x + std::max(1.f, b->w)), down ? b->y : b->y + b->h);
            drawPeerLink(p, from, to, l.bothWays);
        }
        p.setBrush(Qt::NoBrush);
        p.setRenderHint(QPainter::Antialiasing, false);
    }
    if (v.selection) {
        const double x0 = std::max<double>(v.labelWidth, v.labelWidth + v.vp.scale.toX(v.selection->start));
        const double x1 = std::min<double>(v.width, v.labelWidth + v.vp.scale.toX(v.selection->end));
        QColor fill = qcolour(palette::kSelection);
        fill.setAlpha(40);
        // Shade the selected groups' lanes; the edges run across the whole view.
        // A flag per group: a ruler drag selects every one of a thousand ranks.
        std::vector<char> selected(model.groups().size(), 0);
        if (v.selectionGroups)
            for (int g : *v.selectionGroups)
                if (g >= 0 && static_cast<size_t>(g) < selected.size()) selected[static_cast<size_t>(g)] = 1;
        for (const LaneSlot& s : v.layout->lanes()) {
            const float top = v.vp.top + static_cast<float>(s.y);
            if (top + static_cast<float>(s.height) < v.vp.clipTop || top > v.vp.clipBottom) continue;
            if (!selected[static_cast<size_t>(model.lane(s.lane).group)]) continue;
            p.fillRect(QRectF(x0, v.vp.top + s.y, std::max(1.0, x1 - x0), s.height + v.layout->metrics().gap), fill);
        }
        p.setPen(QPen(qcolour(palette::kSelection), 1));
        p.drawLine(QPointF(x0, v.rulerHeight), QPointF(x0, v.height));
        p.drawLine(QPointF(x1, v.rulerHeight), QPointF(x1, v.height));
    }
    p.restore();
}

void paintLabels(QPainter& p, const TimelineView& v, const QFont& font) {
    p.fillRect(0, v.rulerHeight, v.labelWidth, v.height - v.rulerHeight, qcolour(palette::kBackground));
    p.setPen(qcolour(palette::kGrid));
    p.drawLine(v.labelWidth - 1, v.rulerHeight, v.labelWidth - 1, v.height);
    if (!v.model) return;
    const TimelineModel& model = *v.model;
    const LaneMetrics& lm = v.layout->metrics();
    const int top = v.rulerHeight - v.scrollY;
    const QFontMetrics fm(font);
    QFont bold = font;
    bold.setBold(true);
    auto header = [&](int group, int y) {
        const DeviceGroup& g = model.groups()[static_cast<size_t>(group)];
        p.fillRect(0, y, v.labelWidth, lm.headerHeight, qcolour(palette::kHeader));
        p.setPen(qcolour(palette::kHeaderText));
        p.setFont(bold);
        const QString text = QString::fromUtf8(g.collapsed ? "▸ " : "▾ ") + QString::fromStdString(g.label);
        p.drawText(QRect(6, y, v.width - 12, lm.headerHeight), Qt::AlignVCenter | Qt::AlignLeft,
                   QFontMetrics(bold).elidedText(text, Qt::ElideRight, v.width - 12));
        p.setFont(font);
    };
    p.save();
    p.setClipRect(0, v.rulerHeight, v.width, v.height - v.rulerHeight);
    for (const GroupSlot& g : v.layout->groups()) {
        const int y = top + g.y;
        if (y + lm.headerHeight < v.rulerHeight || y > v.height) continue;
        header(g.group, y);
    }
    for (const LaneSlot& s : v.layout->lanes()) {
        const int y = top + s.y;
        if (s.rankRow || y + s.height < v.rulerHeight || y > v.height) continue;
        const Lane& lane = model.lane(s.lane);
        // A colour chip says what the lane mostly carries.
        const uint32_t chip = lane.kind == LaneKind::Overlap  ? palette::kOverlap
                              : lane.kind == LaneKind::Ranges ? palette::kRangeChip
                              : lane.kind == LaneKind::Host   ? palette::kApiCall
                                                              : palette::categoryColour(lane.mainCategory);
        p.fillRect(8, y + 4, 4, std::min(s.height, s.rowHeight) - 8, qcolour(chip));
        p.setPen(qcolour(palette::kText));
        const QString label = fm.elidedText(QString::fromStdString(lane.label), Qt::ElideRight, v.labelWidth - 24);
        p.drawText(QRect(18, y, v.labelWidth - 22, std::min(s.height, s.rowHeight)), Qt::AlignVCenter | Qt::AlignLeft,
                   label);
    }
    paintRankLabels(p, v, font);
    // The header of the group being scrolled through stays at the top, so
    // every lane on screen says which rank and GPU it belongs to.
    if (const int g = pinnedGroup(v); g >= 0) {
        p.fillRect(v.labelWidth, v.rulerHeight, v.width - v.labelWidth, lm.headerHeight, qcolour(palette::kHeader));
        header(g, v.rulerHeight);
        p.setPen(qcolour(palette::kGrid));
        p.drawLine(0, v.rulerHeight + lm.headerHeight, v.width, v.rulerHeight + lm.headerHeight);
    }
    p.restore();
}

namespace {

// A marker's name chip at the ruler's foot (painted by paintMarkers; the
// ruler leaves out the tick labels it would cover).
QRectF markerChip(const QFontMetrics& fm, const TimelineView& v, size_t i) {
    const double x = v.labelWidth + v.vp.scale.toX(v.markers->times()[i]);
    return QRectF(x - 1, v.rulerHeight - 12, fm.horizontalAdvance(QString::fromStdString(Markers::name(i))) + 6, 12);
}

}  // namespace

void paintRuler(QPainter& p, const TimelineView& v) {
    p.fillRect(0, 0, v.width, v.rulerHeight, qcolour(palette::kHeader));
    p.setPen(qcolour(palette::kHeaderText));
    if (!v.model) {  // nothing open: no time axis to speak of
        p.setPen(qcolour(palette::kGrid));
        p.drawLine(0, v.rulerHeight - 1, v.width, v.rulerHeight - 1);
        return;
    }
    const TimeScale& scale = v.vp.scale;
    const Ruler ruler = makeRuler(scale);
    const QFontMetrics fm(p.font());
    QString left = QCoreApplication::translate("TimelineWidget", "view %1")
                       .arg(QString::fromStdString(formatDuration(scale.range().length())));
    if (!ruler.origin.empty())
        left += QCoreApplication::translate("TimelineWidget", " from %1").arg(QString::fromStdString(ruler.origin));
    p.drawText(QRect(6, 0, v.labelWidth - 12, v.rulerHeight), Qt::AlignVCenter | Qt::AlignLeft,
               fm.elidedText(left, Qt::ElideRight, v.labelWidth - 12));
    p.save();
    p.setClipRect(v.labelWidth, 0, v.width - v.labelWidth, v.rulerHeight);
    // The selection's length sits in a box over the tick labels; a label it
    // would cut in two ("1.|28.78 ms") is left out rather than mixed with it.
    std::optional<QRectF> box;
    QString length;
    if (v.selection) {
        const double x0 = v.labelWidth + scale.toX(v.selection->start);
        length = QString::fromStdString(formatDuration(v.selection->length(), 4));
        box = QRectF(std::max<double>(v.labelWidth, x0) + 2, 1, fm.horizontalAdvance(length) + 8, v.rulerHeight - 10);
    }
    // Each label fits before the next tick: labels never overlap.
    const double spacing = ruler.ticks.size() > 1 ? ruler.ticks[1].x - ruler.ticks[0].x : v.width;
    const int room = std::max(10, static_cast<int>(spacing) - 6);
    for (const Tick& t : ruler.ticks) {
        const int x = v.labelWidth + static_cast<int>(t.x);
        p.drawLine(x, v.rulerHeight - 6, x, v.rulerHeight);
        const QString label = fm.elidedText(QString::fromStdString(t.label), Qt::ElideRight, room);
        const int labelEnd = x + 3 + fm.horizontalAdvance(label);
        if (box && rulerLabelHidden(x + 3, labelEnd, box->left(), box->right())) continue;
        bool underChip = false;
        for (size_t i = 0; v.markers && i < v.markers->times().size() && !underChip; ++i) {
            const QRectF chip = markerChip(fm, v, i);
            underChip = rulerLabelHidden(x + 3, labelEnd, chip.left(), chip.right());
        }
        if (underChip) continue;
        p.drawText(QRect(x + 3, 0, room, v.rulerHeight - 4), Qt::AlignVCenter | Qt::AlignLeft, label);
    }
    if (v.selection) {
        const double x0 = v.labelWidth + scale.toX(v.selection->start), x1 = v.labelWidth + scale.toX(v.selection->end);
        QColor band = qcolour(palette::kSelection);
        band.setAlpha(60);
        p.fillRect(QRectF(std::max<double>(v.labelWidth, x0), v.rulerHeight - 8, std::max(1.0, x1 - x0), 8), band);
        p.fillRect(*box, qcolour(palette::kHeader));
        p.setPen(qcolour(palette::kSelection));
        p.drawText(*box, Qt::AlignCenter, length);
    }
    p.restore();
    p.setPen(qcolour(palette::kGrid));
    p.drawLine(0, v.rulerHeight - 1, v.width, v.rulerHeight - 1);
}

void paintMarkers(QPainter& p, const TimelineView& v) {
    if (!v.markers || v.markers->empty()) return;
    const QFontMetrics fm(p.font());
    p.save();
    p.setClipRect(v.labelWidth, 0, v.width - v.labelWidth, v.height);
    const QColor c = qcolour(palette::kMarker);
    for (size_t i = 0; i < v.markers->times().size(); ++i) {
        const double x = v.labelWidth + v.vp.scale.toX(v.markers->times()[i]);
        if (x < v.labelWidth - 1 || x > v.width + 1) continue;
        p.setPen(QPen(c, 1, Qt::DashLine));
        p.drawLine(QPointF(x, v.rulerHeight), QPointF(x, v.height));
        // Its name on a chip at the ruler's foot; the time and distance on hover.
        const QString name = QString::fromStdString(Markers::name(i));
        const QRectF chip = markerChip(fm, v, i);
        p.fillRect(chip, c);
        p.setPen(qcolour(palette::kTextOnColour));
        p.drawText(chip, Qt::AlignCenter, name);
    }
    p.restore();
}

void paintEmptyHint(QPainter& p, const TimelineView& v) {
    p.setPen(qcolour(palette::kEmptyText));
    const QRect r(v.labelWidth, v.rulerHeight, v.width - v.labelWidth, v.height - v.rulerHeight);
    p.drawText(r, Qt::AlignCenter | Qt::TextWordWrap,
               QCoreApplication::translate(
                   "TimelineWidget",
                   "Open a capture (or partial results, a saved report): File > Open, or drop a file here.\n"
                   "Or attach to a running job: File > Attach to live agent…"));
}

}  // namespace osc::gui
