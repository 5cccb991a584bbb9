#include "gui/model/overview.h"

#include "analyzer/metrics/intervals.h"

namespace osc::gui {

Overview buildOverview(const TimelineModel& model, ViewRange range, int columns) {
    Overview out;
    out.range = range;
    if (columns <= 0 || range.length() <= 0) return out;
    out.columns.resize(static_cast<size_t>(columns));
    const TimeScale scale(range, columns);
    int devices = 0;
    for (const DeviceGroup& g : model.groups()) {
        if (g.device < 0) continue;
        ++devices;
        // Walkers, not a binary search per column: a 1,024-rank job is
        // millions of column boundaries each time the window opens one.
        CoverageWalker compute(g.coverage.compute);
        CoverageWalker hidden(g.coverage.overlap);
        CoverageWalker exposed(g.coverage.exposedComm);
        TimeNs t0 = scale.toTime(0);
        TimeNs c0 = compute.coveredBefore(t0), h0 = hidden.coveredBefore(t0), e0 = exposed.coveredBefore(t0);
        for (int x = 0; x < columns; ++x) {
            const TimeNs t1 = scale.toTime(x + 1.0);
            const TimeNs c1 = compute.coveredBefore(t1), h1 = hidden.coveredBefore(t1), e1 = exposed.coveredBefore(t1);
            const double len = static_cast<double>(std::max<TimeNs>(1, t1 - t0));
            OverviewColumn& c = out.columns[static_cast<size_t>(x)];
            c.compute += static_cast<float>(static_cast<double>(c1 - c0) / len);
            c.hidden += static_cast<float>(static_cast<double>(h1 - h0) / len);
            c.exposed += static_cast<float>(static_cast<double>(e1 - e0) / len);
            t0 = t1;
            c0 = c1;
            h0 = h1;
            e0 = e1;
        }
    }
    if (devices > 1)
        for (OverviewColumn& c : out.columns) {
            c.compute /= static_cast<float>(devices);
            c.hidden /= static_cast<float>(devices);
            c.exposed /= static_cast<float>(devices);
        }
    return out;
}

}  // namespace osc::gui
