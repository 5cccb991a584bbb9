// The what-if panel's plot without Qt: which series to draw from a what-if
// result (analyzer/whatif) and where, in pixels, for a given panel size.
// Predicted step time against bucket size (log scale), with the two bounds
// and the observed step; the widget (widgets/whatif_panel.h) only paints it.
#pragma once

#include "analyzer/whatif/whatif.h"

#include <optional>
#include <string>
#include <vector>

namespace osc::gui {

struct WhatIfSeries {
    std::string label;  // "median over 8 devices" or the device
    std::vector<whatif::ScenarioResult> scenarios;
    std::optional<whatif::ObservedResult> observed;
    std::optional<double> selfCheck;
    // How well the cost line fits the capture's collectives, as `overlapscope
    // whatif` prints it: "cost fit: 20.0 µs + 0.0400 ns/byte (25.0 GB/s) per
    // AllReduce, fitted from 6 samples of 2 sizes, r² 1.00", with a refit
    // through zero or a default alpha said; over several devices their r² range.
    std::string fit;
};

// The median over devices when several are modelled, else the one modelled
// device; nullopt when none is, or when the model does not fit the capture
// (whatif::modelMisfit: `overlapscope whatif` refuses it), `why` then says so.
std::optional<WhatIfSeries> whatIfSeries(const whatif::WhatIfResult& result, std::string* why = nullptr);

struct PlotPoint {
    double x = 0, y = 0;
};
struct PlotTick {
    double pos = 0;  // x or y pixel
    std::string label;
};

struct WhatIfPlot {
    double left = 0, top = 0, right = 0, bottom = 0;  // the plot area
    std::vector<PlotPoint> step;                      // predicted step time per bucket size
    std::vector<PlotPoint> noOverlap;                 // bound: every collective after the compute
    std::vector<PlotPoint> perfect;                   // bound: all bytes back to back from the first gradient
    std::optional<PlotPoint> observed;                // the capture's own bucket size and step
    int best = -1;                                    // index into step
    std::vector<PlotTick> xTicks, yTicks;
    std::string title, caption;
    std::string fit;  // the series' fit line, under the caption
    // Axis titles with units: the x one centred under the tick labels, the
    // y one written upwards left of them.
    std::string xTitle = "DDP bucket size, MiB (log scale)", yTitle = "step time, ms";
    PlotPoint xTitleAt, yTitleAt;  // centres
};

// Lays the series out in a width x height panel. Bucket sizes on a log2
// axis; step milliseconds on a linear axis spanning every line.
WhatIfPlot layoutWhatIfPlot(const WhatIfSeries& series, int width, int height);

}  // namespace osc::gui
