#include "gui/widgets/timeline_widget.h"

#include "gui/model/hover_text.h"
#include "gui/model/kernel_find.h"
#include "gui/model/kernel_links.h"
#include "gui/model/rank_row_hit.h"
#include "gui/model/time_ticks.h"
#include "gui/render/palette.h"
#include "gui/widgets/hang_view.h"
#include "gui/widgets/qt_values.h"
#include "gui/widgets/timeline_painter.h"

#include <QContextMenuEvent>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace osc::gui {
namespace {}  // namespace

TimelineWidget::TimelineWidget(QWidget* parent) : QWidget(parent) {
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setMinimumSize(400, 200);
    scale_ = TimeScale({0, 1000}, eventAreaWidth());
}

void TimelineWidget::setModel(std::shared_ptr<TimelineModel> model, std::shared_ptr<const Analysis> analysis) {
    model_ = std::move(model);
    analysis_ = std::move(analysis);
    steps_ = analysis_ && model_ ? gui::jobSteps(*analysis_) : std::vector<JobStep>{};
    selection_.reset();
    selectionGroups_.clear();
    selectedEvent_ = {};
    matches_.clear();
    peerLinks_.clear();
    flows_.clear();
    findHits_.reset();
    history_.clear();
    limits_ =
        model_ && !model_->empty() ? ViewLimits::forContent(model_->begin(), model_->end(), kFitMargin) : ViewLimits{};
    scrollY_ = 0;
    rankView_.setIdentities(model_ ? rankIdentities(*model_, analysis_.get()) : std::vector<RankIdentity>{});
    relayout();
    fitSteps();
    history_.clear();
    emit modelChanged();
}

void TimelineWidget::relayout() {
    layout_ = model_ ? LaneLayout(*model_, rankView_.rows(pageHeight()), {}, scale_.nsPerPx()) : LaneLayout();
    cacheValid_ = false;
    setScrollY(scrollY_);
    update();
    emit layoutChanged();
}

void TimelineWidget::setRankGrouping(RankGrouping grouping) {
    rankView_.setGrouping(grouping);
    relayout();
}

void TimelineWidget::setOneRowPerRank(bool on) {
    rankView_.setOneRow(on);
    relayout();
}

void TimelineWidget::restoreRankView(const SavedLayout& layout) {
    osc::gui::restoreRankView(rankView_, layout);
    relayout();
}

Viewport TimelineWidget::viewport() const {
    Viewport vp;
    vp.scale = scale_;
    vp.left = kLabelWidth;
    vp.top = static_cast<float>(kRulerHeight - scrollY_);
    vp.clipTop = kRulerHeight;
    vp.clipBottom = static_cast<float>(height());
    return vp;
}

bool TimelineWidget::unfoldSectionOf(int group) {
    for (const RankSection& s : layout_.rankSections())
        if (s.collapsed && std::find(s.groups.begin(), s.groups.end(), group) != s.groups.end()) {
            rankView_.setCollapsed(s.key, false);
            return true;
        }
    return false;
}

void TimelineWidget::revealGroup(int group) {
    if (unfoldSectionOf(group)) relayout();
    for (const GroupSlot& g : layout_.groups())
        if (g.group == group) setScrollY(g.y);
    if (const LaneSlot* row = layout_.rankRowOf(group)) setScrollY(row->y - pageHeight() / 3);
}

bool TimelineWidget::revealLane(int lane) {
    if (!model_ || lane < 0 || static_cast<size_t>(lane) >= model_->lanes().size()) return false;
    const Lane& l = model_->lane(lane);
    bool changed = unfoldSectionOf(l.group);
    if (model_->groups()[static_cast<size_t>(l.group)].collapsed) {
        model_->setCollapsed(l.group, false);
        changed = true;
    }
    if (l.hidden) {
        model_->setHidden(lane, false);
        changed = true;
    }
    if (l.kind == LaneKind::Host && !model_->hostLanesShown()) {
        model_->setHostLanesShown(true);
        changed = true;
    }
    if (changed) relayout();
    return changed;
}

int TimelineWidget::maxScrollY() const { return std::max(0, layout_.totalHeight() - pageHeight()); }

void TimelineWidget::setScrollY(int y) {
    const int clamped = std::clamp(y, 0, maxScrollY());
    if (clamped != scrollY_) {
        scrollY_ = clamped;
        update();
    }
    emit scrollChanged();
}

void TimelineWidget::applyScale(TimeScale s) {
    s = TimeScale(limits_.clamp(s.range()), s.width());
    if (s.range() == scale_.range() && s.width() == scale_.width()) return;
    scale_ = s;
    if (hostRowsChanged()) relayout();
    update();
    emit viewRangeChanged(scale_.range());
}

bool TimelineWidget::hostRowsChanged() const {
    if (!model_ || !model_->hostLanesShown()) return false;
    for (const LaneSlot& slot : layout_.lanes()) {
        const Lane& lane = model_->lane(slot.lane);
        if (lane.kind == LaneKind::Host && LaneLayout::shownRows(lane, scale_.nsPerPx()) != slot.rows) return true;
    }
    return false;
}

void TimelineWidget::setViewRange(ViewRange r, bool remember) {
    if (remember) history_.push(scale_.range());
    applyScale(TimeScale(r, eventAreaWidth()));
}

void TimelineWidget::fitAll() {
    if (!model_ || model_->empty()) return;
    // The limits' bounds: a small margin so the first and last kernels do not touch the edges.
    setViewRange(limits_.bounds);
}

void TimelineWidget::fitSteps() {
    if (const auto span = stepsSpan(steps_))
        setViewRange(withMargin(*span, kFitMargin));
    else
        fitAll();
}

bool TimelineWidget::goToStep(int direction) {
    const ViewRange v = scale_.range();
    const int to = neighbourStep(steps_, v.start + v.length() / 2, direction);
    if (to < 0) return false;
    setViewRange(withMargin(steps_[static_cast<size_t>(to)].window, kFitMargin));
    return true;
}

void TimelineWidget::fitEvent(EventRef ref) {
    if (!model_ || !ref.valid()) return;
    const EventRow& row = model_->lane(ref.lane).rows[static_cast<size_t>(ref.row)];
    const TimeNs s = row.start[ref.index], e = row.end[ref.index];
    const TimeNs margin = std::max<TimeNs>(1, (e - s) / 10);
    setViewRange({s - margin, e + margin});
}

void TimelineWidget::fitSelection() {
    if (selection_) {
        setViewRange(*selection_);
    } else if (selectedEvent_.valid() && model_) {
        fitEvent(selectedEvent_);
    } else {
        fitAll();
    }
}

bool TimelineWidget::goBack() {
    const auto r = history_.pop();
    if (!r) return false;
    applyScale(TimeScale(*r, eventAreaWidth()));
    return true;
}

void TimelineWidget::zoomBy(double factor, double anchorX) { applyScale(scale_.zoomedAt(anchorX, factor)); }

void TimelineWidget::panByPixels(double dx) { applyScale(scale_.pannedBy(dx)); }

int TimelineWidget::laneY(int lane) const {
    const LaneSlot* s = layout_.slotOf(lane);
    return s ? kRulerHeight + s->y - scrollY_ : -1;
}

void TimelineWidget::setSelection(ViewRange r, std::vector<int> groups) {
    if (r.end < r.start) std::swap(r.start, r.end);
    selection_ = r;
    selectionGroups_ = std::move(groups);
    update();
    emit selectionChanged();
}

void TimelineWidget::addMarker(TimeNs t) {
    markers_.add(t);
    update();
    emit markersChanged();
}

void TimelineWidget::clearMarkers() {
    markers_.clear();
    update();
    emit markersChanged();
}

std::vector<int> TimelineWidget::deviceGroups() const {
    std::vector<int> out;
    if (!model_) return out;
    for (size_t g = 0; g < model_->groups().size(); ++g)
        if (model_->groups()[g].device >= 0) out.push_back(static_cast<int>(g));
    return out;
}

void TimelineWidget::clearSelection() {
    const bool had = selection_.has_value() || selectedEvent_.valid();
    selection_.reset();
    selectionGroups_.clear();
    selectedEvent_ = {};
    matches_.clear();
    peerLinks_.clear();
    flows_.clear();
    if (had) {
        update();
        emit selectionChanged();
        emit eventSelected({});
    }
}

void TimelineWidget::selectEvent(EventRef ref, bool reveal) {
    selectedEvent_ = ref;
    KernelLinks links = model_ && ref.valid() ? linkedKernels(*model_, analysis_.get(), ref) : KernelLinks{};
    matches_ = std::move(links.partners);
    peerLinks_ = std::move(links.arrows);
    flows_ = model_ && ref.valid() ? flowsOf(*model_, ref) : std::vector<Flow>{};
    if (reveal && ref.valid()) {
        const EventRow& row = model_->lane(ref.lane).rows[static_cast<size_t>(ref.row)];
        const TimeNs s = row.start[ref.index], e = row.end[ref.index];
        ViewRange v = scale_.range();
        // Keep the zoom when the event fits, otherwise zoom out to show it whole.
        if (e - s > v.length() * 8 / 10) {
            const TimeNs margin = std::max<TimeNs>(1, (e - s) / 5);
            v = {s - margin, e + margin};
        } else {
            const TimeNs centre = s + (e - s) / 2;
            v = {centre - v.length() / 2, centre - v.length() / 2 + v.length()};
        }
        setViewRange(v);
        const LaneSlot* slot = layout_.slotOf(ref.lane);
        if (!slot) slot = layout_.rankRowOf(model_->lane(ref.lane).group);  // one row per rank
        if (slot) {
            const int visible = height() - kRulerHeight;
            if (slot->y < scrollY_ || slot->y + slot->height > scrollY_ + visible) {
                setScrollY(slot->y - visible / 3);
            }
        }
    }
    update();
    emit eventSelected(ref);
}

void TimelineWidget::setFindHits(std::shared_ptr<const FindResult> hits) {
    findHits_ = std::move(hits);
    update();
}

int TimelineWidget::headerGroupAt(int y) const {
    if (!model_ || y < kRulerHeight) return -1;
    // The pinned header covers whatever scrolled under it.
    if (y < kRulerHeight + layout_.metrics().headerHeight)
        if (const int pinned = pinnedGroup(view(viewport())); pinned >= 0) return pinned;
    return layout_.groupHeaderAt(y - kRulerHeight + scrollY_);
}

EventRef TimelineWidget::hitTest(QPoint p) const {
    if (!model_ || p.x() < kLabelWidth || p.y() < kRulerHeight) return {};
    if (headerGroupAt(p.y()) >= 0) return {};
    const LaneSlot* slot = layout_.laneAt(p.y() - kRulerHeight + scrollY_);
    if (!slot) return {};
    const TimeNs tolerance = static_cast<TimeNs>(std::ceil(3 * scale_.nsPerPx()));
    // A rank's thin row stands for its whole device.
    if (slot->rankRow) return rankRowHit(*model_, slot->group, timeAt(p.x()), tolerance);
    const Lane& lane = model_->lane(slot->lane);
    if (lane.kind == LaneKind::Overlap) return {};
    const int row = (p.y() - kRulerHeight + scrollY_ - slot->y) / std::max(1, slot->rowHeight);
    if (row < 0 || row >= std::min(slot->rows, static_cast<int>(lane.rows.size()))) return {};
    const EventRow& r = lane.rows[static_cast<size_t>(row)];
    const size_t i = r.hitTest(timeAt(p.x()), tolerance);
    if (i >= r.size()) return {};
    return {slot->lane, row, i};
}

std::vector<int> TimelineWidget::groupsBetween(int y0, int y1) const {
    if (y1 < y0) std::swap(y0, y1);
    std::vector<int> groups;
    std::vector<char> seen(model_->groups().size(), 0);  // a drag over a thousand rank rows
    for (const LaneSlot& s : layout_.lanes()) {
        const int top = kRulerHeight + s.y - scrollY_;
        if (top + s.height < y0 || top > y1) continue;
        const int g = model_->lane(s.lane).group;
        if (model_->groups()[static_cast<size_t>(g)].device < 0 || seen[static_cast<size_t>(g)]) continue;
        seen[static_cast<size_t>(g)] = 1;
        groups.push_back(g);
    }
    return groups;
}

void TimelineWidget::updateSelectionFromDrag(QPoint p) {
    const int x0 = std::clamp(pressPos_.x(), kLabelWidth, width());
    const int x1 = std::clamp(p.x(), kLabelWidth, width());
    // From the ruler: a plain measure over every device, wherever the mouse goes.
    setSelection({timeAt(std::min(x0, x1)), timeAt(std::max(x0, x1))},
                 pressOnRuler_ ? deviceGroups() : groupsBetween(pressPos_.y(), p.y()));
}

void TimelineWidget::mousePressEvent(QMouseEvent* e) {
    setFocus();
    pressPos_ = e->position().toPoint();
    pressOnRuler_ = pressPos_.y() < kRulerHeight;
    pressScale_ = scale_;
    pressScrollY_ = scrollY_;
    const bool pan =
        e->button() == Qt::MiddleButton || (e->button() == Qt::LeftButton && (e->modifiers() & Qt::ShiftModifier));
    if (pan) {
        drag_ = Drag::Pan;
        setCursor(Qt::ClosedHandCursor);
    } else if (e->button() == Qt::LeftButton) {
        drag_ = Drag::Pending;
    }
}

void TimelineWidget::leaveEvent(QEvent*) { hoverX_.reset(); }

void TimelineWidget::mouseMoveEvent(QMouseEvent* e) {
    const QPoint p = e->position().toPoint();
    if (p.x() >= kLabelWidth)
        hoverX_ = p.x() - kLabelWidth;
    else
        hoverX_.reset();
    if (drag_ == Drag::Pan) {
        const QPoint d = p - pressPos_;
        applyScale(pressScale_.pannedBy(-d.x()));
        setScrollY(pressScrollY_ - d.y());
    } else if (drag_ == Drag::Pending && (p - pressPos_).manhattanLength() >= kDragThresholdPx &&
               pressPos_.x() >= kLabelWidth) {
        drag_ = Drag::Select;
        updateSelectionFromDrag(p);
    } else if (drag_ == Drag::Select) {
        updateSelectionFromDrag(p);
    }
}

void TimelineWidget::mouseReleaseEvent(QMouseEvent* e) {
    const QPoint p = e->position().toPoint();
    if (drag_ == Drag::Pending && e->button() == Qt::LeftButton && model_) {
        const int group = headerGroupAt(p.y());
        const int section = p.y() >= kRulerHeight ? layout_.sectionHeaderAt(p.y() - kRulerHeight + scrollY_) : -1;
        if (section >= 0) {
            // A host's or communicator's header folds its ranks away.
            rankView_.toggleCollapsed(layout_.rankSections()[static_cast<size_t>(section)].key);
            relayout();
        } else if (group >= 0) {
            // A click on a group's title bar folds it to its overlap lane.
            model_->setCollapsed(group, !model_->groups()[static_cast<size_t>(group)].collapsed);
            relayout();
        } else {
            // Clicking an event makes it the selection: F and the panels then
            // follow it, not an older range.
            const EventRef ref = hitTest(p);
            if (ref.valid() && selection_) {
                selection_.reset();
                selectionGroups_.clear();
                emit selectionChanged();
            }
            selectEvent(ref, false);
        }
    } else if (drag_ == Drag::Select) {
        updateSelectionFromDrag(p);
    }
    drag_ = Drag::None;
    unsetCursor();
}

void TimelineWidget::mouseDoubleClickEvent(QMouseEvent* e) {
    const QPoint p = e->position().toPoint();
    if (model_ && p.y() < kRulerHeight && p.x() >= kLabelWidth) {
        addMarker(timeAt(p.x()));  // the ruler pins a timestamp
        return;
    }
    // Zooms to the event under the cursor, whatever range was selected before.
    const EventRef ref = hitTest(p);
    if (!ref.valid()) return;
    if (selection_) {
        selection_.reset();
        selectionGroups_.clear();
        emit selectionChanged();
    }
    selectEvent(ref, false);
    fitEvent(ref);
}

void TimelineWidget::wheelEvent(QWheelEvent* e) {
    const QPoint delta = e->angleDelta();
    const double x = e->position().x() - kLabelWidth;
    const bool overRuler = e->position().y() < kRulerHeight;
    if ((e->modifiers() & Qt::ControlModifier) || overRuler) {
        // Bursts of wheel events make one history entry, not one per notch.
        if (!lastWheelZoom_.isValid() || lastWheelZoom_.elapsed() > 500) history_.push(scale_.range());
        lastWheelZoom_.start();
        const double notches = delta.y() / 120.0;
        zoomBy(std::pow(kWheelZoomStep, notches), std::clamp(x, 0.0, static_cast<double>(eventAreaWidth())));
    } else if ((e->modifiers() & Qt::ShiftModifier) || delta.x() != 0) {
        const int d = delta.x() != 0 ? delta.x() : delta.y();
        panByPixels(-d / 120.0 * eventAreaWidth() * kKeyPanFraction);
    } else {
        setScrollY(scrollY_ - delta.y() / 120 * 3 * layout_.metrics().rowHeight);
    }
    e->accept();
}

void TimelineWidget::keyPressEvent(QKeyEvent* e) {
    const double w = eventAreaWidth();
    // W/S zoom at the mouse when it hovers the events, else at the centre.
    const double anchor = hoverX_ ? *hoverX_ : w / 2;
    switch (e->key()) {
        case Qt::Key_W:
            history_.push(scale_.range());
            zoomBy(kWheelZoomStep, anchor);
            break;
        case Qt::Key_S:
            history_.push(scale_.range());
            zoomBy(1.0 / kWheelZoomStep, anchor);
            break;
        case Qt::Key_A:
            panByPixels(-w * kKeyPanFraction);
            break;
        case Qt::Key_D:
            panByPixels(w * kKeyPanFraction);
            break;
        case Qt::Key_F:
            fitSelection();
            break;
        case Qt::Key_Home:
            fitAll();
            break;
        case Qt::Key_M:
            if (model_) addMarker(timeAt(kLabelWidth + (hoverX_ ? *hoverX_ : w / 2)));
            break;
        case Qt::Key_BracketLeft:
            goToStep(-1);
            break;
        case Qt::Key_BracketRight:
            goToStep(+1);
            break;
        case Qt::Key_Backspace:
            goBack();
            break;
        case Qt::Key_Escape:
            clearSelection();
            break;
        default:
            QWidget::keyPressEvent(e);
            return;
    }
    e->accept();
}

void TimelineWidget::contextMenuEvent(QContextMenuEvent* e) {
    if (!model_) return;
    if (e->pos().y() < kRulerHeight && e->pos().x() >= kLabelWidth) {
        const TimeNs t = timeAt(e->pos().x());
        const auto tolerance = static_cast<TimeNs>(std::ceil(5 * scale_.nsPerPx()));
        QMenu menu(this);
        menu.addAction(tr("Add marker here"), this, [this, t] { addMarker(t); });
        if (markers_.nearest(t, tolerance))
            menu.addAction(tr("Remove this marker"), this, [this, t, tolerance] {
                markers_.removeNear(t, tolerance);
                update();
                emit markersChanged();
            });
        if (!markers_.empty()) menu.addAction(tr("Clear markers"), this, [this] { clearMarkers(); });
        menu.exec(e->globalPos());
        return;
    }
    const int contentY = e->pos().y() - kRulerHeight + scrollY_;
    const LaneSlot* slot = layout_.laneAt(contentY);
    const int group = slot ? model_->lane(slot->lane).group : layout_.groupHeaderAt(contentY);
    QMenu menu(this);
    if (selection_) {
        menu.addAction(tr("Zoom to selection"), this, [this] { fitSelection(); });
    }
    if (group >= 0) {
        const bool collapsed = model_->groups()[static_cast<size_t>(group)].collapsed;
        menu.addAction(collapsed ? tr("Expand group") : tr("Collapse group"), this, [this, group, collapsed] {
            model_->setCollapsed(group, !collapsed);
            relayout();
        });
    }
    if (slot) {
        const int lane = slot->lane;
        menu.addAction(tr("Hide lane"), this, [this, lane] {
            model_->setHidden(lane, true);
            relayout();
        });
        menu.addAction(tr("Move lane up"), this, [this, lane] {
            model_->moveLane(lane, -1);
            relayout();
        });
        menu.addAction(tr("Move lane down"), this, [this, lane] {
            model_->moveLane(lane, 1);
            relayout();
        });
    }
    menu.addAction(tr("Show all lanes"), this, [this] {
        model_->showAllLanes();
        relayout();
    });
    menu.exec(e->globalPos());
}

bool TimelineWidget::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(e);
        const QString text = tooltipAt(help->pos());
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), text, this);
        return true;
    }
    return QWidget::event(e);
}

void TimelineWidget::setHangFocus(std::shared_ptr<const HangFocus> focus) {
    hangFocus_ = std::move(focus);
    update();
}

QString TimelineWidget::tooltipAt(QPoint p) const {
    if (!model_ || p.x() < kLabelWidth) return {};
    if (p.y() < kRulerHeight) {
        const auto tolerance = static_cast<TimeNs>(std::ceil(5 * scale_.nsPerPx()));
        if (const auto i = markers_.nearest(timeAt(p.x()), tolerance))
            return QString::fromStdString(markers_.label(*i));
        return tr("drag: measure across all devices · double-click: pin a marker · right-click: markers");
    }
    const LaneSlot* slot = layout_.laneAt(p.y() - kRulerHeight + scrollY_);
    if (!slot) return {};
    const int row = (p.y() - kRulerHeight + scrollY_ - slot->y) / std::max(1, slot->rowHeight);
    // A call that never completed is waiting, whatever its kernel's length says.
    if (const HangWait* w = hangFocus_ ? hangFocus_->waitAt(slot->group, timeAt(p.x())) : nullptr;
        w && (slot->rankRow || model_->lane(slot->lane).kind == LaneKind::Overlap))
        return QString::fromStdString(w->text);
    if (slot->rankRow) {
        // The row's label may be one of those left out: the tooltip always names the rank.
        const RankIdentity* id = rankView_.identityOf(slot->group);
        const std::string what = hoverText(*model_, analysis_.get(), slot->lane, row, scale_, p.x() - kLabelWidth);
        return QString::fromStdString((id ? rankRowLabel(*id, true, true) : std::string()) +
                                      (what.empty() ? "" : "\n" + what));
    }
    std::string text = hoverText(*model_, analysis_.get(), slot->lane, row, scale_, p.x() - kLabelWidth);
    if (const HangWait* w = hangFocus_ ? hangFocus_->waitOf(hitTest(p)) : nullptr) text += "\n" + w->text;
    return QString::fromStdString(text);
}

TimelineView TimelineWidget::view(const Viewport& vp) const {
    TimelineView v;
    v.model = model_.get();
    v.layout = &layout_;
    v.vp = vp;
    v.width = width();
    v.height = height();
    v.labelWidth = kLabelWidth;
    v.rulerHeight = kRulerHeight;
    v.scrollY = scrollY_;
    v.selection = selection_;
    v.selectionGroups = &selectionGroups_;
    v.selectedEvent = selectedEvent_;
    v.matches = &matches_;
    v.peerLinks = &peerLinks_;
    v.flows = &flows_;
    v.findHits = findHits_.get();
    v.markers = &markers_;
    v.rankView = &rankView_;
    return v;
}

void TimelineWidget::resizeEvent(QResizeEvent*) {
    // Keep the time range, spread over the new width.
    scale_ = scale_.withWidth(eventAreaWidth());
    // One row per rank sizes its rows to the page.
    if (hostRowsChanged() || rankView_.oneRow()) relayout();
    setScrollY(scrollY_);
}

void TimelineWidget::paintEvent(QPaintEvent*) {
    const auto t0 = std::chrono::steady_clock::now();
    QPainter p(this);
    const Viewport vp = viewport();
    // Zoomed out, a frame is tens of thousands of small solid rectangles; each
    // QPainter::fillRect call costs more than filling its pixels, so on a
    // plain (dpr 1) device they are written straight into an opaque layer and
    // the layer is drawn once. On high-dpi screens QPainter does the scaling.
    const bool rawLayer = devicePixelRatioF() == 1.0;
    if (rawLayer) {
        if (layer_.size() != size()) layer_ = QImage(size(), QImage::Format_ARGB32_Premultiplied);
        layer_.fill(qcolour(palette::kBackground));
    } else {
        p.fillRect(rect(), qcolour(palette::kBackground));
    }
    const auto fill = [&](QRect r, uint32_t rgb) {
        if (rawLayer)
            fillLayer(r, rgb);
        else
            p.fillRect(r, qcolour(rgb));
    };
    if (model_) {
        // Lane stripes and group title bars under everything else.
        bool odd = false;
        for (const LaneSlot& s : layout_.lanes()) {
            const int y = static_cast<int>(vp.top) + s.y;
            if (odd) fill(QRect(kLabelWidth, y, width() - kLabelWidth, s.height), palette::kLaneStripe);
            odd = !odd;
        }
        for (const GroupSlot& g : layout_.groups()) {
            fill(QRect(0, static_cast<int>(vp.top) + g.y, width(), layout_.metrics().headerHeight), palette::kHeader);
        }
        // Tick grid lines, under the ruler's ticks (only with a capture, like the ruler).
        for (const Tick& t : makeRuler(scale_).ticks) {
            fill(QRect(kLabelWidth + static_cast<int>(t.x), kRulerHeight, 1, height() - kRulerHeight), palette::kGrid);
        }
        if (!cacheValid_ || cachedRange_ != scale_.range() || cachedSize_ != size() || cachedScrollY_ != scrollY_) {
            cachedList_.clear();
            FrameBuilder(*model_, layout_).build(vp, cachedList_);
            cachedRange_ = scale_.range();
            cachedSize_ = size();
            cachedScrollY_ = scrollY_;
            cacheValid_ = true;
        }
        const DrawList& list = cachedList_;
        for (const DrawRect& r : list.hatches) {
            const QRect q(qRound(r.x), qRound(r.y), std::max(1, qRound(r.w)), qRound(r.h));
            if (rawLayer) {
                hatchLayer(q, r.rgb);
            } else {
                p.fillRect(q, qcolour(palette::kBubbleTint));
                p.fillRect(q, QBrush(qcolour(r.rgb), Qt::BDiagPattern));
            }
        }
        for (const DrawRect& r : list.rects) {
            fill(QRect(qRound(r.x), qRound(r.y), std::max(1, qRound(r.w)), qRound(r.h)), r.rgb);
        }
        if (rawLayer) drawLayer(p);
        const QFontMetrics fm(font());
        for (const DrawText& t : list.texts) {
            p.setPen(qcolour(t.rgb));
            const QString text = fm.elidedText(QString::fromStdString(t.text), Qt::ElideRight, static_cast<int>(t.w));
            if (text.size() > 1) p.drawText(QRectF(t.x, t.y, t.w, t.h), Qt::AlignVCenter | Qt::AlignLeft, text);
        }
        paintOverlays(p, view(vp));
        if (hangFocus_) paintHangWaits(p, view(vp), *hangFocus_);
    } else if (rawLayer) {
        drawLayer(p);
    }
    const TimelineView v = view(vp);
    if (!model_) paintEmptyHint(p, v);
    paintLabels(p, v, font());
    paintRuler(p, v);
    paintMarkers(p, v);
    lastPaintMs_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

void TimelineWidget::drawLayer(QPainter& p) {
    // The layer is opaque: a plain copy, no blending.
    p.setCompositionMode(QPainter::CompositionMode_Source);
    p.drawImage(0, 0, layer_);
    p.setCompositionMode(QPainter::CompositionMode_SourceOver);
}

void TimelineWidget::hatchLayer(QRect r, uint32_t lineRgb) {
    r = r.intersected(layer_.rect());
    if (r.isEmpty()) return;
    const QRgb tint = 0xFF000000u | palette::kBubbleTint, line = 0xFF000000u | lineRgb;
    constexpr int period = palette::kBubbleHatchPeriod;
    uchar* base = layer_.bits();
    const qsizetype stride = layer_.bytesPerLine();
    for (int y = r.top(); y <= r.bottom(); ++y) {
        auto* row = reinterpret_cast<QRgb*>(base + y * stride);
        std::fill_n(row + r.left(), r.width(), tint);
        // The first x of the row on a line (palette::bubbleHatchAt), then every period.
        for (int x = r.left() + (period - (r.left() + y) % period) % period; x <= r.right(); x += period) row[x] = line;
    }
}

void TimelineWidget::fillLayer(QRect r, uint32_t rgb) {
    r = r.intersected(layer_.rect());
    if (r.isEmpty()) return;
    const QRgb value = 0xFF000000u | rgb;
    // bits() once per rectangle: scanLine() per row would check for a detach each time.
    uchar* base = layer_.bits();
    const qsizetype stride = layer_.bytesPerLine();
    for (int y = r.top(); y <= r.bottom(); ++y) {
        auto* line = reinterpret_cast<QRgb*>(base + y * stride);
        std::fill_n(line + r.left(), r.width(), value);
    }
}

}  // namespace osc::gui
