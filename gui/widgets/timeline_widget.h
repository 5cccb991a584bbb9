// The timeline: paints a DrawList built by FrameBuilder and turns mouse and
// keyboard input into view changes, selections and clicks. It owns the view
// state (time scale, vertical scroll, selection), not the data.
#pragma once

#include "gui/model/flows.h"
#include "gui/model/kernel_links.h"
#include "gui/model/lane_layout.h"
#include "gui/model/markers.h"
#include "gui/model/rank_groups.h"
#include "gui/model/saved_layout.h"
#include "gui/model/step_navigation.h"
#include "gui/model/time_scale.h"
#include "gui/model/timeline_model.h"
#include "gui/model/view_history.h"
#include "gui/render/frame_builder.h"

#include <QElapsedTimer>
#include <QImage>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

namespace osc::gui {

class TimelineWidget : public QWidget {
    Q_OBJECT
public:
    static constexpr int kLabelWidth = 240;
    static constexpr int kRulerHeight = 26;
    static constexpr double kWheelZoomStep = 0.8;   // span factor per wheel notch / W press
    static constexpr double kKeyPanFraction = 0.1;  // A/D pan by this share of the span
    static constexpr int kDragThresholdPx = 4;
    static constexpr double kFitMargin = 0.02;  // Fit all: 2% of the capture on each side

    explicit TimelineWidget(QWidget* parent = nullptr);

    void setModel(std::shared_ptr<TimelineModel> model, std::shared_ptr<const Analysis> analysis = nullptr);
    TimelineModel* model() const { return model_.get(); }
    const Analysis* analysis() const { return analysis_.get(); }
    const std::vector<Flow>& flows() const { return flows_; }

    ViewRange viewRange() const { return scale_.range(); }
    TimeScale scale() const { return scale_; }
    // Sets the visible time range; `remember` lets Backspace come back here.
    void setViewRange(ViewRange r, bool remember = true);
    void fitAll();
    // The job's steps with a margin (what a capture opens at: a launcher
    // process or setup phase before them would squeeze them to a sliver);
    // everything when the capture has no steps.
    void fitSteps();
    // The next (direction > 0) or previous step, fitted; false when there is none.
    bool goToStep(int direction);
    const std::vector<JobStep>& jobSteps() const { return steps_; }
    void fitSelection();          // the range selection, else the selected event, else everything
    void fitEvent(EventRef ref);  // the event with a 10% margin on each side
    const ViewLimits& limits() const { return limits_; }
    // Replaces the limits setModel set (a timeline that follows another's view).
    void setLimits(const ViewLimits& limits) { limits_ = limits; }
    bool goBack();
    void zoomBy(double factor, double anchorX);  // anchorX in event-area pixels
    void panByPixels(double dx);

    const LaneLayout& layout() const { return layout_; }
    Viewport viewport() const;
    int eventAreaWidth() const { return std::max(1, width() - kLabelWidth); }
    int scrollY() const { return scrollY_; }
    int maxScrollY() const;
    int pageHeight() const { return std::max(1, height() - kRulerHeight); }
    void setScrollY(int y);
    // Scrolls so that a group's title bar is at the top; unfolds the host or
    // communicator header it is under, but keeps the group itself collapsed.
    void revealGroup(int group);
    // Makes a lane shown: unfolds the host or communicator header its group
    // is under, expands its group, unhides it, turns the CPU lanes on for a
    // CPU lane. True when something changed.
    bool revealLane(int lane);
    // Call after collapsing, hiding or moving lanes in the model.
    void relayout();

    // Many ranks (rank_groups.h): grouped under host or communicator headers
    // (a click on one folds it), or one thin row per rank sized to the page.
    const RankView& rankView() const { return rankView_; }
    void setRankGrouping(RankGrouping grouping);
    void setOneRowPerRank(bool on);
    // The rank view a file's saved layout had (or the default: no grouping).
    void restoreRankView(const SavedLayout& layout);

    // Pinned timestamps: M at the mouse, a double-click on the ruler, or the
    // ruler's context menu.
    const Markers& markers() const { return markers_; }
    void addMarker(TimeNs t);
    void clearMarkers();
    // Every device group: what a drag on the ruler measures.
    std::vector<int> deviceGroups() const;

    std::optional<ViewRange> selection() const { return selection_; }
    const std::vector<int>& selectionGroups() const { return selectionGroups_; }
    void setSelection(ViewRange r, std::vector<int> groups);
    void clearSelection();

    EventRef selectedEvent() const { return selectedEvent_; }
    void selectEvent(EventRef ref, bool reveal);
    // Outlines the hits in view; nullptr clears them.
    void setFindHits(std::shared_ptr<const struct FindResult> hits);
    const FindResult* findHits() const { return findHits_.get(); }

    // A hang found in the capture (hang_view.h): its waits and stuck ranks
    // drawn over the lanes and named in the tooltips; nullptr clears it.
    void setHangFocus(std::shared_ptr<const struct HangFocus> focus);
    const HangFocus* hangFocus() const { return hangFocus_.get(); }

    // Widget x of a time, and the time at a widget x (event area).
    double xOf(TimeNs t) const { return kLabelWidth + scale_.toX(t); }
    TimeNs timeAt(double widgetX) const { return scale_.toTime(widgetX - kLabelWidth); }
    // Widget y of a lane's top edge, or -1 when the lane is not shown.
    int laneY(int lane) const;

    // Forgets the cached draw list (the bench measures uncached frames).
    void invalidateGeometry() { cacheValid_ = false; }

    // Paint time of the last frame, for the bench and a status-bar readout.
    double lastPaintMs() const { return lastPaintMs_; }

signals:
    void viewRangeChanged(osc::gui::ViewRange range);
    void modelChanged();
    // The vertical scroll position, its range or the page changed.
    void scrollChanged();
    void selectionChanged();
    void eventSelected(osc::gui::EventRef ref);
    void markersChanged();
    // Lanes were collapsed, hidden, moved or grouped: what a saved layout keeps changed.
    void layoutChanged();

protected:
    void paintEvent(QPaintEvent*) override;
    void resizeEvent(QResizeEvent*) override;
    void mousePressEvent(QMouseEvent*) override;
    void mouseMoveEvent(QMouseEvent*) override;
    void mouseReleaseEvent(QMouseEvent*) override;
    void mouseDoubleClickEvent(QMouseEvent*) override;
    void wheelEvent(QWheelEvent*) override;
    void keyPressEvent(QKeyEvent*) override;
    void contextMenuEvent(QContextMenuEvent*) override;
    bool event(QEvent*) override;
    void leaveEvent(QEvent*) override;

private:
    // Unfolds the folded host or communicator header holding `group`; true when one was folded.
    bool unfoldSectionOf(int group);
    enum class Drag { None, Pending, Select, Pan };

    void applyScale(TimeScale s);
    // Whether a CPU lane shows a different number of rows at the current zoom.
    bool hostRowsChanged() const;
    EventRef hitTest(QPoint p) const;
    // The group whose title bar (its own, or the one pinned under the ruler) is at widget y, or -1.
    int headerGroupAt(int y) const;
    QString tooltipAt(QPoint p) const;
    std::vector<int> groupsBetween(int y0, int y1) const;
    void updateSelectionFromDrag(QPoint p);
    struct TimelineView view(const Viewport& vp) const;
    // Solid fill straight into layer_ (clipped): the fast path of paintEvent.
    void fillLayer(QRect r, uint32_t rgb);
    // A pipeline bubble into layer_: the tint, crossed by lines of `lineRgb`.
    void hatchLayer(QRect r, uint32_t lineRgb);
    void drawLayer(class QPainter& p);

    std::shared_ptr<TimelineModel> model_;
    RankView rankView_;
    LaneLayout layout_;
    TimeScale scale_;
    ViewHistory history_;
    ViewLimits limits_;
    int scrollY_ = 0;

    std::optional<ViewRange> selection_;
    std::vector<int> selectionGroups_;
    Markers markers_;
    EventRef selectedEvent_;
    std::vector<EventRef> matches_;    // the selected collective, or send/receive partners, on other ranks
    std::vector<PeerLink> peerLinks_;  // send -> receive arrows of the selected kernel
    std::vector<Flow> flows_;          // launch -> GPU work arrows of the selected event
    std::shared_ptr<const Analysis> analysis_;
    std::vector<JobStep> steps_;  // of analysis_, in time order
    std::shared_ptr<const FindResult> findHits_;
    std::shared_ptr<const HangFocus> hangFocus_;

    Drag drag_ = Drag::None;
    bool pressOnRuler_ = false;  // a drag from the ruler measures on every device
    QPoint pressPos_;
    TimeScale pressScale_;
    int pressScrollY_ = 0;
    QElapsedTimer lastWheelZoom_;
    std::optional<double> hoverX_;  // event-area x of the mouse while it hovers
    double lastPaintMs_ = 0;
    // The draw list of the last frame, replayed while only overlays change
    // (dragging a selection, hovering, selecting an event): Qt Creator's
    // geometry cache keyed on what the list depends on.
    DrawList cachedList_;
    ViewRange cachedRange_;
    QSize cachedSize_;
    int cachedScrollY_ = -1;
    bool cacheValid_ = false;
    QImage layer_;  // opaque frame buffer for the solid rectangles, reused between frames
};

}  // namespace osc::gui
