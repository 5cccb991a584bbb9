// `overlapscope hang --format json` (docs/cli.md lists the fields).
#include "analyzer/hang/hang_output.h"
#include "analyzer/hang/hang_output_parts.h"

#include <nlohmann/json.hpp>

namespace osc::hang {
namespace {

using ordered_json = nlohmann::ordered_json;

ordered_json intOrNull(int v) { return v >= 0 ? ordered_json(v) : ordered_json(nullptr); }
template <typename T>
ordered_json orNull(const std::optional<T>& v) {
    return v ? ordered_json(*v) : ordered_json(nullptr);
}

ordered_json frameJson(const std::shared_ptr<const FlightRecorderFrame>& f) {
    if (!f) return nullptr;
    return {{"file", f->filename},
            {"line", f->line >= 0 ? ordered_json(f->line) : ordered_json(nullptr)},
            {"function", f->name}};
}

ordered_json callJson(const CommunicatorProgress& comm, const Call* c) {
    if (!c) return nullptr;
    ordered_json j;
    j["seq"] = c->slot.seq;
    j["collective"] = c->collective.empty() ? ordered_json(nullptr) : ordered_json(c->collective);
    j["label"] = describeSlot(comm, c->slot, c->collective);
    j["bytes"] = orNull(c->bytes);
    j["dtype"] = c->dtype.empty() ? ordered_json(nullptr) : ordered_json(c->dtype);
    j["entered_ns"] = c->enteredKnown ? ordered_json(c->enteredNs) : ordered_json(nullptr);
    j["completed"] = c->completed;
    j["completed_ns"] = orNull(c->completedNs);
    j["evidence"] = toString(c->evidence);
    j["frame"] = frameJson(c->frame);
    return j;
}

ordered_json itemJson(const std::optional<HostItem>& item) {
    if (!item) return nullptr;
    return {{"name", item->name},
            {"start_ns", item->timeKnown ? ordered_json(item->startNs) : ordered_json(nullptr)},
            {"end_ns", item->timeKnown ? ordered_json(item->endNs) : ordered_json(nullptr)}};
}

ordered_json hostJson(const HostActivity& h) {
    ordered_json j;
    j["last_api_call"] = itemJson(h.apiCall);
    j["last_range"] = itemJson(h.range);
    j["last_cpu_op"] = itemJson(h.cpuOp);
    j["last_flight_recorder_entry"] = itemJson(h.flightRecorderEntry);
    if (h.flightRecorderEntry) {
        j["last_flight_recorder_entry"]["state"] = h.flightRecorderState;
        j["last_flight_recorder_entry"]["frame"] = frameJson(h.flightRecorderFrame);
    }
    j["last_seen_ns"] = orNull(h.lastSeenNs);
    return j;
}

ordered_json statusJson(const std::optional<GroupStatus>& s) {
    if (!s) return nullptr;
    return {{"enqueued", orNull(s->enqueued)},
            {"started", orNull(s->started)},
            {"completed", orNull(s->completed)},
            {"tied_by", s->tiedBy}};
}

ordered_json gpuJson(const HangAnalysis& a, size_t c, int member) {
    for (const GpuState& g : a.gpu)
        if (g.communicator == static_cast<int>(c) && g.member == member)
            return {
                {"state", toString(g.kind)}, {"at_ns", orNull(g.at)}, {"capture_communicator", g.captureCommunicator}};
    return nullptr;
}

ordered_json rankRefJson(const HangAnalysis& a, const StuckRank& s) {
    const CommunicatorProgress& comm = a.communicators[static_cast<size_t>(s.communicator)];
    ordered_json e;
    e["rank"] = intOrNull(s.rank);
    e["comm_rank"] = intOrNull(s.commRank);
    e["communicator"] = comm.id;
    e["label"] = s.label;
    e["in_inputs"] = s.member >= 0;
    if (s.member >= 0) {
        const RankProgress& r = comm.ranks[static_cast<size_t>(s.member)];
        e["last_entered"] = callJson(comm, lastCall(r, false));
        e["last_completed"] = callJson(comm, lastCall(r, true));
        e["waiting_in"] = s.waitingIn ? callJson(comm, &*s.waitingIn) : ordered_json(nullptr);
        e["status"] = statusJson(r.status);
        e["host"] = hostJson(r.host);
        e["gpu"] = gpuJson(a, static_cast<size_t>(s.communicator), s.member);
    } else {
        e["last_entered"] = e["last_completed"] = e["waiting_in"] = e["status"] = e["host"] = e["gpu"] = nullptr;
    }
    return e;
}

ordered_json desyncJson(const HangAnalysis& a, const Desync& d) {
    const CommunicatorProgress& comm = a.communicators[static_cast<size_t>(d.communicator)];
    ordered_json e;
    e["communicator"] = comm.id;
    e["seq"] = d.slot.seq;
    e["collective"] = d.parts.front().collective;
    e["field"] = d.field;
    if (!d.note.empty()) e["note"] = d.note;
    e["ranks"] = ordered_json::array();
    for (const auto& part : d.parts) {
        const RankProgress& r = comm.ranks[static_cast<size_t>(part.member)];
        e["ranks"].push_back({{"rank", intOrNull(r.rank)},
                              {"comm_rank", intOrNull(r.commRank)},
                              {"collective", part.collective},
                              {"bytes", orNull(part.bytes)},
                              {"dtype", part.dtype.empty() ? ordered_json(nullptr) : ordered_json(part.dtype)}});
    }
    return e;
}

}  // namespace

std::string formatHangJson(const HangAnalysis& a) {
    ordered_json j;
    j["format"] = "overlapscope-hang";
    j["version"] = kHangJsonVersion;
    j["inputs"] = a.inputs;
    j["verdict"] = toString(a.verdict);
    j["summary"] = hangParagraph(a);
    j["summary_lines"] = verdictLines(a);
    if (a.firstMissingCommunicator >= 0) {
        const auto c = static_cast<size_t>(a.firstMissingCommunicator);
        j["first_missing"] = {{"communicator", a.communicators[c].id},
                              {"seq", a.hung[c]->slot.seq},
                              {"collective", a.hung[c]->collective}};
    } else {
        j["first_missing"] = nullptr;
    }
    j["stuck_ranks"] = ordered_json::array();
    for (const StuckRank& s : a.stuck) j["stuck_ranks"].push_back(rankRefJson(a, s));
    j["unknown_ranks"] = ordered_json::array();
    for (const StuckRank& s : a.unknown) j["unknown_ranks"].push_back(rankRefJson(a, s));
    j["desyncs"] = ordered_json::array();
    for (const Desync& d : a.desyncs) j["desyncs"].push_back(desyncJson(a, d));
    j["uncertain"] = ordered_json::array();
    for (const Desync& d : a.uncertain) j["uncertain"].push_back(desyncJson(a, d));
    j["input_ranks"] = a.inputRanks;
    j["communicators"] = ordered_json::array();
    for (size_t c = 0; c < a.communicators.size(); ++c) {
        const CommunicatorProgress& comm = a.communicators[c];
        ordered_json e;
        e["id"] = comm.id;
        e["source"] = toString(comm.source);
        e["size"] = intOrNull(comm.size);
        e["seq_per_collective"] = comm.seqPerCollective;
        e["member_ranks"] = comm.memberRanks.empty() ? ordered_json(nullptr) : ordered_json(comm.memberRanks);
        e["joined_to"] = comm.joinedTo.empty() ? ordered_json(nullptr) : ordered_json(comm.joinedTo);
        if (a.hung[c]) {
            ordered_json waiting = ordered_json::array();
            for (int m : a.hung[c]->waitingRanks) waiting.push_back(intOrNull(comm.ranks[static_cast<size_t>(m)].rank));
            e["hung"] = {{"seq", a.hung[c]->slot.seq},
                         {"collective", a.hung[c]->collective},
                         {"waiting_ranks", waiting},
                         {"waiting_since_ns",
                          a.hung[c]->sinceKnown ? ordered_json(a.hung[c]->waitingSinceNs) : ordered_json(nullptr)},
                         // Unknown from dumps alone: they record no time of their own.
                         {"waited_ns", a.endKnown && a.hung[c]->sinceKnown ? ordered_json(a.hung[c]->waitedNs)
                                                                           : ordered_json(nullptr)}};
        } else {
            e["hung"] = nullptr;
        }
        e["ranks"] = ordered_json::array();
        for (size_t m = 0; m < comm.ranks.size(); ++m) {
            const RankProgress& r = comm.ranks[m];
            e["ranks"].push_back({{"rank", intOrNull(r.rank)},
                                  {"comm_rank", intOrNull(r.commRank)},
                                  {"label", r.label},
                                  {"source", r.source},
                                  {"calls", r.calls.size()},
                                  {"last_entered", callJson(comm, lastCall(r, false))},
                                  {"last_completed", callJson(comm, lastCall(r, true))},
                                  {"status", statusJson(r.status)},
                                  {"gpu", a.hung[c] ? gpuJson(a, c, static_cast<int>(m)) : ordered_json(nullptr)},
                                  {"unfinished_launches", r.unfinishedLaunches}});
        }
        j["communicators"].push_back(std::move(e));
    }
    j["end_ns"] = a.endNs;
    j["origin_utc_ns"] = a.originUtcNs;
    j["warnings"] = a.warnings;
    return j.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace osc::hang
