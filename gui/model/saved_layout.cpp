#include "gui/model/saved_layout.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace osc::gui {

namespace {

std::string groupKey(const TimelineModel& model, int g) {
    const Process& p = model.processOf(g);
    return p.host + "|" + std::to_string(p.pid) + "|" + std::to_string(model.groups()[static_cast<size_t>(g)].device);
}

constexpr const char* kGroupings[] = {"none", "host", "communicator"};

}  // namespace

std::string SavedLayout::toJson() const {
    nlohmann::json arr = nlohmann::json::array();
    for (const Group& g : groups)
        arr.push_back({{"group", g.key}, {"collapsed", g.collapsed}, {"order", g.order}, {"hidden", g.hidden}});
    nlohmann::json j{{"version", 1}, {"groups", arr}};
    // Optional, so that layouts saved before the rank view read as they were.
    if (rankGrouping != RankGrouping::None || !foldedHeaders.empty() || oneRowPerRank)
        j["ranks"] = {{"grouping", kGroupings[static_cast<size_t>(rankGrouping)]},
                      {"folded", foldedHeaders},
                      {"one_row", oneRowPerRank}};
    return j.dump();
}

std::optional<SavedLayout> SavedLayout::fromJson(const std::string& text) {
    try {
        const auto j = nlohmann::json::parse(text);
        if (j.at("version").get<int>() != 1) return std::nullopt;
        SavedLayout out;
        for (const auto& g : j.at("groups"))
            out.groups.push_back({g.at("group").get<std::string>(), g.at("collapsed").get<bool>(),
                                  g.at("order").get<std::vector<std::string>>(),
                                  g.at("hidden").get<std::vector<std::string>>()});
        if (const auto r = j.find("ranks"); r != j.end()) {
            const std::string grouping = r->at("grouping").get<std::string>();
            const auto* g = std::find(std::begin(kGroupings), std::end(kGroupings), grouping);
            if (g == std::end(kGroupings)) return std::nullopt;
            out.rankGrouping = static_cast<RankGrouping>(g - std::begin(kGroupings));
            out.foldedHeaders = r->at("folded").get<std::vector<std::string>>();
            out.oneRowPerRank = r->at("one_row").get<bool>();
        }
        return out;
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
}

SavedLayout layoutOf(const TimelineModel& model) {
    SavedLayout out;
    for (size_t g = 0; g < model.groups().size(); ++g) {
        const DeviceGroup& group = model.groups()[g];
        SavedLayout::Group saved;
        saved.key = groupKey(model, static_cast<int>(g));
        saved.collapsed = group.collapsed;
        for (int l : group.lanes) {
            const Lane& lane = model.lane(l);
            if (lane.hidden) saved.hidden.push_back(lane.label);
        }
        if (group.reordered)
            for (int l : group.lanes) saved.order.push_back(model.lane(l).label);
        if (saved.collapsed || !saved.hidden.empty() || !saved.order.empty()) out.groups.push_back(std::move(saved));
    }
    return out;
}

void applyLayout(TimelineModel& model, const SavedLayout& layout) {
    std::map<std::string, const SavedLayout::Group*> byKey;
    for (const auto& g : layout.groups) byKey[g.key] = &g;
    for (size_t g = 0; g < model.groups().size(); ++g) {
        const auto it = byKey.find(groupKey(model, static_cast<int>(g)));
        if (it == byKey.end()) continue;
        const SavedLayout::Group& saved = *it->second;
        model.setCollapsed(static_cast<int>(g), saved.collapsed);
        const std::vector<int> lanes = model.groups()[g].lanes;
        const std::set<std::string> hidden(saved.hidden.begin(), saved.hidden.end());
        for (int l : lanes) model.setHidden(l, hidden.count(model.lane(l).label) > 0);
        if (saved.order.empty()) continue;
        // The saved order first (each label once), then the lanes it does not name.
        std::vector<int> order;
        std::vector<bool> placed(lanes.size(), false);
        for (const std::string& label : saved.order)
            for (size_t i = 0; i < lanes.size(); ++i)
                if (!placed[i] && model.lane(lanes[i]).label == label) {
                    order.push_back(lanes[i]);
                    placed[i] = true;
                    break;
                }
        for (size_t i = 0; i < lanes.size(); ++i)
            if (!placed[i]) order.push_back(lanes[i]);
        model.setLaneOrder(static_cast<int>(g), std::move(order));
    }
}

void saveRankView(SavedLayout& layout, const RankView& view) {
    layout.rankGrouping = view.grouping();
    layout.foldedHeaders.assign(view.collapsedKeys().begin(), view.collapsedKeys().end());
    layout.oneRowPerRank = view.oneRow();
}

void restoreRankView(RankView& view, const SavedLayout& layout) {
    view.setGrouping(layout.rankGrouping);
    view.setCollapsedKeys({layout.foldedHeaders.begin(), layout.foldedHeaders.end()});
    view.setOneRow(layout.oneRowPerRank);
}

}  // namespace osc::gui
