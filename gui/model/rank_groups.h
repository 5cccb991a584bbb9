// Many ranks (issue 30 item 3b, 3c): which device groups go under which
// header when the ranks are grouped by host or by communicator, and the
// state of the rank view (grouping, collapsed headers, one row per rank)
// that LaneLayout turns into positions. Plain C++ so the order can be tested
// on hand-made jobs.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "gui/model/timeline_model.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace osc::gui {

enum class RankGrouping : uint8_t { None, Host, Communicator };

// What grouping needs to know of one device group.
struct RankIdentity {
    int group = 0;  // into TimelineModel::groups
    std::string host;
    int rank = -1;    // -1 when the capture does not say
    int device = -1;  // the GPU's id, -1 for a process without GPU work
    int64_t pid = 0;
    std::vector<uint64_t> comms;  // communicators (NCCL commHash) its operations ran on
};

struct RankSection {
    std::string key;    // what its collapsed state is remembered by: the host, or the communicator
    std::string title;  // its header: "host node-3 · 8 GPUs (ranks 24–31)"
    std::vector<int> groups;
    bool collapsed = false;
};

// Sections in job order (by their lowest rank), ranks in order inside each.
// By host: one section per host. By communicator: a device goes under the
// first communicator it ran on, taking the smallest communicators first
// (ties: lowest member rank, then hash), so tensor-parallel groups come out
// before the data-parallel communicator that spans them; devices that name
// no communicator go last, under one header. None: no sections.
std::vector<RankSection> groupRanks(std::vector<RankIdentity> ids, RankGrouping how);

// The identities of a model's groups; communicators from the analysis (none without one).
std::vector<RankIdentity> rankIdentities(const TimelineModel& model, const Analysis* analysis);

// "ranks 24–31", "rank 3", "ranks 0, 8, 16, …" (the first few of a
// scattered set), or "" without ranks; `ranks` sorted and distinct.
std::string rankSpan(const std::vector<int>& ranks);
// "0x5e1f…" in full: how communicators are named on screen.
std::string hexHash(uint64_t hash);

// "rank 12 · GPU 4", "rank 12", or "host:pid · GPU 0" without a rank: a rank row's label.
std::string rankRowLabel(const RankIdentity& id, bool withGpu, bool withHost);

// How the lanes show many ranks, as LaneLayout reads it.
struct RankRows {
    std::vector<RankSection> sections;  // empty: the capture's order, no headers
    bool oneRow = false;                // each device one thin row
    int availableHeight = 0;            // one row per rank: the rows are sized to fit this (0: the largest rows)
};

// The rank view's state in the timeline: grouping, which headers are
// collapsed (by key, so a re-read keeps them) and one row per rank.
class RankView {
public:
    void setIdentities(std::vector<RankIdentity> ids) { ids_ = std::move(ids); }
    const std::vector<RankIdentity>& identities() const { return ids_; }
    void setGrouping(RankGrouping g) { grouping_ = g; }
    RankGrouping grouping() const { return grouping_; }
    void setOneRow(bool on) { oneRow_ = on; }
    bool oneRow() const { return oneRow_; }
    void toggleCollapsed(const std::string& key);
    void setCollapsed(const std::string& key, bool collapsed);
    const std::set<std::string>& collapsedKeys() const { return collapsed_; }
    void setCollapsedKeys(std::set<std::string> keys) { collapsed_ = std::move(keys); }
    RankRows rows(int availableHeight) const;
    // The identity of a group, or nullptr.
    const RankIdentity* identityOf(int group) const;

private:
    std::vector<RankIdentity> ids_;
    RankGrouping grouping_ = RankGrouping::None;
    bool oneRow_ = false;
    std::set<std::string> collapsed_;
};

}  // namespace osc::gui
