// The lane layout a user made (collapsed groups, hidden lanes, lane order),
// kept between runs per capture path: the window saves it when another file
// opens or the window closes, and puts it back when the file opens again
// (or a live capture is re-read). Groups are known by host, pid and device
// index, lanes by their label, so a capture that grew keeps its layout;
// groups and lanes the capture no longer has are ignored, and new lanes keep
// their place after the ones the layout orders. With many ranks it also
// keeps the rank view (gui/model/rank_groups.h): the grouping, which host or
// communicator headers are folded (by key) and one row per rank.
#pragma once

#include "gui/model/rank_groups.h"
#include "gui/model/timeline_model.h"

#include <optional>
#include <string>
#include <vector>

namespace osc::gui {

struct SavedLayout {
    struct Group {
        std::string key;  // "host|pid|device"
        bool collapsed = false;
        std::vector<std::string> order;   // lane labels, top to bottom
        std::vector<std::string> hidden;  // lane labels
        bool operator==(const Group&) const = default;
    };
    std::vector<Group> groups;  // only those that differ from the default
    RankGrouping rankGrouping = RankGrouping::None;
    std::vector<std::string> foldedHeaders;  // RankSection keys, sorted
    bool oneRowPerRank = false;

    bool empty() const {
        return groups.empty() && rankGrouping == RankGrouping::None && foldedHeaders.empty() && !oneRowPerRank;
    }
    std::string toJson() const;
    // nullopt for text that is not a saved layout (a damaged setting is ignored).
    static std::optional<SavedLayout> fromJson(const std::string& text);
};

// What differs in `model` from the layout it was built with.
SavedLayout layoutOf(const TimelineModel& model);
// Puts `layout` on `model` (built fresh, in its default layout).
void applyLayout(TimelineModel& model, const SavedLayout& layout);
// The rank view's part of a layout, both ways (the identities stay the view's).
void saveRankView(SavedLayout& layout, const RankView& view);
void restoreRankView(RankView& view, const SavedLayout& layout);

}  // namespace osc::gui
