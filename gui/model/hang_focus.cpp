#include "gui/model/hang_focus.h"

#include "analyzer/hang/hang_output.h"
#include "gui/model/time_ticks.h"

#include <algorithm>

namespace osc::gui {
namespace {

// Calls shown before the stuck one when the view is framed on it.
constexpr size_t kCallsBefore = 3;

// The timeline group of a rank in the hang analysis: its process (by rank and
// file, else by label) and, of its GPUs, the one that ran collectives.
int groupOf(const TimelineModel& model, const hang::RankProgress& r) {
    const auto& processes = model.capture().processes;
    int process = -1;
    for (size_t p = 0; p < processes.size() && process < 0; ++p)
        if (processes[p].rank == r.rank && r.rank >= 0 && (r.source.empty() || processes[p].sourcePath == r.source))
            process = static_cast<int>(p);
    for (size_t p = 0; p < processes.size() && process < 0; ++p)
        if (processes[p].label() == r.label) process = static_cast<int>(p);
    if (process < 0) return -1;
    int first = -1;
    for (size_t g = 0; g < model.groups().size(); ++g) {
        const DeviceGroup& group = model.groups()[g];
        if (group.process != process || group.device < 0) continue;
        if (!group.commKernels.empty()) return static_cast<int>(g);
        if (first < 0) first = static_cast<int>(g);
    }
    return first;
}

// The communication kernel of a group that a call entered at `entered`
// started (the first one starting at or after it), or nothing.
EventRef kernelOfCall(const TimelineModel& model, int group, TimeNs entered) {
    const DeviceGroup& g = model.groups()[static_cast<size_t>(group)];
    const Device* device = model.deviceOf(group);
    if (!device) return {};
    const auto& starts = device->kernels.start;
    for (uint32_t k : g.commKernels)
        if (starts[k] >= entered) return model.findKernel(group, k);
    return {};
}

const hang::Call* callIn(const hang::RankProgress& r, const hang::SlotKey& slot) {
    for (const hang::Call& c : r.calls)
        if (c.slot == slot) return &c;
    return nullptr;
}

const hang::Call* lastCompleted(const hang::RankProgress& r) {
    for (auto it = r.calls.rbegin(); it != r.calls.rend(); ++it)
        if (it->completed) return &*it;
    return nullptr;
}

// Where the view opens: from a few calls before the stuck one (on every rank
// concerned: a rank that never entered it, from its last calls) to half as
// far again after it, so that the stuck call's entry sits two thirds in and
// its wait runs on past the right edge.
ViewRange frameOf(const hang::CommunicatorProgress& comm, const std::vector<int>& members, const hang::SlotKey& slot,
                  TimeNs since) {
    TimeNs from = since;
    for (int m : members) {
        const hang::RankProgress& r = comm.ranks[static_cast<size_t>(m)];
        size_t at = r.calls.size();  // the stuck call's place, or after the last call
        for (size_t i = 0; i < r.calls.size(); ++i)
            if (r.calls[i].slot == slot) at = i;
        if (at > 0) from = std::min(from, r.calls[at > kCallsBefore ? at - kCallsBefore : 0].enteredNs);
    }
    const TimeNs before = std::max<TimeNs>(since - from, 1'000'000);
    return {since - before, since + before / 2};
}

std::string listOfRanks(const std::vector<std::string>& labels) {
    std::string out;
    for (size_t i = 0; i < labels.size(); ++i)
        out += (i == 0 ? "" : i + 1 == labels.size() ? " and " : ", ") + labels[i];
    return out;
}

}  // namespace

const HangWait* HangFocus::waitAt(int group, TimeNs t) const {
    for (const HangWait& w : waits)
        if (w.group == group && t >= w.start && t < w.end) return &w;
    return nullptr;
}

const HangWait* HangFocus::waitOf(EventRef kernel) const {
    for (const HangWait& w : waits)
        if (kernel.valid() && w.kernel == kernel) return &w;
    return nullptr;
}

std::string HangFocus::groupStatus(int group) const {
    for (const HangWait& w : waits)
        if (w.group == group) return "waits in " + w.call + ", never completed";
    for (const HangStuck& s : stuck)
        if (s.group == group) return s.text.substr(0, s.text.find(';'));
    return {};
}

HangFocus hangFocus(const TimelineModel& model, const hang::HangAnalysis& analysis) {
    HangFocus out;
    out.verdict = analysis.verdict;
    if (!out.found()) return out;
    out.headline = hang::hangHeadline(analysis);
    if (analysis.verdict == hang::Verdict::Desync && !analysis.desyncs.empty()) {
        // The call the ranks made differently: framed on its entries.
        const hang::Desync& d = analysis.desyncs.front();
        const hang::CommunicatorProgress& comm = analysis.communicators[static_cast<size_t>(d.communicator)];
        std::vector<int> members;
        TimeNs since = 0;
        bool any = false;
        for (const auto& part : d.parts) {
            members.push_back(part.member);
            if (const hang::Call* c = callIn(comm.ranks[static_cast<size_t>(part.member)], d.slot)) {
                since = any ? std::min(since, c->enteredNs) : c->enteredNs;
                any = true;
            }
        }
        if (any) out.frame = frameOf(comm, members, d.slot, since);
        return out;
    }
    for (size_t ci = 0; ci < analysis.communicators.size(); ++ci) {
        if (!analysis.hung[ci]) continue;
        const hang::CommunicatorProgress& comm = analysis.communicators[ci];
        const hang::HungCollective& h = *analysis.hung[ci];
        const std::string call = hang::describeSlot(comm, h.slot, h.collective);
        std::vector<std::string> stuckLabels;
        std::vector<int> members = h.waitingRanks;
        for (const hang::StuckRank& s : analysis.stuck) {
            if (s.communicator != static_cast<int>(ci)) continue;
            stuckLabels.push_back(s.label);
            if (s.member < 0) continue;
            members.push_back(s.member);
            const hang::RankProgress& r = comm.ranks[static_cast<size_t>(s.member)];
            const hang::Call* last = lastCompleted(r);
            const int group = groupOf(model, r);
            if (group >= 0)
                out.stuck.push_back({group, h.waitingSinceNs, call,
                                     "never entered " + call + "; last completed " +
                                         (last ? hang::describeSlot(comm, last->slot, last->collective)
                                               : std::string("nothing in this communicator"))});
        }
        for (int m : h.waitingRanks) {
            const hang::RankProgress& r = comm.ranks[static_cast<size_t>(m)];
            const hang::Call* c = callIn(r, h.slot);
            const int group = groupOf(model, r);
            if (!c || group < 0) continue;
            HangWait w;
            w.group = group;
            w.call = call;
            w.start = c->enteredNs;
            w.kernel = kernelOfCall(model, group, c->enteredNs);
            w.end = model.end();
            if (w.kernel.valid()) {
                const EventRow& row = model.lane(w.kernel.lane).rows[static_cast<size_t>(w.kernel.row)];
                w.start = row.start[w.kernel.index];
                // A kernel still "running" when the capture ended, or ended by an abort.
                if (row.end[w.kernel.index] > w.start) w.end = row.end[w.kernel.index];
            }
            w.text = call + ": waiting that never completed, " + formatDuration(w.end - w.start, 4) + " from " +
                     formatTimestamp(w.start) + " until " +
                     (w.kernel.valid() && w.end < model.end() ? "its kernel stopped (aborted, not completed)"
                                                              : "the capture ended") +
                     "; " + (stuckLabels.empty() ? "the others" : listOfRanks(stuckLabels)) + " never entered it";
            out.waits.push_back(std::move(w));
        }
        // The communicator waited in the longest comes first: it is what to look at.
        if (static_cast<int>(ci) == analysis.firstMissingCommunicator)
            out.frame = frameOf(comm, members, h.slot, h.waitingSinceNs);
    }
    return out;
}

void markHang(TimelineModel& model, const HangFocus& focus) {
    for (size_t g = 0; g < model.groups().size(); ++g) {
        const int group = static_cast<int>(g);
        const std::string status = focus.groupStatus(group);
        if (status.empty()) continue;
        // "last at …" counted arrivals at the completed collectives; in a hang what a rank does now matters.
        std::string label = model.groups()[g].label;
        if (const size_t last = label.find(" · last at "); last != std::string::npos) label.erase(last);
        model.setGroupLabel(group, label + " · " + status);
    }
    for (const HangWait& w : focus.waits) {
        const DeviceGroup& g = model.groups()[static_cast<size_t>(w.group)];
        // Waiting only where it is exposed, as the analysis marks waiting (M ∖ C).
        const IntervalSet wait = intersect({{w.start, w.end}}, g.coverage.exposedComm.intervals());
        model.setExposedWait(w.group, unite(g.exposedWait.intervals(), wait));
    }
}

void describeHungKernel(const HangFocus& focus, EventRef kernel, DetailList& details) {
    const HangWait* w = focus.waitOf(kernel);
    if (!w) return;
    // Its length was waiting: no transfer, no bandwidth to speak of.
    std::erase_if(details, [](const auto& row) {
        return row.first == "transfer" || row.first == "bandwidth" || row.first == "bus bandwidth" ||
               row.first == "algorithm bandwidth" || row.first == "waiting for last rank" ||
               row.first == "last to arrive";
    });
    details.emplace_back("state", "never completed (hang)");
    details.emplace_back("waiting", w->text);
}

}  // namespace osc::gui
