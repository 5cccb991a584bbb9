// Captures of killed and stuck jobs: what a capture holds when its job was
// killed (no end_reason, the last rows never committed), when the agent
// never got to write the collective still running, when nothing says what a
// launch that never ran was, and when a kernel that never ended was stored
// open. Known answers where the change keeps them; else an independent,
// naive implementation of docs/design.md 4d over the raw tables, on random
// jobs with random rows cut off the end of every table.
#include "analyzer/capture/schema.h"
#include "analyzer/metrics/classify.h"
#include "tests/analyzer/hang_inputs.h"
#include "tests/analyzer/random_job.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <random>

namespace osc {
namespace {

using test::HangFormat;

void sql(const std::string& file, const std::string& statement) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    const int rc = sqlite3_exec(db, statement.c_str(), nullptr, nullptr, &error);
    EXPECT_EQ(rc, SQLITE_OK) << (error ? error : "") << " in " << statement;
    sqlite3_free(error);
    sqlite3_close(db);
}

std::vector<std::string> writeJob(const synth::WorkloadSpec& spec, const std::string& dir) {
    return synth::writeWorkload(spec, dir, true);
}

hang::HangAnalysis analyzeFiles(const std::string& dir, TimeNs minWaitNs = 0) {
    const Capture c = loadCaptures({dir});
    hang::HangSettings s;
    s.minWaitNs = minWaitNs;
    return hang::analyzeHang(&c, {}, s);
}

synth::WorkloadSpec stalledJob() {
    synth::WorkloadSpec s;
    s.ranks = 4;
    s.layers = 5;
    s.steps = 3;
    s.stallRank = 1;
    s.stallAtStep = 1;
    return s;
}

const char* kDropEnd = "DELETE FROM OVERLAPSCOPE_META WHERE name IN ('end_reason', 'capture_stop_utc_ns');";
const char* kDropOpenRows = "DELETE FROM OVERLAPSCOPE_NCCL_COLL WHERE gpuEnd IS NULL;";
const char* kDropNcclRanges =
    "DELETE FROM NVTX_EVENTS WHERE textId IN (SELECT id FROM StringIds WHERE value = 'ncclAllReduce');";
const char* kDropPolls =
    "DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId IN (SELECT id FROM StringIds WHERE value = "
    "'cudaEventQuery');";

TEST(HangKilled, WithoutEndReasonOrStopTime) {
    testsupport::TempDir dir;
    const auto spec = stalledJob();
    for (const auto& f : writeJob(spec, dir.path())) sql(f, kDropEnd);
    const hang::HangAnalysis a = analyzeFiles(dir.path());
    EXPECT_EQ(test::compareHang(a, test::knownAnswer(HangFormat::OurFiles, spec)), "");
    // The end is the waiting ranks' last poll, 5 s after the last arrival.
    EXPECT_GE(a.hung[0]->waitedNs, spec.stallTailNs);
}

// Killed before the agent wrote the collective that was still running: the
// launch inside NCCL's ncclAllReduce range says the rank entered it.
TEST(HangKilled, TheRunningCollectiveWasNeverWritten) {
    testsupport::TempDir dir;
    const auto spec = stalledJob();
    for (const auto& f : writeJob(spec, dir.path())) sql(f, std::string(kDropEnd) + kDropOpenRows);
    const hang::HangAnalysis a = analyzeFiles(dir.path());
    EXPECT_EQ(test::compareHang(a, test::knownAnswer(HangFormat::OurFiles, spec)), "");
    for (const auto& r : a.communicators[0].ranks) {
        if (r.rank == spec.stallRank) continue;
        EXPECT_EQ(r.calls.back().evidence, hang::Evidence::UnfinishedLaunch);
    }
}

// Nothing says what the launch that never ran was: no verdict can be drawn,
// but the ranks whose GPU never finished a launch are counted.
TEST(HangKilled, NothingNamesTheLaunchThatNeverRan) {
    testsupport::TempDir dir;
    const auto spec = stalledJob();
    for (const auto& f : writeJob(spec, dir.path())) sql(f, std::string(kDropEnd) + kDropOpenRows + kDropNcclRanges);
    const hang::HangAnalysis a = analyzeFiles(dir.path());
    EXPECT_EQ(a.verdict, hang::Verdict::Healthy);
    for (const auto& r : a.communicators[0].ranks) EXPECT_EQ(r.unfinishedLaunches, r.rank == spec.stallRank ? 0u : 1u);
}

// Killed before the watchdog's polls were committed: the capture ends right
// after the others entered, so --min-wait-ms decides.
TEST(HangKilled, EndingRightAfterTheWaitBegan) {
    testsupport::TempDir dir;
    const auto spec = stalledJob();
    for (const auto& f : writeJob(spec, dir.path())) sql(f, std::string(kDropEnd) + kDropPolls);
    const hang::HangAnalysis quick = analyzeFiles(dir.path(), 1'000'000'000);
    EXPECT_EQ(quick.verdict, hang::Verdict::Healthy);
    ASSERT_FALSE(quick.warnings.empty());
    EXPECT_NE(quick.warnings[0].find("in flight"), std::string::npos) << quick.warnings[0];
    EXPECT_EQ(test::compareHang(analyzeFiles(dir.path(), 0), test::knownAnswer(HangFormat::OurFiles, spec)), "");
}

// A kernel that never ended stored open (its end NULL, read as before its
// start), and no plugin rows at all: kernel order finds the same rank.
TEST(HangKilled, KernelsThatNeverEndedStoredOpen) {
    testsupport::TempDir dir;
    const auto spec = stalledJob();
    for (const auto& f : writeJob(spec, dir.path()))
        sql(f, std::string(kDropEnd) + kDropNcclRanges +
                   "INSERT INTO OVERLAPSCOPE_KERNEL (start, end, deviceId, correlationId, launchId) "
                   "SELECT c.gpuStart, NULL, c.deviceId, a.correlationId, "
                   "  (SELECT launchId FROM OVERLAPSCOPE_KERNEL k JOIN OVERLAPSCOPE_KERNEL_LAUNCH l ON l.id = "
                   "   k.launchId JOIN StringIds s ON s.id = l.shortName WHERE s.value LIKE 'ncclDevKernel%' LIMIT 1) "
                   "FROM OVERLAPSCOPE_NCCL_COLL c JOIN CUPTI_ACTIVITY_KIND_RUNTIME a ON a.start = c.enqueue "
                   "WHERE c.gpuEnd IS NULL;"
                   "DELETE FROM OVERLAPSCOPE_NCCL_COLL;");
    const hang::HangAnalysis a = analyzeFiles(dir.path());
    EXPECT_EQ(test::compareHang(a, test::knownAnswer(HangFormat::Nsys, spec)), "");
}

// A rank aborted by PyTorch's watchdog (examples/h200/pytorch_hang): NCCL
// never reported the hung collective finished, so the plugin wrote no row
// for it, and its NCCL range is gone too; but its kernel is there, ended by
// the abort 80 s later. That kernel is the call the waiting ranks entered.
TEST(HangKilled, AKernelNcclNeverReportedFinished) {
    testsupport::TempDir dir;
    const auto spec = stalledJob();
    for (const auto& f : writeJob(spec, dir.path()))
        sql(f, std::string(kDropEnd) + kDropNcclRanges +
                   "INSERT INTO OVERLAPSCOPE_KERNEL (start, end, deviceId, correlationId, launchId) "
                   "SELECT c.gpuStart, c.gpuStart + 80000000000, c.deviceId, a.correlationId, "
                   "  (SELECT launchId FROM OVERLAPSCOPE_KERNEL k JOIN OVERLAPSCOPE_KERNEL_LAUNCH l ON l.id = "
                   "   k.launchId JOIN StringIds s ON s.id = l.shortName WHERE s.value LIKE 'ncclDevKernel%' LIMIT 1) "
                   "FROM OVERLAPSCOPE_NCCL_COLL c JOIN CUPTI_ACTIVITY_KIND_RUNTIME a ON a.start = c.enqueue "
                   "WHERE c.gpuEnd IS NULL;" +
                   kDropOpenRows);
    const hang::HangAnalysis a = analyzeFiles(dir.path());
    EXPECT_EQ(test::compareHang(a, test::knownAnswer(HangFormat::OurFiles, spec)), "");
    for (const auto& r : a.communicators[0].ranks) {
        if (r.rank == spec.stallRank) continue;
        EXPECT_EQ(r.calls.back().evidence, hang::Evidence::Kernel);
        EXPECT_FALSE(r.calls.back().completed);
    }
    // Without the kernels the same capture says nothing: the check above can fail.
    for (const auto& f : std::filesystem::directory_iterator(dir.path()))
        sql(f.path(), "DELETE FROM OVERLAPSCOPE_KERNEL WHERE end - start >= 80000000000;");
    EXPECT_EQ(analyzeFiles(dir.path()).verdict, hang::Verdict::Healthy);
}

// --- a naive reading of docs/design.md 4d, straight off the tables ---

struct NaiveCall {
    std::string coll;
    uint64_t seq = 0;
    TimeNs entered = 0;
    bool done = false;
};

struct NaiveAnswer {
    std::string verdict = "healthy";
    std::map<std::string, std::pair<std::string, uint64_t>> hung;  // comm -> slot
    std::set<std::pair<std::string, int>> stuck;                   // (comm, rank or -1 - comm rank)
    std::map<std::pair<std::string, int>, std::pair<std::optional<uint64_t>, std::optional<uint64_t>>> last;
};

bool naiveIsLaunch(const std::string& n) {
    return n.find("LaunchKernel") != std::string::npos || n.find("LaunchCooperativeKernel") != std::string::npos ||
           n.find("GraphLaunch") != std::string::npos;
}

std::string ncclRangeColl(const std::string& n) {
    for (const char* c :
         {"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce", "AllToAll", "Gather", "Scatter"})
        if (n == std::string("nccl") + c) return c;
    return "";
}

bool p2p(const std::string& f) { return f == "Send" || f == "Recv" || f == "SendRecv"; }

NaiveAnswer naive(const Capture& c, TimeNs minWait) {
    // comm -> rank key -> calls (in call order); comm sizes; rank key -> global rank
    std::map<std::string, std::map<int, std::vector<NaiveCall>>> comms;
    std::map<std::string, int> sizes;
    std::map<std::string, std::map<int, int>> globalOf;
    TimeNs end = std::numeric_limits<TimeNs>::min();
    const auto see = [&](TimeNs t) { end = std::max(end, t); };
    std::vector<const Process*> rowless;
    std::vector<std::vector<std::pair<std::string, TimeNs>>> typedOf(c.processes.size());
    for (size_t pi = 0; pi < c.processes.size(); ++pi) {
        const Process& p = c.processes[pi];
        std::set<uint32_t> ran;
        for (const auto& d : p.devices) {
            for (size_t i = 0; i < d.kernels.size(); ++i) {
                see(d.kernels.start[i]);
                see(d.kernels.end[i]);
                if (d.kernels.end[i] >= d.kernels.start[i]) ran.insert(d.kernels.correlation[i]);
            }
            for (size_t i = 0; i < d.copies.size(); ++i) see(d.copies.end[i]), ran.insert(d.copies.correlation[i]);
            for (size_t i = 0; i < d.memsets.size(); ++i) see(d.memsets.end[i]), ran.insert(d.memsets.correlation[i]);
            for (size_t i = 0; i < d.syncs.size(); ++i) see(d.syncs.end[i]);
        }
        for (size_t i = 0; i < p.ranges.size(); ++i) see(p.ranges.end[i]);
        for (size_t i = 0; i < p.cpuOps.size(); ++i) see(p.cpuOps.end[i]);
        const auto& t = p.collectives;
        for (size_t i = 0; i < t.size(); ++i) see(t.enqueue[i]), see(t.gpuStart[i]), see(t.gpuEnd[i]);
        for (size_t i = 0; i < p.apiCalls.size(); ++i) {
            see(p.apiCalls.end[i]);
            if (p.apiCalls.returnValue[i] != 0 || ran.count(p.apiCalls.correlation[i]) ||
                !naiveIsLaunch(std::string(c.strings.at(p.apiCalls.name[i]))))
                continue;
            for (size_t r = 0; r < p.ranges.size(); ++r) {
                const std::string coll = ncclRangeColl(std::string(c.strings.at(p.ranges.name[r])));
                if (p.ranges.kind[r] == RangeKind::Mark || coll.empty() ||
                    p.ranges.globalTid[r] != p.apiCalls.globalTid[i] || p.ranges.start[r] > p.apiCalls.start[i] ||
                    p.apiCalls.start[i] > p.ranges.end[r])
                    continue;
                typedOf[pi].push_back({coll, p.apiCalls.start[i]});
                break;
            }
        }
        std::sort(typedOf[pi].begin(), typedOf[pi].end(), [](auto& a, auto& b) { return a.second < b.second; });
        std::map<std::string, std::vector<size_t>> rows;
        for (size_t i = 0; i < t.size(); ++i) {
            char hex[24];
            std::snprintf(hex, sizeof hex, "0x%016llx", static_cast<unsigned long long>(t.commHash[i]));
            if (t.commHash[i] != 0 && !p2p(std::string(c.strings.at(t.func[i])))) rows[hex].push_back(i);
        }
        if (rows.empty()) {
            rowless.push_back(&p);
            continue;
        }
        for (auto& [comm, idx] : rows) {
            std::vector<NaiveCall> calls;
            int commRank = -1;
            for (size_t i : idx) {
                const std::string f(c.strings.at(t.func[i]));
                bool dup = false;
                for (auto& k : calls) dup = dup || (k.coll == f && k.seq == t.seqNumber[i]);
                if (dup) continue;
                calls.push_back(
                    {f, t.seqNumber[i], t.enqueue[i] >= 0 ? t.enqueue[i] : t.gpuStart[i], t.gpuEnd[i] >= 0});
                commRank = std::max(commRank, t.rank[i]);
                sizes[comm] = std::max(sizes[comm], t.nranks[i]);
            }
            std::stable_sort(calls.begin(), calls.end(), [](auto& a, auto& b) { return a.entered < b.entered; });
            comms[comm][commRank] = calls;
            globalOf[comm][commRank] = p.rank;
        }
        // The communicator whose newest call of `coll` is the latest at or before `at`.
        const auto ownerComm = [&](const std::string& coll, TimeNs at) {
            std::string best;
            TimeNs bestAt = std::numeric_limits<TimeNs>::min();
            for (auto& [comm, idx] : rows) {
                (void)idx;
                for (auto& [cr, calls] : comms[comm])
                    if (globalOf[comm][cr] == p.rank)
                        for (auto& k : calls)
                            if (k.coll == coll && k.entered <= at && k.entered >= bestAt)
                                best = comm, bestAt = k.entered;
            }
            return best;
        };
        for (const auto& [coll, at] : typedOf[pi]) {
            const std::string best = ownerComm(coll, at);
            if (best.empty()) continue;
            for (auto& [cr, calls] : comms[best]) {
                if (globalOf[best][cr] != p.rank) continue;
                uint64_t next = 0;
                TimeNs lastEntered = std::numeric_limits<TimeNs>::min();
                for (auto& k : calls)
                    if (k.coll == coll)
                        next = std::max(next, k.seq + 1), lastEntered = std::max(lastEntered, k.entered);
                if (at > lastEntered) calls.push_back({coll, next, at, false});
                std::stable_sort(calls.begin(), calls.end(), [](auto& a, auto& b) { return a.entered < b.entered; });
            }
        }
        // Kernels NCCL never reported finished: of each type, those beyond
        // the process's rows of that type that start after its newest row
        // was entered; each the next call of its type of the communicator
        // whose newest call of that type precedes it, entered, not finished.
        std::map<std::string, std::pair<size_t, TimeNs>> rowsOfType;
        for (size_t i = 0; i < t.size(); ++i) {
            if (t.commHash[i] == 0) continue;
            auto& [n, newest] =
                rowsOfType.try_emplace(std::string(c.strings.at(t.func[i])), 0, std::numeric_limits<TimeNs>::min())
                    .first->second;
            ++n;
            newest = std::max(newest, t.enqueue[i] >= 0 ? t.enqueue[i] : t.gpuStart[i]);
        }
        std::map<std::string, std::vector<TimeNs>> kernelStarts;
        for (const auto& d : p.devices)
            for (size_t i = 0; i < d.kernels.size(); ++i) {
                const auto k = parseNcclKernelName(c.strings.at(d.kernels.name[i]));
                if (k.isNccl && !k.collective.empty() && !p2p(k.collective))
                    kernelStarts[k.collective].push_back(d.kernels.start[i]);
            }
        std::vector<std::pair<std::string, TimeNs>> unreported;
        for (auto& [coll, starts] : kernelStarts) {
            const auto r = rowsOfType.find(coll);
            if (r == rowsOfType.end() || starts.size() <= r->second.first) continue;
            std::sort(starts.begin(), starts.end());
            for (size_t i = r->second.first; i < starts.size(); ++i)
                if (starts[i] > r->second.second) unreported.push_back({coll, starts[i]});
        }
        std::sort(unreported.begin(), unreported.end(), [](auto& a, auto& b) { return a.second < b.second; });
        for (const auto& [coll, at] : unreported) {
            const std::string best = ownerComm(coll, at);
            if (best.empty()) continue;
            for (auto& [cr, calls] : comms[best]) {
                if (globalOf[best][cr] != p.rank) continue;
                std::optional<uint64_t> next;
                bool later = false;
                for (auto& k : calls)
                    if (k.coll == coll) {
                        later = later || k.entered >= at;
                        next = std::max(next.value_or(0), k.seq + 1);
                    }
                if (!later && next) calls.push_back({coll, *next, at, false});
                std::stable_sort(calls.begin(), calls.end(), [](auto& a, auto& b) { return a.entered < b.entered; });
            }
        }
    }
    for (auto& [comm, ranks] : comms)
        for (auto& [cr, calls] : ranks)
            for (size_t i = 0; i < calls.size(); ++i)
                for (size_t j = i + 1; j < calls.size(); ++j) calls[i].done = calls[i].done || calls[j].done;
    int order = 0;
    for (const Process* p : rowless) {
        bool joined = false;
        for (auto& [comm, ranks] : comms) {
            bool identity = true;
            for (auto& [cr, g] : globalOf[comm]) identity = identity && cr == g;
            if (identity && p->rank >= 0 && p->rank < sizes[comm] && !ranks.count(p->rank)) {
                ranks[p->rank] = {};
                globalOf[comm][p->rank] = p->rank;
                joined = true;
            }
        }
        bool kernels = false;
        std::vector<std::vector<NaiveCall>> perDevice;
        for (const auto& d : p->devices) {
            std::vector<NaiveCall> calls;
            std::map<std::string, uint64_t> n;
            for (size_t i = 0; i < d.kernels.size(); ++i) {
                const auto k = parseNcclKernelName(c.strings.at(d.kernels.name[i]));
                if (!k.isNccl || k.collective.empty() || p2p(k.collective)) continue;
                kernels = true;
                calls.push_back(
                    {k.collective, n[k.collective]++, d.kernels.start[i], d.kernels.end[i] >= d.kernels.start[i]});
            }
            perDevice.push_back(calls);
        }
        if (joined && !kernels) continue;
        const size_t pi = static_cast<size_t>(p - c.processes.data());
        for (auto& calls : perDevice) {
            if (p->devices.size() == 1)
                for (const auto& [coll, at] : typedOf[pi]) {
                    uint64_t next = 0;
                    TimeNs lastEntered = std::numeric_limits<TimeNs>::min();
                    for (auto& k : calls)
                        if (k.coll == coll)
                            next = std::max(next, k.seq + 1), lastEntered = std::max(lastEntered, k.entered);
                    if (at > lastEntered) calls.push_back({coll, next, at, false});
                }
            std::stable_sort(calls.begin(), calls.end(), [](auto& a, auto& b) { return a.entered < b.entered; });
            comms["kernel order"][order] = calls;
            globalOf["kernel order"][order++] = p->rank;
        }
    }
    NaiveAnswer out;
    for (auto& [comm, ranks] : comms) {
        std::map<std::pair<std::string, uint64_t>, std::vector<int>> waiting;
        std::map<std::pair<std::string, uint64_t>, TimeNs> since;
        for (auto& [cr, calls] : ranks) {
            const int g = globalOf[comm][cr];
            std::optional<uint64_t> le, lc;
            for (auto& k : calls) {
                le = k.seq;
                if (k.done) lc = k.seq;
            }
            out.last[{comm, g}] = {le, lc};
            for (auto& k : calls)
                if (!k.done) {
                    waiting[{k.coll, k.seq}].push_back(cr);
                    since[{k.coll, k.seq}] =
                        since.count({k.coll, k.seq}) ? std::min(since[{k.coll, k.seq}], k.entered) : k.entered;
                    break;
                }
        }
        std::optional<std::pair<std::string, uint64_t>> best;
        for (auto& [slot, who] : waiting) {
            if (end - since[slot] < minWait) continue;
            if (!best || who.size() > waiting[*best].size() ||
                (who.size() == waiting[*best].size() && since[slot] < since[*best]))
                best = slot;
        }
        if (!best) continue;
        out.hung[comm] = *best;
        for (auto& [cr, calls] : ranks) {
            bool entered = false;
            for (auto& k : calls) entered = entered || (k.coll == best->first && k.seq == best->second);
            if (!entered) out.stuck.insert({comm, globalOf[comm][cr]});
        }
        if (comm != "kernel order")
            for (int k = 0; k < sizes[comm]; ++k)
                if (!ranks.count(k)) out.stuck.insert({comm, -1 - k});
    }
    if (!out.stuck.empty()) out.verdict = "hang";
    return out;
}

NaiveAnswer fromAnalysis(const hang::HangAnalysis& a) {
    NaiveAnswer out;
    out.verdict = a.verdict == hang::Verdict::Hang ? "hang" : "healthy";
    for (size_t c = 0; c < a.communicators.size(); ++c) {
        const auto& comm = a.communicators[c];
        if (a.hung[c]) out.hung[comm.id] = {a.hung[c]->slot.collective, a.hung[c]->slot.seq};
        for (const auto& r : comm.ranks)
            out.last[{comm.id, r.rank}] = {test::lastSeq(r, false), test::lastSeq(r, true)};
    }
    for (const auto& s : a.stuck)
        out.stuck.insert(
            {a.communicators[static_cast<size_t>(s.communicator)].id, s.member >= 0 ? s.rank : -1 - s.commRank});
    return out;
}

// Random jobs, stalled or not, killed at random: every table loses a random
// number of its last rows, as a capture that stops at its last commit.
TEST(HangKilled, RandomCutsAgainstANaiveReading) {
    std::mt19937 rng(4242);
    testsupport::TempDir dir;
    int hangs = 0;
    for (int trial = 0; trial < 48; ++trial) {
        synth::WorkloadSpec spec = test::randomJob(rng);
        spec.steps = std::uniform_int_distribution<int>(1, 3)(rng);
        if (trial % 3 != 0) {
            spec.stallRank = std::uniform_int_distribution<int>(0, spec.ranks - 1)(rng);
            spec.stallAtStep = std::uniform_int_distribution<int>(0, spec.steps - 1)(rng);
        }
        const std::string job = dir / ("job" + std::to_string(trial));
        for (const auto& f : writeJob(spec, job)) {
            std::string cut = kDropEnd;
            for (const char* table :
                 {"OVERLAPSCOPE_KERNEL", "OVERLAPSCOPE_NCCL_COLL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"}) {
                const int n = std::uniform_int_distribution<int>(0, 40)(rng);
                cut += "DELETE FROM " + std::string(table) + " WHERE rowid > (SELECT max(rowid) FROM " + table +
                       ") - " + std::to_string(n) + ";";
            }
            sql(f, cut);
        }
        const Capture c = loadCaptures({job});
        const TimeNs minWait = trial % 2 ? 0 : 1'000'000'000;
        hang::HangSettings settings;
        settings.minWaitNs = minWait;
        const hang::HangAnalysis a = hang::analyzeHang(&c, {}, settings);
        const NaiveAnswer want = naive(c, minWait), got = fromAnalysis(a);
        SCOPED_TRACE("trial " + std::to_string(trial));
        EXPECT_EQ(got.verdict, want.verdict);
        EXPECT_EQ(got.hung, want.hung);
        EXPECT_EQ(got.stuck, want.stuck);
        EXPECT_EQ(got.last, want.last);
        hangs += got.verdict == "hang";
    }
    EXPECT_GE(hangs, 6);  // the cuts leave hangs to find, not only healthy captures
}

}  // namespace
}  // namespace osc
