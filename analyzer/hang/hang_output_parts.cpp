#include "analyzer/hang/hang_output_parts.h"

#include "analyzer/capture/printable_text.h"
#include "analyzer/hang/hang_output.h"
#include "analyzer/metrics/bottleneck.h"
#include "analyzer/report/report_format.h"

#include <algorithm>
#include <ctime>
#include <set>

namespace osc::hang {

using report::formatDuration;

std::string p(std::string_view text) { return printableLine(text, 300); }

std::string wallClock(const HangAnalysis& a, TimeNs t) {
    int64_t ns = 0;
    if (a.originUtcNs <= 0 || __builtin_add_overflow(a.originUtcNs, t, &ns) || ns < 0) return formatDuration(t);
    const std::time_t secs = static_cast<std::time_t>(ns / 1'000'000'000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char out[48];
    std::snprintf(out, sizeof out, "%02d:%02d:%02d.%03d UTC", tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<int>((ns / 1'000'000) % 1000));
    return out;
}

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
    // A job of thousands: the list stays one line.
    constexpr size_t kShown = 12;
    if (parts.size() > kShown) {
        const size_t more = parts.size() - kShown;
        parts.resize(kShown);
        parts.push_back(std::to_string(more) + " more");
    }
    return (ranks.size() == 1 ? "rank " : "ranks ") + listInWords(parts);
}

int shownRank(const RankProgress& r) { return r.rank >= 0 ? r.rank : r.commRank; }
int shownRank(const StuckRank& s) { return s.rank >= 0 ? s.rank : s.commRank; }

const Call* lastCall(const RankProgress& r, bool completedOnly) {
    for (auto it = r.calls.rbegin(); it != r.calls.rend(); ++it)
        if (!completedOnly || it->completed) return &*it;
    return nullptr;
}

std::string hostSentence(const HangAnalysis& a, const RankProgress& r) {
    const HostActivity& h = r.host;
    std::vector<std::string> parts;
    if (h.apiCall)
        parts.push_back("its last CUDA call was " + p(h.apiCall->name) + " at " + wallClock(a, h.apiCall->startNs));
    if (h.range)
        parts.push_back("its last NVTX range '" + p(h.range->name) + "' began at " + wallClock(a, h.range->startNs));
    if (h.cpuOp) parts.push_back("its last operator was " + p(h.cpuOp->name) + " at " + wallClock(a, h.cpuOp->startNs));
    if (parts.empty()) return "nothing of its host was recorded";
    std::string out = listInWords(parts);
    if (h.lastSeenNs && a.endNs > *h.lastSeenNs)
        out += "; nothing after that for " + formatDuration(a.endNs - *h.lastSeenNs) + " before the inputs end";
    return out;
}

std::string healthyHeadline(const HangAnalysis& a) {
    std::string out =
        "HEALTHY: no rank is missing from a collective the others wait in, and no two ranks made the same call "
        "differently.";
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

namespace {

std::string callText(const CommunicatorProgress& comm, const Call* c) {
    if (!c) return "-";
    return describeSlot(comm, c->slot, c->collective);
}

}  // namespace

std::string progressTables(const HangAnalysis& a) {
    std::string out;
    for (size_t c = 0; c < a.communicators.size(); ++c) {
        const CommunicatorProgress& comm = a.communicators[c];
        out += "\ncommunicator " + p(comm.id) + " (" + toString(comm.source) + ", " +
               (comm.size > 0 ? std::to_string(comm.size) + " ranks" : std::string("size unknown")) + ")";
        if (!comm.joinedTo.empty()) out += ": joined to " + p(comm.joinedTo) + ", whose verdict it informs";
        if (a.hung[c])
            out += ": " + std::to_string(a.hung[c]->waitingRanks.size()) + " waiting in " +
                   p(describeSlot(comm, a.hung[c]->slot, a.hung[c]->collective)) +
                   (a.endKnown ? " for " + formatDuration(a.hung[c]->waitedNs) : std::string());
        out += "\n";
        std::set<int> stuck, unknown;
        for (const StuckRank& s : a.stuck)
            if (s.communicator == static_cast<int>(c) && s.member >= 0) stuck.insert(s.member);
        for (const StuckRank& s : a.unknown)
            if (s.communicator == static_cast<int>(c) && s.member >= 0) unknown.insert(s.member);
        for (size_t m = 0; m < comm.ranks.size(); ++m) {
            const RankProgress& r = comm.ranks[m];
            out += "  " + p(r.label) + ": last entered " + p(callText(comm, lastCall(r, false))) + ", last completed " +
                   p(callText(comm, lastCall(r, true)));
            if (r.status) {
                std::vector<std::string> s;
                if (r.status->enqueued) s.push_back(std::to_string(*r.status->enqueued) + " enqueued");
                if (r.status->started) s.push_back(std::to_string(*r.status->started) + " started");
                if (r.status->completed) s.push_back(std::to_string(*r.status->completed) + " completed");
                out += "; pg_status " + (s.empty() ? std::string("counts no call of it") : listInWords(s)) +
                       " (tied by " + r.status->tiedBy + ")";
            }
            if (r.ringBuffer) out += "; " + std::to_string(r.calls.size()) + " calls in its buffer";
            out += stuck.count(static_cast<int>(m))     ? "  <- stuck\n"
                   : unknown.count(static_cast<int>(m)) ? "  <- unknown\n"
                                                        : "\n";
        }
        for (const StuckRank& s : a.stuck)
            if (s.communicator == static_cast<int>(c) && s.member < 0) out += "  " + p(s.label) + "  <- stuck\n";
        for (const StuckRank& s : a.unknown)
            if (s.communicator == static_cast<int>(c) && s.member < 0) out += "  " + p(s.label) + "  <- unknown\n";
    }
    return out;
}

}  // namespace osc::hang
