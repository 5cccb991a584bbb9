#include "gui/model/hang_progress.h"

#include "analyzer/hang/hang_output.h"
#include "analyzer/report/report_format.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace osc::gui {
namespace {

// Calls shown after the hung one: what the waiting ranks queued behind it.
constexpr size_t kColumnsAfterHung = 3;

struct SlotInfo {
    hang::SlotKey slot;
    std::string collective;
    TimeNs firstEntered = std::numeric_limits<TimeNs>::max();
};

std::vector<SlotInfo> orderedSlots(const hang::CommunicatorProgress& comm) {
    std::map<hang::SlotKey, SlotInfo> bySlot;
    for (const auto& r : comm.ranks)
        for (const auto& c : r.calls) {
            SlotInfo& s = bySlot[c.slot];
            s.slot = c.slot;
            if (s.collective.empty()) s.collective = c.collective;
            s.firstEntered = std::min(s.firstEntered, c.enteredNs);
        }
    std::vector<SlotInfo> out;
    for (auto& [key, info] : bySlot) out.push_back(info);
    // One number over all types orders the calls; numbers per type do not.
    if (comm.seqPerCollective)
        std::stable_sort(out.begin(), out.end(), [](const SlotInfo& a, const SlotInfo& b) {
            return std::pair(a.firstEntered, a.slot) < std::pair(b.firstEntered, b.slot);
        });
    return out;
}

std::string rankSummary(const hang::CommunicatorProgress& comm, const hang::RankProgress& r, bool stuck,
                        const std::optional<hang::HungCollective>& hung) {
    const hang::Call* done = nullptr;
    const hang::Call* waiting = nullptr;
    for (const auto& c : r.calls) {
        if (c.completed) done = &c;
        if (!c.completed && !waiting) waiting = &c;
    }
    std::string out = done ? "last completed " + hang::describeSlot(comm, done->slot, done->collective)
                           : std::string("completed nothing here");
    if (waiting) out += "; waits in " + hang::describeSlot(comm, waiting->slot, waiting->collective);
    if (stuck && hung) out += "; never entered " + hang::describeSlot(comm, hung->slot, hung->collective);
    return out;
}

}  // namespace

HangProgress hangProgress(const hang::HangAnalysis& a, size_t maxColumns) {
    HangProgress out;
    out.verdict = hang::toString(a.verdict);
    out.paragraph = hang::hangParagraph(a);
    maxColumns = std::max<size_t>(maxColumns, 1);
    for (size_t c = 0; c < a.communicators.size(); ++c) {
        const hang::CommunicatorProgress& comm = a.communicators[c];
        const auto& hung = a.hung[c];
        ProgressBlock block;
        block.title = "communicator " + comm.id + " (" + hang::toString(comm.source) + ", " +
                      (comm.size > 0 ? std::to_string(comm.size) + " ranks" : std::string("size unknown")) + ")";
        if (hung)
            block.title += ": " + std::to_string(hung->waitingRanks.size()) + " wait in " +
                           hang::describeSlot(comm, hung->slot, hung->collective) + " for " +
                           report::formatDuration(hung->waitedNs);
        const std::vector<SlotInfo> slots = orderedSlots(comm);
        size_t end = slots.size();
        if (hung)
            for (size_t i = 0; i < slots.size(); ++i)
                if (slots[i].slot == hung->slot) end = std::min(slots.size(), i + 1 + kColumnsAfterHung);
        const size_t begin = end > maxColumns ? end - maxColumns : 0;
        block.hiddenBefore = begin;
        std::set<hang::SlotKey> desynced;
        for (const auto& d : a.desyncs)
            if (d.communicator == static_cast<int>(c)) desynced.insert(d.slot);
        for (size_t i = begin; i < end; ++i) {
            ProgressColumn col;
            col.label = "#" + std::to_string(slots[i].slot.seq);
            col.tooltip = hang::describeSlot(comm, slots[i].slot, slots[i].collective);
            col.hung = hung && slots[i].slot == hung->slot;
            col.desync = desynced.count(slots[i].slot) > 0;
            block.columns.push_back(std::move(col));
        }
        std::set<int> stuckMembers;
        for (const auto& s : a.stuck)
            if (s.communicator == static_cast<int>(c) && s.member >= 0) stuckMembers.insert(s.member);
        for (size_t m = 0; m < comm.ranks.size(); ++m) {
            const hang::RankProgress& r = comm.ranks[m];
            ProgressRow row;
            row.label = r.label;
            row.stuck = stuckMembers.count(static_cast<int>(m)) > 0;
            std::map<hang::SlotKey, const hang::Call*> callAt;
            for (const auto& call : r.calls) callAt.emplace(call.slot, &call);
            for (size_t i = begin; i < end; ++i) {
                const auto it = callAt.find(slots[i].slot);
                row.cells.push_back(it == callAt.end()      ? ProgressState::NotEntered
                                    : it->second->completed ? ProgressState::Completed
                                                            : ProgressState::Waiting);
            }
            row.summary = rankSummary(comm, r, row.stuck, hung);
            block.rows.push_back(std::move(row));
        }
        // Members no input holds: stuck, with nothing to show but that.
        for (const auto& s : a.stuck) {
            if (s.communicator != static_cast<int>(c) || s.member >= 0) continue;
            ProgressRow row;
            row.label = s.label;
            row.stuck = true;
            row.cells.assign(end - begin, ProgressState::NotEntered);
            row.summary = "in no input";
            block.rows.push_back(std::move(row));
        }
        out.blocks.push_back(std::move(block));
    }
    return out;
}

}  // namespace osc::gui
