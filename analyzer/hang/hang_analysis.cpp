// The cross-rank half of the hang analysis (docs/design.md section 4d),
// over sequences from any input. Per communicator: where each rank first
// waits (its first call entered and never completed); the call most ranks
// wait in is the hung one; members that never entered it are stuck; calls
// ranks entered at the same place with a different collective, size or
// datatype are desyncs.
#include "analyzer/hang/hang.h"

#include <algorithm>
#include <map>
#include <set>

namespace osc::hang {
namespace {

const Call* firstUnfinished(const RankProgress& r) {
    for (const Call& c : r.calls)
        if (!c.completed) return &c;
    return nullptr;
}

const Call* callAt(const RankProgress& r, const SlotKey& slot) {
    for (const Call& c : r.calls)
        if (c.slot == slot) return &c;
    return nullptr;
}

std::optional<HungCollective> findHung(const CommunicatorProgress& comm, TimeNs endNs, bool endKnown,
                                       const HangSettings& settings, std::vector<std::string>& warnings) {
    std::map<SlotKey, HungCollective> waits;
    for (size_t m = 0; m < comm.ranks.size(); ++m) {
        const Call* c = firstUnfinished(comm.ranks[m]);
        if (!c) continue;
        auto [it, fresh] = waits.try_emplace(c->slot);
        HungCollective& h = it->second;
        if (fresh) {
            h.slot = c->slot;
            h.collective = c->collective;
            h.waitingSinceNs = c->enteredNs;
        }
        h.waitingRanks.push_back(static_cast<int>(m));
        h.waitingSinceNs = std::min(h.waitingSinceNs, c->enteredNs);
    }
    std::optional<HungCollective> best;
    for (auto& [slot, h] : waits) {
        h.waitedNs = std::max<TimeNs>(0, endNs - h.waitingSinceNs);
        // Without a known end (dumps carry no time of their own) nothing is
        // known to be merely in flight.
        if (endKnown && h.waitedNs < settings.minWaitNs) {
            warnings.push_back(comm.id + ": " + std::to_string(h.waitingRanks.size()) + " rank(s) entered " +
                               h.collective + " #" + std::to_string(slot.seq) + " only " +
                               std::to_string(h.waitedNs / 1'000'000) +
                               " ms before the inputs end: counted as in flight, not hung (--min-wait-ms)");
            continue;
        }
        if (!best || h.waitingRanks.size() > best->waitingRanks.size() ||
            (h.waitingRanks.size() == best->waitingRanks.size() && h.waitingSinceNs < best->waitingSinceNs))
            best = h;
    }
    return best;
}

// The members of `comm` that never entered `slot`, and ranks no input holds.
void findStuck(const HangAnalysis& a, int index, const HungCollective& hung, std::vector<StuckRank>& out) {
    const CommunicatorProgress& comm = a.communicators[static_cast<size_t>(index)];
    std::set<int> present;
    for (size_t m = 0; m < comm.ranks.size(); ++m) {
        const RankProgress& r = comm.ranks[m];
        if (r.commRank >= 0) present.insert(r.commRank);
        if (callAt(r, hung.slot)) continue;
        StuckRank s;
        s.communicator = index;
        s.member = static_cast<int>(m);
        s.rank = r.rank;
        s.commRank = r.commRank;
        s.label = r.label;
        if (const Call* w = firstUnfinished(r)) s.waitingIn = *w;
        out.push_back(std::move(s));
    }
    if (comm.size <= 0 || comm.source == Source::KernelOrder) return;
    for (int k = 0; k < comm.size; ++k) {
        if (present.count(k)) continue;
        StuckRank s;
        s.communicator = index;
        s.commRank = k;
        s.label = "rank " + std::to_string(k) + " of " + comm.id + " (no input holds it)";
        out.push_back(std::move(s));
    }
}

void findDesyncs(const CommunicatorProgress& comm, int index, std::vector<Desync>& out) {
    std::map<SlotKey, std::vector<std::pair<int, const Call*>>> bySlot;
    for (size_t m = 0; m < comm.ranks.size(); ++m)
        for (const Call& c : comm.ranks[m].calls) bySlot[c.slot].emplace_back(static_cast<int>(m), &c);
    for (const auto& [slot, calls] : bySlot) {
        if (calls.size() < 2) continue;
        std::string field;
        const Call& first = *calls.front().second;
        for (const auto& [m, c] : calls) {
            if (c->collective != first.collective) {
                field = "collective";
                break;
            }
            const bool sizesDiffer = (c->bytes && first.bytes && *c->bytes != *first.bytes) ||
                                     (!c->shapes.empty() && !first.shapes.empty() && c->bytes == first.bytes &&
                                      !c->bytes && c->shapes != first.shapes);
            if (sizesDiffer && field.empty()) field = "bytes";
            if (!c->dtype.empty() && !first.dtype.empty() && c->dtype != first.dtype && field.empty()) field = "dtype";
        }
        if (field.empty()) continue;
        Desync d;
        d.communicator = index;
        d.slot = slot;
        d.field = field;
        for (const auto& [m, c] : calls) d.parts.push_back({m, c->collective, c->dtype, c->bytes});
        out.push_back(std::move(d));
    }
}

}  // namespace

std::string toString(Verdict verdict) {
    switch (verdict) {
        case Verdict::Healthy:
            return "healthy";
        case Verdict::Hang:
            return "hang";
        case Verdict::Desync:
            return "desync";
    }
    return "unknown";
}

HangAnalysis analyzeSequences(JobSequences sequences, const HangSettings& settings) {
    HangAnalysis a;
    a.inputs = std::move(sequences.inputs);
    a.communicators = std::move(sequences.communicators);
    a.endNs = sequences.endNs;
    a.endKnown = sequences.endKnown;
    a.originUtcNs = sequences.originUtcNs;
    a.warnings = std::move(sequences.warnings);
    a.hung.resize(a.communicators.size());
    for (size_t c = 0; c < a.communicators.size(); ++c) {
        const int index = static_cast<int>(c);
        a.hung[c] = findHung(a.communicators[c], a.endNs, sequences.endKnown, settings, a.warnings);
        if (a.hung[c]) findStuck(a, index, *a.hung[c], a.stuck);
        findDesyncs(a.communicators[c], index, a.desyncs);
    }
    // Where to look first: the hung collective that stuck ranks hold up, waited on the longest.
    for (size_t c = 0; c < a.hung.size(); ++c) {
        if (!a.hung[c]) continue;
        const bool holdsUp = std::any_of(a.stuck.begin(), a.stuck.end(),
                                         [&](const StuckRank& s) { return s.communicator == static_cast<int>(c); });
        if (!holdsUp) continue;
        if (a.firstMissingCommunicator < 0 ||
            a.hung[c]->waitingSinceNs < a.hung[static_cast<size_t>(a.firstMissingCommunicator)]->waitingSinceNs)
            a.firstMissingCommunicator = static_cast<int>(c);
    }
    a.verdict = !a.stuck.empty() ? Verdict::Hang : !a.desyncs.empty() ? Verdict::Desync : Verdict::Healthy;
    return a;
}

HangAnalysis analyzeHang(const Capture* capture, const std::vector<FlightRecorderDump>& dumps,
                         const HangSettings& settings) {
    JobSequences all;
    if (capture) all = sequencesFromCapture(*capture);
    if (!dumps.empty()) {
        JobSequences fr =
            sequencesFromFlightRecorder(dumps, capture ? std::optional<int64_t>(capture->originUtcNs) : std::nullopt);
        if (!capture) {
            all = std::move(fr);
        } else {
            for (auto& i : fr.inputs) all.inputs.push_back(std::move(i));
            for (auto& c : fr.communicators) all.communicators.push_back(std::move(c));
            for (auto& w : fr.warnings) all.warnings.push_back(std::move(w));
            all.endNs = std::max(all.endNs, fr.endNs);
        }
    }
    return analyzeSequences(std::move(all), settings);
}

}  // namespace osc::hang
