// The cross-rank half of the hang analysis (docs/design.md section 4d),
// over sequences from any input. Per communicator: where each rank first
// waits (its first call entered and never completed); the call most ranks
// wait in is the hung one; members that never entered it are stuck (a
// Flight Recorder rank by its entries and its pg_status, never by a missing
// entry alone); calls ranks entered at the same place with a different
// collective, datatype, or size where the collective needs equal sizes,
// are desyncs.
#include "analyzer/hang/capture_join.h"
#include "analyzer/hang/hang.h"
#include "analyzer/hang/size_rules.h"

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

enum class Presence { Entered, NotEntered, Unknown };

// Whether a rank entered `slot`. A ring buffer keeps the newest calls: a
// call older than its oldest kept one was entered, one newer than its
// newest was not; a buffer with none of the group says nothing, unless the
// group's status does.
Presence presenceAt(const CommunicatorProgress& comm, const RankProgress& r, const SlotKey& slot) {
    if (callAt(r, slot)) return Presence::Entered;
    if (comm.seqPerCollective || !r.ringBuffer) return Presence::NotEntered;
    if (r.status) {
        const auto reaches = [&](const std::optional<uint64_t>& v) { return v && *v >= slot.seq; };
        return reaches(r.status->enqueued) || reaches(r.status->completed) ? Presence::Entered : Presence::NotEntered;
    }
    if (r.calls.empty()) return Presence::Unknown;
    return r.calls.back().slot.seq > slot.seq ? Presence::Entered : Presence::NotEntered;
}

// Whether a rank is known to have completed `seq` of a communicator that
// numbers all its calls on one counter (calls complete in order).
bool completedThrough(const RankProgress& r, uint64_t seq) {
    if (r.status && r.status->completed && *r.status->completed >= seq) return true;
    for (auto it = r.calls.rbegin(); it != r.calls.rend() && it->slot.seq >= seq; ++it)
        if (it->completed) return true;
    return false;
}

bool lowestWaits(const CommunicatorProgress& comm) { return comm.source == Source::FlightRecorder; }

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
            h.sinceKnown = false;
        }
        if (h.collective.empty()) h.collective = c->collective;  // pg_status knows no name
        h.waitingRanks.push_back(static_cast<int>(m));
        if (c->enteredKnown) {
            h.waitingSinceNs = h.sinceKnown ? std::min(h.waitingSinceNs, c->enteredNs) : c->enteredNs;
            h.sinceKnown = true;
        }
    }
    std::optional<HungCollective> best;
    for (auto& [slot, h] : waits) {
        if (!h.sinceKnown) h.waitingSinceNs = endNs;
        h.waitedNs = std::max<TimeNs>(0, endNs - h.waitingSinceNs);
        // Without a known end (dumps carry no time of their own) nothing is
        // known to be merely in flight.
        if (endKnown && h.waitedNs < settings.minWaitNs) {
            warnings.push_back(comm.id + ": " + std::to_string(h.waitingRanks.size()) + " rank(s) entered " +
                               (h.collective.empty() ? std::string("collective") : h.collective) + " #" +
                               std::to_string(slot.seq) + " only " + std::to_string(h.waitedNs / 1'000'000) +
                               " ms before the inputs end: counted as in flight, not hung (--min-wait-ms)");
            continue;
        }
        // Flight Recorder groups number every call on one counter and
        // complete them in order: the lowest call some rank waits in holds
        // up the rest, also where a ring buffer lost a rank's entry of it.
        // Elsewhere (numbers per type, or trace order that may start late
        // on one rank): the call most ranks wait in.
        const bool better = !best || (lowestWaits(comm) ? slot.seq < best->slot.seq
                                                        : h.waitingRanks.size() > best->waitingRanks.size() ||
                                                              (h.waitingRanks.size() == best->waitingRanks.size() &&
                                                               h.waitingSinceNs < best->waitingSinceNs));
        if (better) best = h;
    }
    if (best && lowestWaits(comm)) {
        // Who waits in it: every member that entered it and did not complete
        // it, its entry lost or not.
        best->waitingRanks.clear();
        for (size_t m = 0; m < comm.ranks.size(); ++m) {
            const RankProgress& r = comm.ranks[m];
            if (presenceAt(comm, r, best->slot) == Presence::Entered && !completedThrough(r, best->slot.seq))
                best->waitingRanks.push_back(static_cast<int>(m));
            if (best->collective.empty())
                if (const Call* c = callAt(r, best->slot)) best->collective = c->collective;
        }
    }
    return best;
}

// The members of `comm` that never entered `slot`, those whose inputs
// cannot tell, and members no input holds.
void findStuck(HangAnalysis& a, int index, const HungCollective& hung) {
    const CommunicatorProgress& comm = a.communicators[static_cast<size_t>(index)];
    std::set<int> present;
    for (size_t m = 0; m < comm.ranks.size(); ++m) {
        const RankProgress& r = comm.ranks[m];
        if (r.commRank >= 0) present.insert(r.commRank);
        const Presence p = presenceAt(comm, r, hung.slot);
        if (p == Presence::Entered) continue;
        StuckRank s;
        s.communicator = index;
        s.member = static_cast<int>(m);
        s.rank = r.rank;
        s.commRank = r.commRank;
        s.label = r.label;
        if (const Call* w = firstUnfinished(r)) s.waitingIn = *w;
        (p == Presence::NotEntered ? a.stuck : a.unknown).push_back(std::move(s));
    }
    if (comm.size <= 0 || comm.source == Source::KernelOrder) return;
    const std::set<int> inInputs(a.inputRanks.begin(), a.inputRanks.end());
    for (int k = 0; k < comm.size; ++k) {
        if (present.count(k)) continue;
        StuckRank s;
        s.communicator = index;
        s.commRank = k;
        if (static_cast<size_t>(k) < comm.memberRanks.size())
            s.rank = static_cast<int>(comm.memberRanks[static_cast<size_t>(k)]);
        // A rank some input holds says nothing of this group: not absent, unknown.
        if (s.rank >= 0 && inInputs.count(s.rank)) {
            s.label = "rank " + std::to_string(s.rank) + " (its input holds nothing of " + comm.id + ")";
            a.unknown.push_back(std::move(s));
            continue;
        }
        s.label = (s.rank >= 0 ? "rank " + std::to_string(s.rank) : "rank " + std::to_string(k) + " of " + comm.id) +
                  " (no input holds it)";
        a.stuck.push_back(std::move(s));
    }
}

void findDesyncs(const CommunicatorProgress& comm, int index, std::vector<Desync>& out,
                 std::vector<Desync>& uncertain) {
    struct At {
        const SlotKey* slot;
        int member;
        const Call* call;
    };
    if (comm.ranks.size() < 2) return;  // one rank disagrees with nobody
    std::vector<At> all;
    for (size_t m = 0; m < comm.ranks.size(); ++m)
        for (const Call& c : comm.ranks[m].calls)
            if (c.evidence != Evidence::StatusTable) all.push_back({&c.slot, static_cast<int>(m), &c});
    std::stable_sort(all.begin(), all.end(), [](const At& x, const At& y) { return *x.slot < *y.slot; });
    for (size_t i = 0; i < all.size();) {
        size_t j = i;
        while (j < all.size() && *all[j].slot == *all[i].slot) ++j;
        if (j - i >= 2) {
            std::vector<std::pair<int, const Call*>> calls;
            for (size_t k = i; k < j; ++k) calls.emplace_back(all[k].member, all[k].call);
            const SizeVerdict v = compareCalls(calls, comm);
            if (!v.field.empty()) {
                Desync d;
                d.communicator = index;
                d.slot = *all[i].slot;
                d.field = v.field;
                d.note = v.note;
                for (const auto& [m, c] : calls) d.parts.push_back({m, c->collective, c->dtype, c->bytes});
                (v.uncertain ? uncertain : out).push_back(std::move(d));
            }
        }
        i = j;
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
    a.inputRanks = std::move(sequences.inputRanks);
    a.hung.resize(a.communicators.size());
    for (size_t c = 0; c < a.communicators.size(); ++c) {
        const int index = static_cast<int>(c);
        // A capture's communicator joined to a dump's group speaks through it.
        if (!a.communicators[c].joinedTo.empty()) continue;
        a.hung[c] = findHung(a.communicators[c], a.endNs, sequences.endKnown, settings, a.warnings);
        if (a.hung[c]) findStuck(a, index, *a.hung[c]);
        findDesyncs(a.communicators[c], index, a.desyncs, a.uncertain);
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
    a.gpu = gpuStatesAtHungCalls(a);
    return a;
}

HangAnalysis analyzeHang(const Capture* capture, const std::vector<FlightRecorderDump>& dumps,
                         const HangSettings& settings) {
    JobSequences fr;
    if (!dumps.empty())
        fr = sequencesFromFlightRecorder(dumps, capture ? std::optional<int64_t>(capture->originUtcNs) : std::nullopt);
    return analyzeCaptureAndDumps(capture, dumps.empty() ? std::nullopt : std::optional<JobSequences>(std::move(fr)),
                                  settings);
}

HangAnalysis analyzeCaptureAndDumps(const Capture* capture, std::optional<JobSequences> dumps,
                                    const HangSettings& settings) {
    JobSequences all;
    if (capture) all = sequencesFromCapture(*capture);
    if (dumps) {
        if (!capture) {
            all = std::move(*dumps);
        } else {
            for (auto& i : dumps->inputs) all.inputs.push_back(std::move(i));
            for (auto& w : dumps->warnings) all.warnings.push_back(std::move(w));
            all.inputRanks.insert(all.inputRanks.end(), dumps->inputRanks.begin(), dumps->inputRanks.end());
            std::sort(all.inputRanks.begin(), all.inputRanks.end());
            all.inputRanks.erase(std::unique(all.inputRanks.begin(), all.inputRanks.end()), all.inputRanks.end());
            const size_t firstDumpGroup = all.communicators.size();
            for (auto& c : dumps->communicators) all.communicators.push_back(std::move(c));
            all.endNs = std::max(all.endNs, dumps->endNs);
            joinCapturesToDumps(all, firstDumpGroup);
        }
    }
    return analyzeSequences(std::move(all), settings);
}

}  // namespace osc::hang
