#include "gui/render/rank_row.h"

#include "gui/render/palette.h"

#include <array>
#include <cmath>

namespace osc::gui {

void buildRankRow(const DeviceGroup& g, const Viewport& vp, float y, float h, DrawList& out) {
    const TimeScale& s = vp.scale;
    const int width = static_cast<int>(std::ceil(s.width()));
    constexpr std::array<uint32_t, 4> kColours = {palette::kCompute, palette::kOverlap, palette::kExposed,
                                                  palette::kExposedWait};
    // Runs of columns with the same stacked heights become one rectangle per part.
    std::array<int, 4> run{}, cur{};
    int runStart = 0;
    auto flush = [&](int x) {
        if (x > runStart) {
            float bottom = y + h;
            for (size_t k = 0; k < run.size(); ++k) {
                if (run[k] == 0) continue;
                bottom -= static_cast<float>(run[k]);
                out.rects.push_back({vp.left + static_cast<float>(runStart), bottom, static_cast<float>(x - runStart),
                                     static_cast<float>(run[k]), kColours[k]});
            }
        }
        runStart = x;
    };
    CoverageWalker either(g.coverage.computeOrComm), comm(g.coverage.comm), overlap(g.coverage.overlap),
        exposed(g.coverage.exposedComm), waiting(g.exposedWait);
    TimeNs t0 = s.toTime(0);
    TimeNs u0 = either.coveredBefore(t0), m0 = comm.coveredBefore(t0), o0 = overlap.coveredBefore(t0),
           e0 = exposed.coveredBefore(t0), w0 = waiting.coveredBefore(t0);
    for (int x = 0; x < width; ++x) {
        const TimeNs t1 = s.toTime(x + 1.0);
        const TimeNs u1 = either.coveredBefore(t1), m1 = comm.coveredBefore(t1), o1 = overlap.coveredBefore(t1),
                     e1 = exposed.coveredBefore(t1), w1 = waiting.coveredBefore(t1);
        // C ∖ M = (C ∪ M) ∖ M; exposed waiting lies inside M ∖ C.
        const TimeNs wait = std::min(w1 - w0, e1 - e0);
        const std::array<TimeNs, 4> ns = {(u1 - u0) - (m1 - m0), o1 - o0, (e1 - e0) - wait, wait};
        const double len = static_cast<double>(std::max<TimeNs>(1, t1 - t0));
        int used = 0;
        for (size_t k = 0; k < ns.size(); ++k) {
            const double share = static_cast<double>(std::max<TimeNs>(0, ns[k])) / len;
            int px = static_cast<int>(std::lround(share * h));
            if (share > 0 && px == 0) px = 1;  // anything present stays visible
            cur[k] = std::min(px, static_cast<int>(h) - used);
            used += cur[k];
        }
        if (cur != run) {
            flush(x);
            run = cur;
        }
        u0 = u1, m0 = m1, o0 = o1, e0 = e1, w0 = w1, t0 = t1;
    }
    flush(width);
}

}  // namespace osc::gui
