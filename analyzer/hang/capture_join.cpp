#include "analyzer/hang/capture_join.h"

#include "analyzer/hang/hang_output.h"
#include "analyzer/hang/size_rules.h"

#include <algorithm>
#include <limits>
#include <map>

namespace osc::hang {
namespace {

// PyTorch records the entry, then calls NCCL: the capture's call comes
// after, by microseconds, or by seconds where NCCL first connects the
// communicator. One host's clocks may read a little apart.
constexpr TimeNs kBefore = 100'000'000;
constexpr TimeNs kAfter = 5'000'000'000;
// Of each rank, the dump's newest calls are tried: enough to tell groups apart.
constexpr size_t kCallsTried = 64;

const RankProgress* rankIn(const CommunicatorProgress& c, int rank) {
    for (const RankProgress& r : c.ranks)
        if (r.rank == rank && rank >= 0) return &r;
    return nullptr;
}

// A PyTorch trace's process group numbered by Seq is the dump's group of
// the same name, and its Seq is the dump's collective_seq_id.
bool sameNamedGroup(const CommunicatorProgress& capture, const CommunicatorProgress& group) {
    if (capture.source != Source::PyTorchSeq) return false;
    const std::string& id = group.id;
    return id.starts_with(capture.id) && (id.size() == capture.id.size() || id[capture.id.size()] == ' ');
}

// One capture rank's calls by entry time, with their collective families.
class CallIndex {
public:
    explicit CallIndex(const RankProgress& r) : rank_(r) {
        for (size_t i = 0; i < r.calls.size(); ++i)
            if (r.calls[i].enteredKnown) byTime_.emplace_back(r.calls[i].enteredNs, i);
        std::sort(byTime_.begin(), byTime_.end());
    }
    // The call nearest after `f` was entered, of its family, within the window.
    const Call* near(const Call& f) {
        if (!f.enteredKnown) return nullptr;
        const std::string family = collectiveFamily(f.collective);
        if (family.empty()) return nullptr;
        const Call* best = nullptr;
        TimeNs bestDelta = std::numeric_limits<TimeNs>::max();
        auto it = std::lower_bound(byTime_.begin(), byTime_.end(), std::pair(f.enteredNs - kBefore, size_t{0}));
        for (; it != byTime_.end() && it->first <= f.enteredNs + kAfter; ++it) {
            const Call& c = rank_.calls[it->second];
            if (familyOf(it->second) != family) continue;
            const TimeNs delta = std::abs(c.enteredNs - f.enteredNs);
            if (delta < bestDelta) {
                best = &c;
                bestDelta = delta;
            }
        }
        return best;
    }

private:
    const std::string& familyOf(size_t i) {
        auto it = families_.find(i);
        if (it == families_.end()) it = families_.emplace(i, collectiveFamily(rank_.calls[i].collective)).first;
        return it->second;
    }
    const RankProgress& rank_;
    std::vector<std::pair<TimeNs, size_t>> byTime_;
    std::map<size_t, std::string> families_;
};

const Call* counterpart(const CommunicatorProgress& capture, const RankProgress& captureRank,
                        const CommunicatorProgress& group, const Call& f, CallIndex& index) {
    if (sameNamedGroup(capture, group)) {
        for (const Call& c : captureRank.calls)
            if (c.slot.seq == f.slot.seq) return &c;
        return nullptr;
    }
    return index.near(f);
}

}  // namespace

void joinCapturesToDumps(JobSequences& all, size_t firstDumpGroup) {
    for (size_t c = 0; c < firstDumpGroup && c < all.communicators.size(); ++c) {
        CommunicatorProgress& capture = all.communicators[c];
        if (capture.source == Source::KernelOrder) continue;  // one for the whole job, every communicator mixed
        size_t bestScore = 0;
        const CommunicatorProgress* best = nullptr;
        for (size_t g = firstDumpGroup; g < all.communicators.size(); ++g) {
            const CommunicatorProgress& group = all.communicators[g];
            size_t score = 0;
            for (const RankProgress& r : group.ranks) {
                const RankProgress* mine = rankIn(capture, r.rank);
                if (!mine) continue;
                CallIndex index(*mine);
                const size_t from = r.calls.size() > kCallsTried ? r.calls.size() - kCallsTried : 0;
                for (size_t i = from; i < r.calls.size(); ++i)
                    if (counterpart(capture, *mine, group, r.calls[i], index)) ++score;
            }
            if (score > bestScore) {
                bestScore = score;
                best = &group;
            }
        }
        if (best) capture.joinedTo = best->id;
    }
}

std::string toString(GpuState::Kind kind) {
    switch (kind) {
        case GpuState::Kind::Finished:
            return "finished";
        case GpuState::Kind::Running:
            return "running";
        case GpuState::Kind::NotStarted:
            return "not-started";
        case GpuState::Kind::NeverLaunched:
            return "never-launched";
        case GpuState::Kind::CaptureEnded:
            return "capture-ended";
    }
    return "unknown";
}

std::vector<GpuState> gpuStatesAtHungCalls(const HangAnalysis& a) {
    std::vector<GpuState> out;
    for (size_t g = 0; g < a.communicators.size(); ++g) {
        const CommunicatorProgress& group = a.communicators[g];
        if (!a.hung[g] || group.source != Source::FlightRecorder) continue;
        std::vector<const CommunicatorProgress*> joined;
        for (const CommunicatorProgress& c : a.communicators)
            if (c.joinedTo == group.id) joined.push_back(&c);
        if (joined.empty()) continue;
        for (size_t m = 0; m < group.ranks.size(); ++m) {
            const RankProgress& r = group.ranks[m];
            const Call* f = nullptr;
            for (const Call& c : r.calls)
                if (c.slot == a.hung[g]->slot) f = &c;
            if (!f)
                for (const Call& c : r.calls)
                    if (!c.completed && !f) f = &c;
            for (const CommunicatorProgress* capture : joined) {
                const RankProgress* mine = rankIn(*capture, r.rank);
                if (!mine) continue;
                CallIndex index(*mine);
                GpuState s;
                s.communicator = static_cast<int>(g);
                s.member = static_cast<int>(m);
                s.captureCommunicator = capture->id;
                if (!f) {
                    // Not in the hung call: what its GPU did last in this group.
                    if (mine->calls.empty()) break;
                    const Call& last = mine->calls.back();
                    s.call = describeSlot(*capture, last.slot, last.collective);
                    s.kind = last.completed    ? GpuState::Kind::Finished
                             : last.gpuStartNs ? GpuState::Kind::Running
                                               : GpuState::Kind::NotStarted;
                    s.at = last.completed    ? last.completedNs
                           : last.gpuStartNs ? last.gpuStartNs
                                             : std::optional(last.enteredNs);
                    out.push_back(std::move(s));
                    break;
                }
                if (const Call* x = counterpart(*capture, *mine, group, *f, index)) {
                    if (x->completed) {
                        s.kind = GpuState::Kind::Finished;
                        s.at = x->completedNs;
                    } else if (x->gpuStartNs) {
                        s.kind = GpuState::Kind::Running;
                        s.at = x->gpuStartNs;
                    } else {
                        s.kind = GpuState::Kind::NotStarted;
                        if (x->enteredKnown) s.at = x->enteredNs;
                    }
                } else {
                    const bool ended =
                        f->enteredKnown && mine->host.lastSeenNs && *mine->host.lastSeenNs < f->enteredNs;
                    s.kind = ended ? GpuState::Kind::CaptureEnded : GpuState::Kind::NeverLaunched;
                }
                out.push_back(std::move(s));
                break;
            }
        }
    }
    return out;
}

}  // namespace osc::hang
