// The labels of the many-ranks view (issue 30 item 3b, 3c), painted over
// the label column by paintLabels: the headers of hosts or communicators
// (across the whole width, with their fold arrow) and the rank of each thin
// row, every row when they fit and one every N rows otherwise, as the heat
// map does, so no two labels are ever drawn over each other.
#pragma once

#include "gui/widgets/timeline_painter.h"

class QFont;
class QPainter;

namespace osc::gui {

void paintRankLabels(QPainter& p, const TimelineView& v, const QFont& font);

}  // namespace osc::gui
