// Flight Recorder dumps as per-rank sequences (rank_sequences.h): one
// communicator per process group, its collectives ordered and numbered by
// collective_seq_id (PyTorch counts every collective type on one counter,
// so the number alone is the call's place), never by their place in the
// file. Entries of a coalesced call share that number and become one call.
// Sends and receives (is_p2p) involve two ranks, not the group, and are left
// out of the sequences; they still count as what the host did last.
//
// Each dump's pg_status says what its process group counted whatever the
// ring buffer still holds: calls it counts as completed are completed, and
// the call it counts as enqueued and not completed is entered even where
// its entry is gone. It is tied to a group by the pg_id the dump's entries
// carry; a status whose group no entry names is tied only where that is
// certain (the dump's only group) or confirmed (numeric group names in
// creation order, as the entries show). PyTorch counts a send or receive
// there too, so a status is not used where the group's newest entry was one.
#include "analyzer/hang/rank_sequences.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace osc::hang {
namespace {

using Entry = FlightRecorderEntry;
constexpr int64_t kNoTime = kNoFlightRecorderTime;

// "nccl:all_reduce" -> "all_reduce"; "nccl:send 0->1" -> "send".
std::string opType(std::string_view profilingName) {
    const size_t colon = profilingName.find(':');
    std::string_view op = colon == std::string_view::npos ? profilingName : profilingName.substr(colon + 1);
    const size_t space = op.find(' ');
    return std::string(space == std::string_view::npos ? op : op.substr(0, space));
}

std::string groupId(std::string_view name, std::string_view desc) {
    return "pg " + std::string(name) + (desc.empty() || desc == "undefined" ? "" : " (" + std::string(desc) + ")");
}

// One rank's view of one process group, from its dump; times are Unix ns
// until finish() puts them on the job's timeline.
struct RankGroup {
    std::string name, desc;
    // Its members, shared by every rank's copy once merged (a group of ten
    // thousand ranks is listed in each of their dumps).
    std::shared_ptr<const std::vector<int64_t>> members;
    bool membersKnown = false;
    RankProgress progress;
    std::optional<FlightRecorderGroupStatus> status;
    std::string statusTiedBy;
    bool hasP2p = false, newestIsP2p = false, hasEntries = false;
};

}  // namespace

// One dump made into its rank's groups: the work done on any thread.
struct FlightRecorderSequences::Prepared {
    std::string path;
    int rank = -1;
    int64_t newest = std::numeric_limits<int64_t>::min();  // its newest time, or record id without times
    int64_t earliest = std::numeric_limits<int64_t>::max(), latest = std::numeric_limits<int64_t>::min();
    std::vector<RankGroup> groups;
    std::vector<std::string> notes;  // warnings, the path not yet said
};

namespace {

struct DumpReading {
    const FlightRecorderDump& dump;
    std::vector<std::string> ops;  // opType per string id, filled on demand
    const std::string& op(uint32_t id) {
        if (ops.size() < dump.strings.size()) ops.resize(dump.strings.size());
        if (ops[id].empty() && !dump.text(id).empty()) ops[id] = opType(dump.text(id));
        return ops[id];
    }
};

std::shared_ptr<const FlightRecorderFrame> frameOf(const FlightRecorderDump& d, const Entry& e,
                                                   std::vector<std::shared_ptr<const FlightRecorderFrame>>& cache) {
    const FlightRecorderFrame* f = d.frameOf(e);
    if (!f) return nullptr;
    if (cache.size() < d.frames.size()) cache.resize(d.frames.size());
    auto& slot = cache[e.frame - 1];
    if (!slot) slot = std::make_shared<const FlightRecorderFrame>(*f);
    return slot;
}

// One call from the entries sharing a collective_seq_id.
Call callOf(DumpReading& r, const std::vector<const Entry*>& parts,
            std::vector<std::shared_ptr<const FlightRecorderFrame>>& frames) {
    const FlightRecorderDump& d = r.dump;
    Call c;
    c.slot = {"", static_cast<uint64_t>(parts.front()->collectiveSeqId)};
    c.evidence = Evidence::FlightRecorder;
    std::vector<std::string> ops, dtypes;
    std::string shapes;
    std::optional<uint64_t> in = 0, out = 0;
    bool completed = true;
    int64_t entered = kNoTime, completedAt = kNoTime;
    for (const Entry* e : parts) {
        const std::string& op = r.op(e->profilingName);
        // PyTorch closes a coalesced group with an entry of its own.
        if (op != "coalesced" || parts.size() == 1) ops.push_back(op);
        const std::string_view dt = d.text(e->dtypes);
        if (!dt.empty()) dtypes.emplace_back(dt);
        const std::string_view sh = d.text(e->inputShapes);
        if (sh.size() > 2) shapes += (shapes.empty() ? "" : " + ") + std::string(sh);
        const auto add = [](std::optional<uint64_t>& sum, const std::optional<uint64_t>& part) {
            if (sum && part && !__builtin_add_overflow(*sum, *part, &*sum)) return;
            sum.reset();
        };
        add(in, e->inputBytes);
        add(out, e->outputBytes);
        if (e->timeCreatedNs != kNoTime && (entered == kNoTime || e->timeCreatedNs < entered))
            entered = e->timeCreatedNs;
        if (e->state != Entry::State::Completed) completed = false;
        if (e->timeDiscoveredCompletedNs != kNoTime) completedAt = std::max(completedAt, e->timeDiscoveredCompletedNs);
        if (!c.frame) c.frame = frameOf(d, *e, frames);
    }
    const auto joinUnique = [](std::vector<std::string> v, const char* sep) {
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
        std::string s;
        for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
        return s;
    };
    c.collective = joinUnique(ops, "+");
    if (parts.size() > 1) c.collective += " (coalesced, " + std::to_string(parts.size()) + " ops)";
    c.dtype = joinUnique(dtypes, ",");
    c.shapes = shapes.empty() ? "[]" : shapes;
    c.bytes = in;
    c.outputBytes = out;
    c.enteredKnown = entered != kNoTime;
    c.enteredNs = c.enteredKnown ? entered : 0;
    c.completed = completed;
    if (completed && completedAt != kNoTime) c.completedNs = completedAt;
    return c;
}

// The newest entry of a dump: what its host did last, as far as it says.
HostActivity hostOf(DumpReading& r, std::vector<std::shared_ptr<const FlightRecorderFrame>>& frames, int64_t& newest) {
    const FlightRecorderDump& d = r.dump;
    HostActivity h;
    const Entry* last = nullptr;
    for (const Entry& e : d.entries) {
        // By time where both have one, else by record id (the buffer's order).
        const bool later = !last || (e.timeCreatedNs != kNoTime && last->timeCreatedNs != kNoTime
                                         ? e.timeCreatedNs >= last->timeCreatedNs
                                         : e.recordId >= last->recordId);
        if (later) last = &e;
    }
    newest = std::numeric_limits<int64_t>::min();
    if (!last) return h;
    newest = last->timeCreatedNs != kNoTime ? last->timeCreatedNs : last->recordId;
    const int64_t start = last->timeCreatedNs == kNoTime ? 0 : last->timeCreatedNs;
    const int64_t end = last->timeDiscoveredCompletedNs != kNoTime ? last->timeDiscoveredCompletedNs : start;
    h.flightRecorderEntry =
        HostItem{std::string(d.text(last->profilingName)) + " (" + groupId(d.text(last->pgName), d.text(last->pgDesc)) +
                     ", seq " + std::to_string(last->isP2P ? last->p2pSeqId : last->collectiveSeqId) + ")",
                 start, end, last->timeCreatedNs != kNoTime};
    h.flightRecorderState = last->state == Entry::State::Completed ? "completed"
                            : last->state == Entry::State::Started ? "started"
                                                                   : "scheduled";
    if (!d.text(last->threadName).empty()) h.flightRecorderState += ", thread " + std::string(d.text(last->threadName));
    h.flightRecorderFrame = frameOf(d, *last, frames);
    if (last->timeCreatedNs != kNoTime) h.lastSeenNs = end;
    return h;
}

bool numeric(const std::string& s) {
    return !s.empty() && s.size() < 18 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// How a pg_status row is tied to a group, and whether the group has none
// because this process never called a collective of it (PyTorch adds a
// group's row at its first call).
struct StatusTie {
    std::string name, tiedBy;
    bool neverCalled = false;
};

// pg_id -> group: from the entries, then where certain or confirmed.
std::map<int64_t, StatusTie> tieStatus(const FlightRecorderDump& d, int rank, std::vector<std::string>& warnings) {
    std::map<int64_t, std::set<std::string>> named;
    for (const Entry& e : d.entries)
        if (e.pgId >= 0) named[e.pgId].insert(std::string(d.text(e.pgName)));
    std::map<int64_t, StatusTie> out;
    for (const auto& [id, names] : named) {
        if (names.size() == 1)
            out[id] = {*names.begin(), "entries"};
        else if (d.groupStatus.count(id))
            warnings.push_back("its entries give pg_id " + std::to_string(id) +
                               " to several groups: its pg_status row is not used");
    }
    std::vector<int64_t> untied;
    for (const auto& [id, s] : d.groupStatus)
        if (!named.count(id)) untied.push_back(id);
    // The groups this rank belongs to, as pg_config lists them.
    std::vector<std::string> mine;
    for (const auto& [name, g] : d.groups)
        if (!g.ranksKnown || std::binary_search(g.ranks.begin(), g.ranks.end(), rank)) mine.push_back(name);
    if (d.groupStatus.empty()) {
        // A ring buffer never empties: a dump with no entry and an empty
        // status table is of a process that never called a collective.
        if (d.entries.empty() && d.hasStatusTable)
            for (size_t k = 0; k < mine.size(); ++k) out[-1 - static_cast<int64_t>(k)] = {mine[k], "empty dump", true};
        return out;
    }
    if (mine.size() == 1 && d.groupStatus.size() == 1 && out.empty()) {
        out[d.groupStatus.begin()->first] = {mine.front(), "only group"};
        return out;
    }
    // Numeric names are given in creation order, pg_ids count this process's
    // groups in creation order: the k-th name is pg_id k, if every pg_id the
    // entries name agrees. Then a group without a row was never called here.
    if (!out.empty() && std::all_of(mine.begin(), mine.end(), numeric)) {
        std::sort(mine.begin(), mine.end(), [](const std::string& a, const std::string& b) {
            return a.size() != b.size() ? a.size() < b.size() : a < b;
        });
        const bool agrees = std::all_of(out.begin(), out.end(), [&](const auto& tie) {
            return tie.first >= 0 && static_cast<size_t>(tie.first) < mine.size() &&
                   mine[static_cast<size_t>(tie.first)] == tie.second.name;
        });
        if (agrees) {
            for (size_t k = 0; k < mine.size(); ++k) {
                const auto id = static_cast<int64_t>(k);
                if (out.count(id) || named.count(id)) continue;
                out[id] = {mine[k], "creation order", !d.groupStatus.count(id)};
            }
            untied.erase(std::remove_if(untied.begin(), untied.end(), [&](int64_t id) { return out.count(id) > 0; }),
                         untied.end());
        }
    }
    for (int64_t id : untied)
        warnings.push_back("its pg_status of pg_id " + std::to_string(id) +
                           " cannot be tied to a group (no entry of the dump names that pg_id): not used");
    return out;
}

}  // namespace

struct FlightRecorderSequences::State {
    std::optional<int64_t> origin;
    std::map<int, Prepared> ranks;
    std::vector<std::string> inputs, warnings;
    int64_t earliest = std::numeric_limits<int64_t>::max(), latest = std::numeric_limits<int64_t>::min();
    std::map<std::vector<int64_t>, std::shared_ptr<const std::vector<int64_t>>> memberLists;
};

FlightRecorderSequences::FlightRecorderSequences(std::optional<int64_t> originUtcNs)
    : state_(std::make_unique<State>()) {
    state_->origin = originUtcNs;
}

FlightRecorderSequences::~FlightRecorderSequences() = default;

FlightRecorderSequences::Prepared FlightRecorderSequences::prepare(FlightRecorderDump dump) {
    FlightRecorderSequences::Prepared rd;
    rd.path = dump.path;
    rd.rank = dump.rank;
    std::vector<std::string>& notes = rd.notes;
    for (auto& w : dump.warnings) notes.push_back(std::move(w));
    DumpReading reading{dump, {}};
    std::vector<std::shared_ptr<const FlightRecorderFrame>> frames;
    const HostActivity host = hostOf(reading, frames, rd.newest);
    for (const Entry& e : dump.entries) {
        for (int64_t t : {e.timeCreatedNs, e.timeDiscoveredCompletedNs})
            if (t != kNoTime) {
                rd.earliest = std::min(rd.earliest, t);
                rd.latest = std::max(rd.latest, t);
            }
    }
    // Entries per group, by name.
    std::map<std::string, std::vector<const Entry*>> byGroup;
    std::map<std::string, std::pair<bool, const Entry*>> p2pOf;  // has p2p, newest entry
    std::map<std::string, std::string> descOf;
    for (const Entry& e : dump.entries) {
        const std::string name(dump.text(e.pgName));
        auto& [p2p, newest] = p2pOf[name];
        p2p = p2p || e.isP2P;
        if (!newest || e.recordId >= newest->recordId) newest = &e;
        descOf.emplace(name, dump.text(e.pgDesc));
        if (!e.isP2P) byGroup[name].push_back(&e);
    }
    std::set<std::string> names;
    for (const auto& [name, g] : dump.groups) names.insert(name);
    for (const auto& [name, p] : p2pOf) names.insert(name);
    const auto ties = tieStatus(dump, dump.rank, notes);

    for (const std::string& name : names) {
        RankGroup g;
        g.name = name;
        const auto cfg = dump.groups.find(name);
        std::vector<int64_t> members;
        if (cfg != dump.groups.end()) {
            g.desc = cfg->second.desc;
            members = cfg->second.ranks;
            g.membersKnown = cfg->second.ranksKnown;
        } else {
            g.desc = descOf[name];
        }
        if (const auto p = p2pOf.find(name); p != p2pOf.end()) {
            g.hasEntries = true;
            g.hasP2p = p->second.first;
            g.newestIsP2p = p->second.second->isP2P;
        }
        RankProgress& r = g.progress;
        r.rank = dump.rank;
        r.label = "rank " + std::to_string(dump.rank);
        r.source = dump.path;
        r.host = host;
        r.ringBuffer = true;
        if (g.membersKnown) {
            const auto at = std::lower_bound(members.begin(), members.end(), dump.rank);
            if (at == members.end() || *at != dump.rank) {
                if (g.hasEntries)
                    notes.push_back("it is rank " + std::to_string(dump.rank) + " (by its name), not one of " +
                                    groupId(name, g.desc) +
                                    "'s members (its pg_config): its entries of that group "
                                    "are left out");
                continue;
            }
            r.commRank = static_cast<int>(at - members.begin());
        }
        // Calls by sequence number, whatever the entries' order in the file.
        auto& list = byGroup[name];
        const auto bySeq = [](const Entry* a, const Entry* b) {
            return std::pair(a->collectiveSeqId, a->recordId) < std::pair(b->collectiveSeqId, b->recordId);
        };
        if (!std::is_sorted(list.begin(), list.end(), bySeq)) std::stable_sort(list.begin(), list.end(), bySeq);
        r.calls.reserve(list.size());
        for (size_t i = 0; i < list.size();) {
            size_t j = i;
            while (j < list.size() && list[j]->collectiveSeqId == list[i]->collectiveSeqId) ++j;
            r.calls.push_back(callOf(reading,
                                     std::vector<const Entry*>(list.begin() + static_cast<std::ptrdiff_t>(i),
                                                               list.begin() + static_cast<std::ptrdiff_t>(j)),
                                     frames));
            i = j;
        }
        for (const auto& [id, tie] : ties)
            if (tie.name == name) {
                const auto row = dump.groupStatus.find(id);
                if (row != dump.groupStatus.end())
                    g.status = row->second;
                else if (tie.neverCalled)
                    g.status = FlightRecorderGroupStatus{};  // nothing enqueued, nothing completed
                g.statusTiedBy = tie.tiedBy;
            }
        g.members = std::make_shared<const std::vector<int64_t>>(std::move(members));
        rd.groups.push_back(std::move(g));
    }

    return rd;
}

void FlightRecorderSequences::merge(Prepared& rd) {
    State& s = *state_;
    s.inputs.push_back(rd.path);
    for (auto& n : rd.notes) s.warnings.push_back(rd.path + ": " + n);
    rd.notes.clear();
    s.earliest = std::min(s.earliest, rd.earliest);
    s.latest = std::max(s.latest, rd.latest);
    for (RankGroup& g : rd.groups) {  // one copy of each member list for all ranks
        auto& shared = s.memberLists[*g.members];
        if (!shared) shared = g.members;
        g.members = shared;
    }
    const auto [it, fresh] = s.ranks.try_emplace(rd.rank);
    if (fresh) {
        it->second = std::move(rd);
        return;
    }
    // Two dumps of one rank: the newer one says more.
    const bool newer = rd.newest > it->second.newest;
    s.warnings.push_back(rd.path + " and " + it->second.path + " are both dumps of rank " + std::to_string(rd.rank) +
                         ": the newer (" + (newer ? rd.path : it->second.path) + ") is read, the other left out");
    if (newer) it->second = std::move(rd);
}

void FlightRecorderSequences::add(FlightRecorderDump dump) {
    Prepared rd = prepare(std::move(dump));
    merge(rd);
}

void FlightRecorderSequences::addFiles(const std::vector<std::string>& paths, int jobs,
                                       const std::function<void(size_t, size_t)>& progress) {
    const size_t threads = std::min<size_t>(
        paths.size(), jobs > 0 ? static_cast<size_t>(jobs) : std::max(1u, std::thread::hardware_concurrency()));
    // Workers read and prepare dumps ahead; they are merged in the order
    // given, so the output is the same on any number of threads.
    struct Slot {
        std::optional<Prepared> dump;
        std::exception_ptr error;
        bool done = false;
    };
    std::vector<Slot> slots(paths.size());
    std::mutex mutex;
    std::condition_variable changed;
    size_t next = 0, merged = 0;
    bool stop = false;
    const size_t ahead = 4 * std::max<size_t>(threads, 1);
    const auto work = [&] {
        for (;;) {
            size_t i = 0;
            {
                std::unique_lock lock(mutex);
                changed.wait(lock, [&] { return stop || next >= paths.size() || next < merged + ahead; });
                if (stop || next >= paths.size()) return;
                i = next++;
            }
            Slot result;
            try {
                result.dump = prepare(readFlightRecorderDump(paths[i]));
            } catch (...) {
                result.error = std::current_exception();
            }
            result.done = true;
            std::lock_guard lock(mutex);
            slots[i] = std::move(result);
            changed.notify_all();
        }
    };
    std::vector<std::thread> workers;
    for (size_t t = 1; t < threads; ++t) workers.emplace_back(work);
    const auto join = [&] {
        {
            std::lock_guard lock(mutex);
            stop = true;
        }
        changed.notify_all();
        for (auto& w : workers) w.join();
    };
    try {
        for (size_t i = 0; i < paths.size(); ++i) {
            Slot slot;
            if (threads <= 1) {
                slot.dump = prepare(readFlightRecorderDump(paths[i]));
            } else {
                std::unique_lock lock(mutex);
                changed.wait(lock, [&] { return slots[i].done; });
                slot = std::move(slots[i]);
            }
            if (slot.error) std::rethrow_exception(slot.error);
            merge(*slot.dump);
            {
                std::lock_guard lock(mutex);
                merged = i + 1;
            }
            changed.notify_all();
            if (progress) progress(i + 1, paths.size());
        }
    } catch (...) {
        join();
        throw;
    }
    join();
}

namespace {

void applyStatus(RankGroup& g, bool p2pInGroup, std::vector<std::string>& warnings) {
    RankProgress& r = g.progress;
    if (!g.status) return;
    // A status counts sends and receives too: where the group's newest entry
    // was one, or where the dump shows none of a group that has some, its
    // numbers may not be collective ones.
    if (g.newestIsP2p || (p2pInGroup && !g.hasEntries)) {
        warnings.push_back(r.source + ": its pg_status of " + groupId(g.name, g.desc) +
                           " may count sends and receives (the group has some), so it is not used");
        return;
    }
    const FlightRecorderGroupStatus& st = *g.status;
    GroupStatus status;
    status.tiedBy = g.statusTiedBy;
    const auto count = [](int64_t v) {
        return v >= 0 ? std::optional<uint64_t>(static_cast<uint64_t>(v)) : std::nullopt;
    };
    status.enqueued = count(st.lastEnqueued);
    status.started = count(st.lastStarted);
    status.completed = count(st.lastCompleted);
    for (Call& c : r.calls)
        if (status.completed && c.slot.seq <= *status.completed) c.completed = true;
    // The call enqueued and not completed: entered, whatever the buffer holds.
    const uint64_t done = status.completed.value_or(0);
    if (status.enqueued && *status.enqueued > done && (!status.completed || *status.enqueued > *status.completed)) {
        const uint64_t waiting = status.completed ? *status.completed + 1 : 1;
        const bool held =
            std::any_of(r.calls.begin(), r.calls.end(), [&](const Call& c) { return c.slot.seq == waiting; });
        if (!held) {
            Call c;
            c.slot = {"", waiting};
            c.evidence = Evidence::StatusTable;
            c.enteredKnown = false;
            r.calls.insert(std::lower_bound(r.calls.begin(), r.calls.end(), waiting,
                                            [](const Call& x, uint64_t seq) { return x.slot.seq < seq; }),
                           std::move(c));
        }
    }
    r.status = std::move(status);
}

std::optional<TimeNs> shifted(int64_t t, int64_t origin) {
    int64_t out = 0;
    if (__builtin_sub_overflow(t, origin, &out)) return std::nullopt;
    return out;
}

}  // namespace

JobSequences FlightRecorderSequences::finish() {
    State& s = *state_;
    JobSequences job;
    job.inputs = std::move(s.inputs);
    job.warnings = std::move(s.warnings);
    job.originUtcNs = s.origin.value_or(s.earliest == std::numeric_limits<int64_t>::max() ? 0 : s.earliest);
    job.endKnown = false;
    if (s.latest != std::numeric_limits<int64_t>::min()) job.endNs = shifted(s.latest, job.originUtcNs).value_or(0);

    // Groups by name and members (split_group may reuse a name); a rank that
    // could not read the members joins the one group of that name that can.
    std::map<std::string, std::vector<RankGroup*>> byName;
    for (auto& [rank, rd] : s.ranks) {
        job.inputRanks.push_back(rank);
        for (RankGroup& g : rd.groups) byName[g.name].push_back(&g);
    }
    for (auto& [name, list] : byName) {
        std::map<const std::vector<int64_t>*, std::vector<RankGroup*>> variants;  // by interned member list
        std::vector<RankGroup*> unknown;
        for (RankGroup* g : list) (g->membersKnown ? variants[g->members.get()] : unknown).push_back(g);
        static const std::vector<int64_t> kNone;
        if (variants.size() == 1)
            for (RankGroup* g : unknown) variants.begin()->second.push_back(g);
        else if (!unknown.empty())
            variants[&kNone] = unknown;
        if (variants.size() > 1)
            job.warnings.push_back(groupId(name, list.front()->desc) + ": the dumps list " +
                                   std::to_string(variants.size()) +
                                   " different member sets under this name: read as that many groups");
        for (auto& [memberList, groups] : variants) {
            const std::vector<int64_t>& members = *memberList;
            CommunicatorProgress comm;
            comm.id = groupId(name, groups.front()->desc);
            if (variants.size() > 1 && !members.empty())
                comm.id += " of ranks " + std::to_string(members.front()) + ".." + std::to_string(members.back());
            comm.source = Source::FlightRecorder;
            comm.seqPerCollective = false;
            if (!members.empty()) {
                comm.size = static_cast<int>(members.size());
                comm.memberRanks = members;
            }
            const bool p2p = std::any_of(groups.begin(), groups.end(), [](const RankGroup* g) { return g->hasP2p; });
            for (RankGroup* g : groups) {
                applyStatus(*g, p2p, job.warnings);
                RankProgress& r = g->progress;
                completeInOrder(r.calls);
                for (Call& c : r.calls) {
                    if (c.enteredKnown) {
                        const auto t = shifted(c.enteredNs, job.originUtcNs);
                        c.enteredKnown = t.has_value();
                        c.enteredNs = t.value_or(0);
                    }
                    if (c.completedNs) c.completedNs = shifted(*c.completedNs, job.originUtcNs);
                }
                HostActivity& h = r.host;
                if (h.flightRecorderEntry && h.flightRecorderEntry->timeKnown) {
                    h.flightRecorderEntry->startNs =
                        shifted(h.flightRecorderEntry->startNs, job.originUtcNs).value_or(0);
                    h.flightRecorderEntry->endNs = shifted(h.flightRecorderEntry->endNs, job.originUtcNs).value_or(0);
                }
                if (h.lastSeenNs) h.lastSeenNs = shifted(*h.lastSeenNs, job.originUtcNs);
                comm.ranks.push_back(std::move(r));
            }
            std::stable_sort(comm.ranks.begin(), comm.ranks.end(), [](const RankProgress& a, const RankProgress& b) {
                return std::pair(a.commRank, a.rank) < std::pair(b.commRank, b.rank);
            });
            job.communicators.push_back(std::move(comm));
        }
    }
    s.ranks.clear();
    return job;
}

JobSequences sequencesFromFlightRecorder(const std::vector<FlightRecorderDump>& dumps,
                                         std::optional<int64_t> originUtcNs) {
    FlightRecorderSequences sequences(originUtcNs);
    for (const FlightRecorderDump& d : dumps) sequences.add(d);
    return sequences.finish();
}

}  // namespace osc::hang
