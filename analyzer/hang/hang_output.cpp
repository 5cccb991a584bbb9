#include "analyzer/hang/hang_output.h"

#include "analyzer/capture/printable_text.h"
#include "analyzer/metrics/bottleneck.h"
#include "analyzer/report/report_format.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <ctime>
#include <set>

namespace osc::hang {
namespace {

using ordered_json = nlohmann::ordered_json;
using report::formatBytes;
using report::formatDuration;

std::string p(std::string_view text) { return printableLine(text, 300); }

// "14:03:22.301 UTC" for a time on the inputs' timeline.
std::string wallClock(const HangAnalysis& a, TimeNs t) {
    if (a.originUtcNs <= 0) return formatDuration(t);
    const int64_t ns = a.originUtcNs + t;
    const std::time_t secs = static_cast<std::time_t>(ns / 1'000'000'000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char out[48];
    std::snprintf(out, sizeof out, "%02d:%02d:%02d.%03d UTC", tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<int>((ns / 1'000'000) % 1000));
    return out;
}

// "rank 3", "ranks 3 and 5", "ranks 0-2, 4 and 6"
std::string rankList(std::vector<int> ranks) {
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    std::vector<std::string> parts;
    for (size_t i = 0; i < ranks.size();) {
        size_t j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
        parts.push_back(j >= i + 2 ? std::to_string(ranks[i]) + "-" + std::to_string(ranks[j])
                                   : std::to_string(ranks[i]));
        if (j == i + 1) parts.push_back(std::to_string(ranks[j]));
        i = j + 1;
    }
    return (ranks.size() == 1 ? "rank " : "ranks ") + listInWords(parts);
}

// The rank a member is known by: its global rank, else its place in the communicator.
int shownRank(const RankProgress& r) { return r.rank >= 0 ? r.rank : r.commRank; }
int shownRank(const StuckRank& s) { return s.rank >= 0 ? s.rank : s.commRank; }

std::string hostSentence(const HangAnalysis& a, const RankProgress& r) {
    const HostActivity& h = r.host;
    std::vector<std::string> parts;
    if (h.apiCall)
        parts.push_back("its last CUDA call was " + p(h.apiCall->name) + " at " + wallClock(a, h.apiCall->startNs));
    if (h.range)
        parts.push_back("its last NVTX range '" + p(h.range->name) + "' began at " + wallClock(a, h.range->startNs));
    if (h.cpuOp) parts.push_back("its last operator was " + p(h.cpuOp->name) + " at " + wallClock(a, h.cpuOp->startNs));
    if (h.flightRecorderEntry)
        parts.push_back("its last Flight Recorder entry is " + p(h.flightRecorderEntry->name) + ", created at " +
                        wallClock(a, h.flightRecorderEntry->startNs) + " (" + p(h.flightRecorderState) + ")");
    if (parts.empty()) return "nothing of its host was recorded";
    std::string out = listInWords(parts);
    if (h.lastSeenNs && a.endNs > *h.lastSeenNs)
        out += "; nothing after that for " + formatDuration(a.endNs - *h.lastSeenNs) + " before the inputs end";
    return out;
}

const Call* lastWith(const RankProgress& r, bool completedOnly) {
    for (auto it = r.calls.rbegin(); it != r.calls.rend(); ++it)
        if (!completedOnly || it->completed) return &*it;
    return nullptr;
}

std::vector<int> stuckRanksOf(const HangAnalysis& a, size_t c) {
    std::vector<int> out;
    for (const StuckRank& s : a.stuck)
        if (s.communicator == static_cast<int>(c)) out.push_back(shownRank(s));
    return out;
}

// "HANG: rank 1 never entered AllReduce #6 of communicator 0x…, which rank 0 has waited in since …".
std::string hangSentence(const HangAnalysis& a) {
    const size_t c = static_cast<size_t>(a.firstMissingCommunicator);
    const CommunicatorProgress& comm = a.communicators[c];
    const HungCollective& h = *a.hung[c];
    std::vector<int> waiting;
    for (int m : h.waitingRanks) waiting.push_back(shownRank(comm.ranks[static_cast<size_t>(m)]));
    const std::string what = describeSlot(comm, h.slot, h.collective);
    return "HANG: " + rankList(stuckRanksOf(a, c)) + " never entered " + p(what) + " of communicator " + p(comm.id) +
           ", which " + rankList(waiting) + (waiting.size() == 1 ? " has" : " have") + " waited in since " +
           wallClock(a, h.waitingSinceNs) +
           (a.endKnown ? " (" + formatDuration(h.waitedNs) + " before the inputs end)." : ".");
}

std::string hangParagraphOf(const HangAnalysis& a) {
    const size_t c = static_cast<size_t>(a.firstMissingCommunicator);
    const CommunicatorProgress& comm = a.communicators[c];
    const std::vector<int> stuckRanks = stuckRanksOf(a, c);
    std::vector<const StuckRank*> stuckHere;
    for (const StuckRank& s : a.stuck)
        if (s.communicator == static_cast<int>(c)) stuckHere.push_back(&s);
    std::string out = hangSentence(a);
    for (const StuckRank* s : stuckHere) {
        if (s->member < 0) {
            out += " Rank " + std::to_string(shownRank(*s)) +
                   " of the communicator is in none of the inputs: add its "
                   "capture or dump, or check that its process is alive.";
            continue;
        }
        const RankProgress& r = comm.ranks[static_cast<size_t>(s->member)];
        std::string label = p(r.label);
        if (!label.empty()) label[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(label[0])));
        std::string sentence = " " + label + ": ";
        const Call* last = lastWith(r, true);
        sentence += last ? "last completed " + p(describeSlot(comm, last->slot, last->collective))
                         : std::string("completed nothing in this communicator");
        if (s->waitingIn)
            sentence += ", and waits in " + p(describeSlot(comm, s->waitingIn->slot, s->waitingIn->collective)) +
                        " instead (the ranks disagree on what to call next)";
        out += sentence + "; " + hostSentence(a, r) + ".";
    }
    const bool one = stuckRanks.size() == 1;
    out += " Look at what " + rankList(stuckRanks) + (one ? " was" : " were") +
           " doing instead of calling it (py-spy dump, gdb, " + (one ? "its" : "their") +
           " logs): the waiting ranks are only waiting for " + (one ? "it." : "them.");
    int otherHung = 0;
    for (size_t k = 0; k < a.hung.size(); ++k)
        if (a.hung[k] && k != c) ++otherHung;
    if (otherHung > 0)
        out += " " + std::to_string(otherHung) + " other communicator" +
               (otherHung == 1 ? " also waits" : "s also wait") + "; see below.";
    return out;
}

// "DESYNC: the ranks called AllReduce #3 of communicator 0x… with different sizes: rank 0 with 4 MiB, rank 1 with 8 MiB."
std::string desyncSentence(const HangAnalysis& a) {
    const Desync& d = a.desyncs.front();
    const CommunicatorProgress& comm = a.communicators[static_cast<size_t>(d.communicator)];
    // Group the ranks by what they called.
    std::vector<std::pair<std::string, std::vector<int>>> groups;
    for (const auto& part : d.parts) {
        std::string what = d.field == "collective" ? part.collective
                           : d.field == "dtype"    ? part.dtype
                                                   : formatBytes(part.bytes);
        const int rank = shownRank(comm.ranks[static_cast<size_t>(part.member)]);
        auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == what; });
        if (it == groups.end())
            groups.push_back({what, {rank}});
        else
            it->second.push_back(rank);
    }
    std::string out = "DESYNC: the ranks called " + p(describeSlot(comm, d.slot, d.parts.front().collective)) +
                      " of communicator " + p(comm.id) + " with different " +
                      (d.field == "collective" ? std::string("collectives")
                       : d.field == "dtype"    ? "datatypes"
                                               : "sizes") +
                      ": ";
    for (size_t i = 0; i < groups.size(); ++i)
        out += (i == 0 ? "" : ", ") + rankList(groups[i].second) + " with " + p(groups[i].first);
    return out + ".";
}

std::string desyncParagraph(const HangAnalysis& a) {
    std::string out = desyncSentence(a);
    out +=
        " NCCL does not check this: it corrupts results or hangs. Find why the ranks disagree (a rank on "
        "another code path, uneven batches or shapes).";
    if (a.desyncs.size() > 1) out += " " + std::to_string(a.desyncs.size() - 1) + " more desync(s) below.";
    return out;
}

constexpr const char* kHealthySentence =
    "HEALTHY: no rank is missing from a collective the others wait in, and no two ranks made the same call "
    "differently.";

std::string healthyParagraph(const HangAnalysis& a) {
    std::string out = kHealthySentence;
    for (size_t c = 0; c < a.communicators.size(); ++c) {
        if (!a.hung[c]) continue;
        const CommunicatorProgress& comm = a.communicators[c];
        const HungCollective& h = *a.hung[c];
        // Every member entered it (none is stuck), but some may have completed
        // it already: a snapshot can catch the last ones before they notice.
        const bool all = comm.size > 0 && h.waitingRanks.size() == static_cast<size_t>(comm.size);
        std::vector<int> waiting;
        for (int m : h.waitingRanks) waiting.push_back(shownRank(comm.ranks[static_cast<size_t>(m)]));
        const std::string call = p(describeSlot(comm, h.slot, h.collective));
        const std::string in = a.endKnown ? " in " + formatDuration(h.waitedNs) : std::string();
        out += all ? " But every rank of " + p(comm.id) + " entered " + call + " and none completed it" + in
                   : " But " + rankList(waiting) + " of " + p(comm.id) + (waiting.size() == 1 ? " has" : " have") +
                         " not completed " + call + in + ", which the others completed";
        out +=
            ": if the job is stuck, the collective itself is (NCCL, the network, a GPU), not a late rank; "
            "NCCL_DEBUG=INFO logs say more.";
        break;
    }
    if (a.communicators.empty()) out += " The inputs hold no collectives to compare.";
    return out;
}

std::string callText(const CommunicatorProgress& comm, const Call* c) {
    if (!c) return "-";
    return describeSlot(comm, c->slot, c->collective);
}

ordered_json callJson(const CommunicatorProgress& comm, const Call* c) {
    if (!c) return nullptr;
    ordered_json j;
    j["seq"] = c->slot.seq;
    j["collective"] = c->collective;
    j["label"] = describeSlot(comm, c->slot, c->collective);
    j["bytes"] = c->bytes ? ordered_json(*c->bytes) : ordered_json(nullptr);
    j["dtype"] = c->dtype.empty() ? ordered_json(nullptr) : ordered_json(c->dtype);
    j["entered_ns"] = c->enteredNs;
    j["completed"] = c->completed;
    j["completed_ns"] = c->completedNs ? ordered_json(*c->completedNs) : ordered_json(nullptr);
    j["evidence"] = toString(c->evidence);
    return j;
}

ordered_json itemJson(const std::optional<HostItem>& item) {
    if (!item) return nullptr;
    return {{"name", item->name}, {"start_ns", item->startNs}, {"end_ns", item->endNs}};
}

ordered_json hostJson(const HostActivity& h) {
    ordered_json j;
    j["last_api_call"] = itemJson(h.apiCall);
    j["last_range"] = itemJson(h.range);
    j["last_cpu_op"] = itemJson(h.cpuOp);
    j["last_flight_recorder_entry"] = itemJson(h.flightRecorderEntry);
    if (h.flightRecorderEntry) j["last_flight_recorder_entry"]["state"] = h.flightRecorderState;
    j["last_seen_ns"] = h.lastSeenNs ? ordered_json(*h.lastSeenNs) : ordered_json(nullptr);
    return j;
}

ordered_json intOrNull(int v) { return v >= 0 ? ordered_json(v) : ordered_json(nullptr); }

}  // namespace

std::string describeSlot(const CommunicatorProgress&, const SlotKey& slot, const std::string& collective) {
    return (collective.empty() ? std::string("collective") : collective) + " #" + std::to_string(slot.seq);
}

std::string hangHeadline(const HangAnalysis& a) {
    switch (a.verdict) {
        case Verdict::Hang:
            return hangSentence(a);
        case Verdict::Desync:
            return desyncSentence(a);
        case Verdict::Healthy:
            return kHealthySentence;
    }
    return {};
}

std::string hangParagraph(const HangAnalysis& a) {
    switch (a.verdict) {
        case Verdict::Hang:
            return hangParagraphOf(a);
        case Verdict::Desync:
            return desyncParagraph(a);
        case Verdict::Healthy:
            return healthyParagraph(a);
    }
    return {};
}

std::string formatHangText(const HangAnalysis& a) {
    std::string out = "overlapscope hang: " + std::to_string(a.communicators.size()) + " communicator" +
                      (a.communicators.size() == 1 ? "" : "s") + " from " + std::to_string(a.inputs.size()) + " input" +
                      (a.inputs.size() == 1 ? "" : "s") + "\n\n" + hangParagraph(a) + "\n";
    for (size_t c = 0; c < a.communicators.size(); ++c) {
        const CommunicatorProgress& comm = a.communicators[c];
        out += "\ncommunicator " + p(comm.id) + " (" + toString(comm.source) + ", " +
               (comm.size > 0 ? std::to_string(comm.size) + " ranks" : std::string("size unknown")) + ")";
        if (a.hung[c])
            out += ": " + std::to_string(a.hung[c]->waitingRanks.size()) + " waiting in " +
                   p(describeSlot(comm, a.hung[c]->slot, a.hung[c]->collective)) +
                   (a.endKnown ? " for " + formatDuration(a.hung[c]->waitedNs) : std::string());
        out += "\n";
        std::set<int> stuck;
        for (const StuckRank& s : a.stuck)
            if (s.communicator == static_cast<int>(c) && s.member >= 0) stuck.insert(s.member);
        for (size_t m = 0; m < comm.ranks.size(); ++m) {
            const RankProgress& r = comm.ranks[m];
            out += "  " + p(r.label) + ": last entered " + p(callText(comm, lastWith(r, false))) + ", last completed " +
                   p(callText(comm, lastWith(r, true))) + (stuck.count(static_cast<int>(m)) ? "  <- stuck" : "") + "\n";
        }
        for (const StuckRank& s : a.stuck)
            if (s.communicator == static_cast<int>(c) && s.member < 0) out += "  " + p(s.label) + "  <- stuck\n";
    }
    for (size_t i = 1; i < a.desyncs.size(); ++i) {
        const Desync& d = a.desyncs[i];
        const CommunicatorProgress& comm = a.communicators[static_cast<size_t>(d.communicator)];
        out += "desync: " + p(describeSlot(comm, d.slot, d.parts.front().collective)) + " of " + p(comm.id) +
               " differs in " + d.field + "\n";
    }
    for (const auto& w : a.warnings) out += "warning: " + p(w) + "\n";
    return out;
}

std::string formatHangJson(const HangAnalysis& a) {
    ordered_json j;
    j["format"] = "overlapscope-hang";
    j["version"] = kHangJsonVersion;
    j["inputs"] = a.inputs;
    j["verdict"] = toString(a.verdict);
    j["summary"] = hangParagraph(a);
    if (a.firstMissingCommunicator >= 0) {
        const auto c = static_cast<size_t>(a.firstMissingCommunicator);
        j["first_missing"] = {{"communicator", a.communicators[c].id},
                              {"seq", a.hung[c]->slot.seq},
                              {"collective", a.hung[c]->collective}};
    } else {
        j["first_missing"] = nullptr;
    }
    j["stuck_ranks"] = ordered_json::array();
    for (const StuckRank& s : a.stuck) {
        const CommunicatorProgress& comm = a.communicators[static_cast<size_t>(s.communicator)];
        ordered_json e;
        e["rank"] = intOrNull(s.rank);
        e["comm_rank"] = intOrNull(s.commRank);
        e["communicator"] = comm.id;
        e["label"] = s.label;
        e["in_inputs"] = s.member >= 0;
        if (s.member >= 0) {
            const RankProgress& r = comm.ranks[static_cast<size_t>(s.member)];
            e["last_entered"] = callJson(comm, lastWith(r, false));
            e["last_completed"] = callJson(comm, lastWith(r, true));
            e["waiting_in"] = s.waitingIn ? callJson(comm, &*s.waitingIn) : ordered_json(nullptr);
            e["host"] = hostJson(r.host);
        } else {
            e["last_entered"] = e["last_completed"] = e["waiting_in"] = e["host"] = nullptr;
        }
        j["stuck_ranks"].push_back(std::move(e));
    }
    j["desyncs"] = ordered_json::array();
    for (const Desync& d : a.desyncs) {
        const CommunicatorProgress& comm = a.communicators[static_cast<size_t>(d.communicator)];
        ordered_json e;
        e["communicator"] = comm.id;
        e["seq"] = d.slot.seq;
        e["collective"] = d.parts.front().collective;
        e["field"] = d.field;
        e["ranks"] = ordered_json::array();
        for (const auto& part : d.parts) {
            const RankProgress& r = comm.ranks[static_cast<size_t>(part.member)];
            e["ranks"].push_back({{"rank", intOrNull(r.rank)},
                                  {"comm_rank", intOrNull(r.commRank)},
                                  {"collective", part.collective},
                                  {"bytes", part.bytes ? ordered_json(*part.bytes) : ordered_json(nullptr)},
                                  {"dtype", part.dtype.empty() ? ordered_json(nullptr) : ordered_json(part.dtype)}});
        }
        j["desyncs"].push_back(std::move(e));
    }
    j["communicators"] = ordered_json::array();
    for (size_t c = 0; c < a.communicators.size(); ++c) {
        const CommunicatorProgress& comm = a.communicators[c];
        ordered_json e;
        e["id"] = comm.id;
        e["source"] = toString(comm.source);
        e["size"] = intOrNull(comm.size);
        e["seq_per_collective"] = comm.seqPerCollective;
        if (a.hung[c]) {
            ordered_json waiting = ordered_json::array();
            for (int m : a.hung[c]->waitingRanks) waiting.push_back(intOrNull(comm.ranks[static_cast<size_t>(m)].rank));
            e["hung"] = {{"seq", a.hung[c]->slot.seq},
                         {"collective", a.hung[c]->collective},
                         {"waiting_ranks", waiting},
                         {"waiting_since_ns", a.hung[c]->waitingSinceNs},
                         // Unknown from dumps alone: they record no time of their own.
                         {"waited_ns", a.endKnown ? ordered_json(a.hung[c]->waitedNs) : ordered_json(nullptr)}};
        } else {
            e["hung"] = nullptr;
        }
        e["ranks"] = ordered_json::array();
        for (const RankProgress& r : comm.ranks)
            e["ranks"].push_back({{"rank", intOrNull(r.rank)},
                                  {"comm_rank", intOrNull(r.commRank)},
                                  {"label", r.label},
                                  {"source", r.source},
                                  {"calls", r.calls.size()},
                                  {"last_entered", callJson(comm, lastWith(r, false))},
                                  {"last_completed", callJson(comm, lastWith(r, true))},
                                  {"unfinished_launches", r.unfinishedLaunches}});
        j["communicators"].push_back(std::move(e));
    }
    j["end_ns"] = a.endNs;
    j["origin_utc_ns"] = a.originUtcNs;
    j["warnings"] = a.warnings;
    return j.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace osc::hang
