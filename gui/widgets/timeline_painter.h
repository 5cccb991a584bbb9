// The parts of a timeline frame painted with QPainter on top of the draw
// list: lane labels (with the group header pinned while its lanes scroll),
// the ruler, the selection, find hits, collective matches, send -> receive
// arrows between partner kernels and flow arrows,
// and the hint shown before anything is open. Plain functions of what the
// widget shows, so TimelineWidget keeps to view state and input.
#pragma once

#include "gui/model/flows.h"
#include "gui/model/kernel_find.h"
#include "gui/model/kernel_links.h"
#include "gui/model/lane_layout.h"
#include "gui/render/frame_builder.h"

#include <QString>

#include <optional>
#include <vector>

class QPainter;
class QFont;

namespace osc::gui {

struct TimelineView {
    const TimelineModel* model = nullptr;
    const LaneLayout* layout = nullptr;
    Viewport vp;
    int width = 0, height = 0, labelWidth = 0, rulerHeight = 0, scrollY = 0;
    std::optional<ViewRange> selection;
    const std::vector<int>* selectionGroups = nullptr;
    EventRef selectedEvent;
    const std::vector<EventRef>* matches = nullptr;
    const std::vector<PeerLink>* peerLinks = nullptr;
    const std::vector<Flow>* flows = nullptr;
    const FindResult* findHits = nullptr;
    const class Markers* markers = nullptr;
    const class RankView* rankView = nullptr;
};

// The group whose header is pinned under the ruler (its own header has
// scrolled away while some of its lanes are still in view), or -1.
int pinnedGroup(const TimelineView& v);

void paintOverlays(QPainter& p, const TimelineView& v);
void paintLabels(QPainter& p, const TimelineView& v, const QFont& font);
void paintRuler(QPainter& p, const TimelineView& v);
// Markers: a dashed line each across the lanes, its name and time in the ruler.
void paintMarkers(QPainter& p, const TimelineView& v);
// "Open a capture…" in the middle of an empty timeline.
void paintEmptyHint(QPainter& p, const TimelineView& v);

}  // namespace osc::gui
