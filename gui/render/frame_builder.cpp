#include "gui/render/frame_builder.h"

#include "gui/model/time_ticks.h"
#include "gui/render/palette.h"
#include "gui/render/rank_row.h"

#include <algorithm>
#include <cmath>
#include <thread>

namespace osc::gui {
namespace {

// A folded run being extended column by column; flushed when it breaks.
struct PendingFold {
    bool open = false;
    int x0 = 0, x1 = 0;  // pixel columns [x0, x1)
    int shareLevel = 0;
    uint8_t category = 0;
    size_t count = 0;
};

// Labels of one row. Texts are painted after every rectangle, so labels of
// overlapping events (ranges clamped into the deepest row, a stream whose
// kernels overlap, a long event over a folded block) would be painted over
// each other into an unreadable smear: candidates are collected, and placed
// by priority (events before fold counts), then left to right, only where
// they overlap no label already placed.
class RowLabels {
public:
    RowLabels(DrawList& out, float y, float h) : out_(out), y_(y), h_(h) {}
    ~RowLabels() { commit(); }
    void add(float fx, float fw, uint32_t colour, std::string text, int priority = 1) {
        candidates_.push_back({fx + 3, fw - 6, colour, priority, std::move(text)});
    }

private:
    struct Candidate {
        float x, w;
        uint32_t colour;
        int priority;
        std::string text;
    };
    void commit() {
        std::stable_sort(candidates_.begin(), candidates_.end(), [](const Candidate& a, const Candidate& b) {
            return a.priority != b.priority ? a.priority > b.priority : a.x < b.x;
        });
        std::vector<std::pair<float, float>> placed;  // sorted by start
        for (Candidate& c : candidates_) {
            const float a = c.x, b = c.x + c.w;
            auto it = std::lower_bound(placed.begin(), placed.end(), std::make_pair(a, a));
            const bool hitsNext = it != placed.end() && it->first < b;
            const bool hitsPrev = it != placed.begin() && std::prev(it)->second > a;
            if (hitsNext || hitsPrev) continue;
            placed.insert(it, {a, b});
            out_.texts.push_back({c.x, y_, c.w, h_, c.colour, std::move(c.text)});
        }
    }
    DrawList& out_;
    float y_, h_;
    std::vector<Candidate> candidates_;
};

// An event wide enough to see gets a darker left edge, so kernels that run
// back to back read as several, not one long bar.
constexpr float kEdgeMinPx = 4;

void pushEvent(DrawList& out, float fx, float y, float fw, float h, uint32_t colour) {
    out.rects.push_back({fx, y, fw, h, colour});
    if (fw >= kEdgeMinPx) out.rects.push_back({fx, y, 1, h, palette::edge(colour)});
}

// Few shade levels: neighbouring columns merge into longer blocks, so a dense
// lane costs tens of rectangles instead of one per pixel column.
constexpr int kShareLevels = 4;

}  // namespace

uint32_t FrameBuilder::eventColour(const Lane& lane, const EventRow& row, size_t i) const {
    switch (row.source[i]) {
        case EventSource::Range:
        case EventSource::Step:
        case EventSource::CpuOp:
            return palette::rangeColour(eventLabel(model_, lane, row, i));
        case EventSource::ApiCall:
            return palette::kApiCall;
        default:
            return palette::categoryColour(static_cast<Category>(row.category[i]));
    }
}

void FrameBuilder::build(const Viewport& vp, DrawList& out) const {
    std::vector<const LaneSlot*> visible;
    for (const LaneSlot& slot : layout_.lanes()) {
        const float y = vp.top + static_cast<float>(slot.y);
        if (y + static_cast<float>(slot.height) < vp.clipTop || y > vp.clipBottom) continue;
        visible.push_back(&slot);
    }
    // Lanes are independent and the work is memory-bound, so visible lanes are
    // split across threads (Tracy's parallel Preprocess), then joined in order.
    const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
    if (threads == 1 || visible.size() < 8) {
        for (const LaneSlot* slot : visible) buildLane(*slot, vp, out);
        return;
    }
    std::vector<DrawList> parts(threads);
    std::vector<std::thread> pool;
    const size_t chunk = (visible.size() + threads - 1) / threads;
    for (size_t t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            for (size_t k = t * chunk; k < std::min(visible.size(), (t + 1) * chunk); ++k)
                buildLane(*visible[k], vp, parts[t]);
        });
    }
    for (auto& th : pool) th.join();
    for (DrawList& part : parts) {
        out.hatches.insert(out.hatches.end(), part.hatches.begin(), part.hatches.end());
        out.rects.insert(out.rects.end(), part.rects.begin(), part.rects.end());
        for (DrawText& text : part.texts) out.texts.push_back(std::move(text));
        out.eventsDrawn += part.eventsDrawn;
        out.foldedBlocks += part.foldedBlocks;
    }
}

void FrameBuilder::buildLane(const LaneSlot& slot, const Viewport& vp, DrawList& out) const {
    const float y = vp.top + static_cast<float>(slot.y);
    const Lane& lane = model_.lane(slot.lane);
    if (slot.rankRow) {
        buildRankRow(model_.groups()[static_cast<size_t>(lane.group)], vp, y, static_cast<float>(slot.height), out);
        return;
    }
    if (lane.kind == LaneKind::Overlap) {
        buildCoverageLane(model_.groups()[static_cast<size_t>(lane.group)], vp, y, static_cast<float>(slot.height),
                          out);
        return;
    }
    if (lane.kind == LaneKind::Stream) {
        const StageBubbles& bubbles = model_.groups()[static_cast<size_t>(lane.group)].bubbles;
        if (!bubbles.empty()) buildBubbles(bubbles, vp, y, static_cast<float>(slot.height), out);
    }
    for (size_t r = 0; r < std::min(lane.rows.size(), static_cast<size_t>(slot.rows)); ++r) {
        const float ry = y + static_cast<float>(r) * static_cast<float>(slot.rowHeight);
        buildRow(lane, lane.rows[r], vp, ry + 1, static_cast<float>(slot.rowHeight) - 2, out);
    }
}

void FrameBuilder::buildRow(const Lane& lane, const EventRow& row, const Viewport& vp, float y, float h,
                            DrawList& out) const {
    const TimeScale& s = vp.scale;
    if (const int level = row.summary.levelFor(s.nsPerPx()); level >= 0) {
        buildSummarisedRow(lane, row, level, vp, y, h, out);
        return;
    }
    const ViewRange v = s.range();
    const double width = s.width();
    const TimeNs minNs = std::max<TimeNs>(1, static_cast<TimeNs>(std::ceil(kMinEventPx * s.nsPerPx())));
    const bool isRange = lane.kind == LaneKind::Ranges || lane.kind == LaneKind::Host;
    const uint32_t textColour = isRange ? palette::kText : palette::kTextOnColour;
    RowLabels labels(out, y, h);

    auto emitEvent = [&](size_t i) {
        const double x0 = std::max(0.0, std::floor(s.toX(row.start[i])));
        const double x1 = std::min(width, std::ceil(s.toX(row.end[i])));
        if (x1 <= x0) return;
        const float fx = vp.left + static_cast<float>(x0), fw = static_cast<float>(x1 - x0);
        pushEvent(out, fx, y, fw, h, eventColour(lane, row, i));
        ++out.eventsDrawn;
        if (fw >= kMinLabelPx) {
            labels.add(fx, fw, textColour, eventLabel(model_, lane, row, i));
        }
    };
    PendingFold fold;
    auto flush = [&]() {
        if (!fold.open) return;
        const uint32_t base = isRange ? 0x9AA5B1 : palette::categoryColour(static_cast<Category>(fold.category));
        const double share = static_cast<double>(fold.shareLevel) / kShareLevels;
        const float fx = vp.left + static_cast<float>(fold.x0);
        const float fw = static_cast<float>(fold.x1 - fold.x0);
        out.rects.push_back({fx, y, fw, h, palette::shaded(base, share)});
        ++out.foldedBlocks;
        if (fw >= kMinLabelPx * 1.5) {
            labels.add(fx, fw, palette::kText, formatCount(fold.count) + " ×", 0);
        }
        fold.open = false;
    };

    TimeNs lastBigEnd = INT64_MIN;
    size_t i = row.firstEndingAfter(v.start);
    const size_t n = row.size();
    while (i < n && row.start[i] < v.end) {
        if (row.end[i] - row.start[i] >= minNs) {
            flush();
            emitEvent(i);
            lastBigEnd = std::max(lastBigEnd, row.end[i]);
            ++i;
            continue;
        }
        // Fold every event that starts in this pixel column.
        const int col = static_cast<int>(std::floor(std::max(0.0, s.toX(row.start[i]))));
        const TimeNs colEnd = s.toTime(col + 1.0);
        const size_t j = std::max(i + 1, row.gallopToStart(i + 1, colEnd));
        const TimeNs colStart = std::max(row.start[i], s.toTime(col));
        const double share =
            static_cast<double>(row.durationSum(i, j)) / static_cast<double>(std::max<TimeNs>(1, colEnd - colStart));
        const int level = std::clamp(static_cast<int>(std::lround(share * kShareLevels)), 1, kShareLevels);
        if (fold.open && fold.x1 == col && fold.shareLevel == level && fold.category == row.category[i]) {
            fold.x1 = col + 1;
            fold.count += j - i;
        } else {
            flush();
            fold = {true, col, col + 1, level, row.category[i], j - i};
        }
        // A wide event that starts in the same column as tiny ones must not be
        // swallowed by the fold: draw it on its own (rare, so a scan is fine).
        if (row.endMaxAt(j - 1) > colEnd + minNs && row.endMaxAt(j - 1) > lastBigEnd) {
            for (size_t k = i; k < j; ++k) {
                if (row.end[k] - row.start[k] >= minNs) {
                    flush();
                    emitEvent(k);
                    lastBigEnd = std::max(lastBigEnd, row.end[k]);
                }
            }
        }
        i = j;
    }
    flush();
}

void FrameBuilder::buildSummarisedRow(const Lane& lane, const EventRow& row, int level, const Viewport& vp, float y,
                                      float h, DrawList& out) const {
    const TimeScale& s = vp.scale;
    const ViewRange v = s.range();
    const double width = s.width();
    const RowSummary& sum = row.summary;
    const TimeNs w = sum.bucketWidth(level);
    const std::vector<SummaryCell>& cells = sum.cells(level);
    const bool isRange = lane.kind == LaneKind::Ranges || lane.kind == LaneKind::Host;
    const auto bucketOf = [&](TimeNs t) {
        return static_cast<long>(std::clamp<TimeNs>((t - sum.origin()) / w, 0, static_cast<TimeNs>(cells.size())));
    };
    // Buckets are half a pixel to a pixel wide; neighbours with the same shade
    // and category merge into one block, and each block ends where the
    // previous one did so that rounding never stacks two blocks on a column.
    PendingFold fold;
    int drawnTo = 0;
    RowLabels labels(out, y, h);
    auto flush = [&]() {
        if (!fold.open) return;
        const uint32_t base = isRange ? 0x9AA5B1 : palette::categoryColour(static_cast<Category>(fold.category));
        const float fx = vp.left + static_cast<float>(fold.x0), fw = static_cast<float>(fold.x1 - fold.x0);
        out.rects.push_back({fx, y, fw, h, palette::shaded(base, static_cast<double>(fold.shareLevel) / kShareLevels)});
        ++out.foldedBlocks;
        if (fw >= kMinLabelPx * 1.5) {
            labels.add(fx, fw, palette::kText, formatCount(fold.count) + " ×", 0);
        }
        drawnTo = fold.x1;
        fold.open = false;
    };
    const long last = std::min<long>(static_cast<long>(cells.size()), bucketOf(v.end) + 1);
    for (long k = bucketOf(v.start); k < last; ++k) {
        const SummaryCell& c = cells[static_cast<size_t>(k)];
        const float total = c.total();
        if (total <= 0) {
            flush();
            continue;
        }
        const TimeNs b0 = sum.origin() + k * w;
        const int x0 = std::max({0, drawnTo, static_cast<int>(std::lround(s.toX(b0)))});
        int x1 = std::min(static_cast<int>(std::ceil(width)), static_cast<int>(std::lround(s.toX(b0 + w))));
        const double share = std::min(1.0, static_cast<double>(total) / static_cast<double>(w));
        const int shade = std::clamp(static_cast<int>(std::lround(share * kShareLevels)), 1, kShareLevels);
        const uint8_t cat = c.dominant();
        if (fold.open && fold.shareLevel == shade && fold.category == cat && x0 <= fold.x1) {
            fold.x1 = std::max(fold.x1, x1);
            fold.count += c.count;
            continue;
        }
        flush();
        const int start = std::max(x0, drawnTo);
        x1 = std::max(x1, start + 1);  // anything present stays at least a pixel wide
        if (start >= static_cast<int>(std::ceil(width))) break;
        fold = {true, start, x1, shade, cat, c.count};
    }
    flush();

    const RowSummary::LongEvents& longs = sum.longEvents(level);
    const uint32_t textColour = isRange ? palette::kText : palette::kTextOnColour;
    auto i =
        static_cast<size_t>(std::upper_bound(longs.endMax.begin(), longs.endMax.end(), v.start) - longs.endMax.begin());
    for (; i < longs.index.size() && row.start[longs.index[i]] < v.end; ++i) {
        const size_t e = longs.index[i];
        if (row.end[e] <= v.start) continue;
        const double x0 = std::max(0.0, std::floor(s.toX(row.start[e])));
        const double x1 = std::min(width, std::ceil(s.toX(row.end[e])));
        if (x1 <= x0) continue;
        const float fx = vp.left + static_cast<float>(x0), fw = static_cast<float>(x1 - x0);
        pushEvent(out, fx, y, fw, h, eventColour(lane, row, e));
        ++out.eventsDrawn;
        if (fw >= kMinLabelPx) labels.add(fx, fw, textColour, eventLabel(model_, lane, row, e));
    }
}

void FrameBuilder::buildBubbles(const StageBubbles& b, const Viewport& vp, float y, float h, DrawList& out) const {
    const TimeScale& s = vp.scale;
    const int width = static_cast<int>(std::ceil(s.width()));
    // Rounded, not floored and ceiled: a gap between two kernels narrower
    // than a pixel is not shaded, so zoomed out the bubble shows where the
    // stage really idles, not between every pair of kernels.
    const auto column = [&](TimeNs t) { return static_cast<int>(std::clamp<double>(std::round(s.toX(t)), 0, width)); };
    int x0 = 0, x1 = 0;  // the open run of columns
    auto flush = [&] {
        if (x1 > x0)
            out.hatches.push_back(
                {vp.left + static_cast<float>(x0), y, static_cast<float>(x1 - x0), h, palette::kBubbleHatch});
    };
    size_t i = b.firstEndingAfter(s.range().start);
    while (i < b.intervals.size() && b.intervals[i].start < s.range().end) {
        const int a = std::max(column(b.intervals[i].start), x1), e = column(b.intervals[i].end);
        if (e > a) {
            if (a > x1) {
                flush();
                x0 = a;
            }
            x1 = e;
        }
        // Intervals that end before the middle of column m start no later
        // than this one and round to no column past m: none adds anything.
        // Skipping them by binary search makes a zoomed-out frame cost per
        // column, not per interval (each visit moves on by a column).
        const int m = std::max(x1, a);
        i = std::max(i + 1, b.firstEndingAfter(s.toTime(m + 0.5) - 2));
    }
    flush();
}

void FrameBuilder::buildCoverageLane(const DeviceGroup& g, const Viewport& vp, float y, float h, DrawList& out) const {
    const TimeScale& s = vp.scale;
    const int width = static_cast<int>(std::ceil(s.width()));
    const float inner = h - 2;
    if (g.coverage.comm.total() == 0) {
        // Say so, rather than leave an empty lane to be read as "all hidden".
        out.texts.push_back({vp.left + 6, y, 400, h, palette::kEmptyText,
                             "no communication on this GPU (no NCCL kernels or peer copies)"});
        return;
    }
    // Runs of columns with the same stacked heights become one rectangle each.
    // Stacked from the bottom: hidden (C∩M), exposed transfer, exposed waiting.
    int runStart = 0, runO = 0, runX = 0, runW = 0;
    auto flush = [&](int x) {
        if (x > runStart && (runO > 0 || runX > 0 || runW > 0)) {
            const float fx = vp.left + static_cast<float>(runStart), fw = static_cast<float>(x - runStart);
            const float bottom = y + 1 + inner;
            if (runO > 0)
                out.rects.push_back(
                    {fx, bottom - static_cast<float>(runO), fw, static_cast<float>(runO), palette::kOverlap});
            if (runX > 0)
                out.rects.push_back(
                    {fx, bottom - static_cast<float>(runO + runX), fw, static_cast<float>(runX), palette::kExposed});
            if (runW > 0)
                out.rects.push_back({fx, bottom - static_cast<float>(runO + runX + runW), fw, static_cast<float>(runW),
                                     palette::kExposedWait});
        }
        runStart = x;
    };
    TimeNs t0 = s.toTime(0);
    CoverageWalker overlap(g.coverage.overlap);
    CoverageWalker exposed(g.coverage.exposedComm);
    CoverageWalker waiting(g.exposedWait);
    TimeNs o0 = overlap.coveredBefore(t0), e0 = exposed.coveredBefore(t0), w0 = waiting.coveredBefore(t0);
    for (int x = 0; x < width; ++x) {
        const TimeNs t1 = s.toTime(x + 1.0);
        int oh = 0, xh = 0, wh = 0;
        const TimeNs o1 = overlap.coveredBefore(t1), e1 = exposed.coveredBefore(t1), w1 = waiting.coveredBefore(t1);
        const TimeNs on = o1 - o0, wn = std::min(w1 - w0, e1 - e0), en = e1 - e0 - wn;
        o0 = o1;
        e0 = e1;
        w0 = w1;
        if (on > 0 || en > 0 || wn > 0) {
            const double len = static_cast<double>(std::max<TimeNs>(1, t1 - t0));
            const double o = static_cast<double>(on) / len;
            const double e = static_cast<double>(en) / len;
            const double w = static_cast<double>(wn) / len;
            oh = static_cast<int>(std::lround(o * inner));
            xh = static_cast<int>(std::lround(e * inner));
            wh = static_cast<int>(std::lround(w * inner));
            // Anything present stays visible at least one pixel high.
            if (o > 0 && oh == 0) oh = 1;
            if (e > 0 && xh == 0) xh = 1;
            if (w > 0 && wh == 0) wh = 1;
        }
        if (oh != runO || xh != runX || wh != runW) {
            flush(x);
            runO = oh;
            runX = xh;
            runW = wh;
        }
        t0 = t1;
    }
    flush(width);
}

std::optional<DrawRect> FrameBuilder::eventRect(const Viewport& vp, EventRef ref) const {
    if (!ref.valid()) return std::nullopt;
    const LaneSlot* slot = layout_.slotOf(ref.lane);
    // One row per rank: an event of the device is outlined on its row.
    if (!slot) slot = layout_.rankRowOf(model_.lane(ref.lane).group);
    if (!slot) return std::nullopt;
    const EventRow& row = model_.lane(ref.lane).rows[static_cast<size_t>(ref.row)];
    const double x0 = std::floor(vp.scale.toX(row.start[ref.index]));
    const double x1 = std::max(x0 + 1, std::ceil(vp.scale.toX(row.end[ref.index])));
    // A row not shown at this zoom (CPU lanes zoomed out): on the last one that is.
    const int shownRow = std::min(ref.row, slot->rows - 1);
    const float y = vp.top + static_cast<float>(slot->y + shownRow * slot->rowHeight);
    return DrawRect{vp.left + static_cast<float>(x0), y, static_cast<float>(x1 - x0),
                    static_cast<float>(slot->rowHeight), 0};
}

std::pair<size_t, size_t> FrameBuilder::eventsInColumn(const EventRow& row, const TimeScale& scale, double x) {
    const double col = std::floor(x);
    const size_t a = row.gallopToStart(0, scale.toTime(col));
    const size_t b = row.gallopToStart(a, scale.toTime(col + 1));
    return {a, b};
}

}  // namespace osc::gui
