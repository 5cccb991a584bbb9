#include "gui/model/lane_layout.h"

#include <algorithm>

namespace osc::gui {

int LaneLayout::shownRows(const Lane& lane, double nsPerPx) {
    const int all = std::max<int>(1, static_cast<int>(lane.rows.size()));
    if (nsPerPx <= 0 || lane.kind != LaneKind::Host || lane.rowLongest.size() != lane.rows.size()) return all;
    int shown = 1;
    for (size_t r = 0; r < lane.rowLongest.size(); ++r)
        if (static_cast<double>(lane.rowLongest[r]) >= kMinRowEventPx * nsPerPx) shown = static_cast<int>(r) + 1;
    return shown;
}

LaneLayout::LaneLayout(const TimelineModel& model, LaneMetrics metrics, double nsPerPx) : metrics_(metrics) {
    const std::vector<int> visible = model.visibleLanes();
    int y = 0;
    for (size_t i = 0; i < visible.size();) {
        const int group = model.lane(visible[i]).group;
        std::vector<int> lanes;
        for (; i < visible.size() && model.lane(visible[i]).group == group; ++i) lanes.push_back(visible[i]);
        placeGroup(model, group, lanes, nsPerPx, y);
    }
    total_ = y;
    buildIndex(model);
}

LaneLayout::LaneLayout(const TimelineModel& model, const RankRows& ranks, LaneMetrics metrics, double nsPerPx)
    : rankSections_(ranks.sections), oneRow_(ranks.oneRow), metrics_(metrics) {
    if (!oneRow_ && rankSections_.empty()) {
        *this = LaneLayout(model, metrics, nsPerPx);
        return;
    }
    const size_t groupCount = model.empty() ? 0 : model.groups().size();
    std::vector<std::vector<int>> byGroup(groupCount);
    for (int l : model.visibleLanes()) byGroup[static_cast<size_t>(model.lane(l).group)].push_back(l);
    // Without sections: every group in the capture's order, under no header.
    std::vector<const std::vector<int>*> blocks;
    std::vector<int> all;
    if (rankSections_.empty()) {
        for (size_t g = 0; g < groupCount; ++g) all.push_back(static_cast<int>(g));
        blocks.push_back(&all);
    } else {
        for (const RankSection& s : rankSections_) blocks.push_back(&s.groups);
    }
    const auto hasRankRow = [&](int g) { return model.groups()[static_cast<size_t>(g)].device >= 0; };
    if (oneRow_) {
        int rows = 0;
        for (size_t b = 0; b < blocks.size(); ++b) {
            if (!rankSections_.empty() && rankSections_[b].collapsed) continue;
            for (int g : *blocks[b]) rows += hasRankRow(g) ? 1 : 0;
        }
        pitch_ =
            rankPitch(rows, static_cast<int>(blocks.size()), !rankSections_.empty(), ranks.availableHeight, metrics);
    }
    int y = 0;
    for (size_t b = 0; b < blocks.size(); ++b) {
        if (!rankSections_.empty()) {
            sections_.push_back({static_cast<int>(b), y});
            y += metrics.sectionHeight;
            if (rankSections_[b].collapsed) continue;
        }
        // Above the first row, unless a header is: labels may reach over a header, not under the ruler.
        if (oneRow_ && b == 0 && rankSections_.empty()) y += kRankBlockPad;
        for (int g : *blocks[b]) {
            if (g < 0 || static_cast<size_t>(g) >= groupCount) continue;
            if (oneRow_) {
                if (hasRankRow(g)) placeRankRow(model, g, y);
            } else if (!byGroup[static_cast<size_t>(g)].empty()) {
                placeGroup(model, g, byGroup[static_cast<size_t>(g)], nsPerPx, y);
            }
        }
    }
    if (oneRow_) y += kRankBlockPad;  // under the last row: the window's edge
    total_ = y;
    buildIndex(model);
}

void LaneLayout::buildIndex(const TimelineModel& model) {
    // Overlays look up a slot per outlined event: a thousand matched
    // instances must not each walk thousands of slots.
    slotIndex_.assign(model.empty() ? 0 : model.lanes().size(), -1);
    rankRowIndex_.assign(model.empty() ? 0 : model.groups().size(), -1);
    for (size_t i = 0; i < lanes_.size(); ++i) {
        const LaneSlot& s = lanes_[i];
        if (s.lane >= 0 && static_cast<size_t>(s.lane) < slotIndex_.size() &&
            slotIndex_[static_cast<size_t>(s.lane)] < 0)
            slotIndex_[static_cast<size_t>(s.lane)] = static_cast<int>(i);
        if (s.rankRow && s.group >= 0 && static_cast<size_t>(s.group) < rankRowIndex_.size() &&
            rankRowIndex_[static_cast<size_t>(s.group)] < 0)
            rankRowIndex_[static_cast<size_t>(s.group)] = static_cast<int>(i);
    }
}

int LaneLayout::rankPitch(int rows, int blocks, bool headers, int available, const LaneMetrics& metrics) {
    if (rows <= 0 || available <= 0) return kMaxRankPitch;
    const int room = available - (headers ? blocks * metrics.sectionHeight + kRankBlockPad : 2 * kRankBlockPad);
    return std::clamp(room / rows, kMinRankPitch, kMaxRankPitch);
}

int LaneLayout::labelStride(int pitch, int textHeight) {
    if (pitch <= 0) return 1;
    return std::max(1, (textHeight + pitch - 1) / pitch);
}

void LaneLayout::placeGroup(const TimelineModel& model, int group, const std::vector<int>& lanes, double nsPerPx,
                            int& y) {
    groups_.push_back({group, y});
    y += metrics_.headerHeight;
    for (int l : lanes) {
        const Lane& lane = model.lane(l);
        LaneSlot slot;
        slot.lane = l;
        slot.group = group;
        slot.y = y;
        if (lane.kind == LaneKind::Overlap) {
            slot.rowHeight = metrics_.overlapHeight;
            slot.height = metrics_.overlapHeight;
        } else {
            slot.rowHeight = metrics_.rowHeight;
            slot.rows = shownRows(lane, nsPerPx);
            slot.height = metrics_.rowHeight * slot.rows;
        }
        lanes_.push_back(slot);
        y += slot.height + metrics_.gap;
    }
}

void LaneLayout::placeRankRow(const TimelineModel& model, int group, int& y) {
    for (int l : model.groups()[static_cast<size_t>(group)].lanes) {
        if (model.lane(l).kind != LaneKind::Overlap) continue;
        // A gap only where the rows are tall enough to spare a pixel.
        const int gap = pitch_ >= 6 ? 1 : 0;
        LaneSlot slot;
        slot.lane = l;
        slot.group = group;
        slot.y = y;
        slot.height = slot.rowHeight = pitch_ - gap;
        slot.rankRow = true;
        lanes_.push_back(slot);
        y += pitch_;
        return;
    }
}

const LaneSlot* LaneLayout::laneAt(int y) const {
    auto it = std::upper_bound(lanes_.begin(), lanes_.end(), y, [](int v, const LaneSlot& s) { return v < s.y; });
    if (it == lanes_.begin()) return nullptr;
    --it;
    return y < it->y + it->height ? &*it : nullptr;
}

int LaneLayout::groupHeaderAt(int y) const {
    for (const auto& g : groups_) {
        if (y >= g.y && y < g.y + metrics_.headerHeight) return g.group;
    }
    return -1;
}

int LaneLayout::sectionHeaderAt(int y) const {
    for (const auto& s : sections_)
        if (y >= s.y && y < s.y + metrics_.sectionHeight) return s.section;
    return -1;
}

const LaneSlot* LaneLayout::rankRowOf(int group) const {
    if (!oneRow_ || group < 0 || static_cast<size_t>(group) >= rankRowIndex_.size()) return nullptr;
    const int i = rankRowIndex_[static_cast<size_t>(group)];
    return i >= 0 ? &lanes_[static_cast<size_t>(i)] : nullptr;
}

const LaneSlot* LaneLayout::slotOf(int lane) const {
    if (lane < 0 || static_cast<size_t>(lane) >= slotIndex_.size()) return nullptr;
    const int i = slotIndex_[static_cast<size_t>(lane)];
    return i >= 0 ? &lanes_[static_cast<size_t>(i)] : nullptr;
}

}  // namespace osc::gui
