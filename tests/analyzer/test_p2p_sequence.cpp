// Sends paired with receives by the plugin rows' sequence numbers
// (docs/metrics.md 7d): captures whose ranks began at different moments
// hold sends whose receives were never captured, and pairing by order
// would shift every later pair of the route. Hand-worked routes, a
// synthetic 1F1B pipeline whose middle stage started its capture late
// (truth: the generator ends a transfer's send and receive together), its
// figures against a brute-force 7c/7d computation from the true pairs, and
// the same capture through partials per rank and the merge.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/crossrank/p2p_match.h"
#include "analyzer/job/file_workers.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/metrics/analysis.h"
#include "analyzer/partial/merge.h"
#include "analyzer/report/report_json.h"
#include "analyzer/synth/pattern_synth.h"
#include "tests/analyzer/test_metrics_support.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

using namespace osc;
using osc::crossrank::pairRoute;
namespace fs = std::filesystem;

namespace {

using Seqs = std::vector<std::optional<uint64_t>>;
using Pairs = std::vector<std::pair<size_t, size_t>>;

constexpr TimeNs us(TimeNs v) { return v * 1000; }
constexpr uint64_t kComm = 0xc0ffee;
const std::string kSendRecv = "void ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";

TEST(PairRoute, SameNumbersPairWhateverWasMissedBefore) {
    // The receiver's capture began after send 3 arrived.
    EXPECT_EQ(pairRoute({3, 4, 5}, {4, 5}), (Pairs{{1, 0}, {2, 1}}));
    // The sender's capture began later: receive 0 has no send.
    EXPECT_EQ(pairRoute({1, 2}, {0, 1, 2}), (Pairs{{0, 1}, {1, 2}}));
    // A number on one side only pairs with nothing, wherever it lies.
    EXPECT_EQ(pairRoute({0, 1, 2, 3}, {0, 2, 3}), (Pairs{{0, 0}, {2, 1}, {3, 2}}));
    EXPECT_EQ(pairRoute({}, {0}), Pairs{});
}

TEST(PairRoute, RepeatedOrMissingNumbersFallBackToOrder) {
    // Seq 0 twice among the sends: a writer that does not number per peer
    // and direction (PyTorch-made rows). By number it would be {0,0},{2,1}.
    EXPECT_EQ(pairRoute({0, 0, 1}, {0, 1}), (Pairs{{0, 0}, {1, 1}}));
    EXPECT_EQ(pairRoute({4, 5}, {5, 5, 6}), (Pairs{{0, 0}, {1, 1}}));
    // One part without a number.
    EXPECT_EQ(pairRoute({std::nullopt, 4, 5}, {4, 5}), (Pairs{{0, 0}, {1, 1}}));
    EXPECT_EQ(pairRoute({3, 4}, {std::nullopt}), (Pairs{{0, 0}}));
}

// One SendRecv kernel with one plugin row at its own GPU times.
void part(osc::testing::TraceBuilder& b, int rank, bool send, TimeNs start, TimeNs end, uint64_t seq) {
    b.kernel(rank, 0, kSendRecv, start, end, send ? 13 : 14);
    b.p2pRow(rank, 0, kComm, send ? "Send" : "Recv", 1 - rank, 2, 1024, start, end, seq);
}

// Rank 1's capture began at 30 µs, after rank 0's send 0 [0, 10) had been
// received. Send 1 [100, 160) pairs with receive 1 [40, 160): the receive
// waits [40, 100) (60 µs). By order, send 0 would pair with it instead, and
// having ended before the receive began, keep nothing waiting.
TEST(P2pSequence, LateCaptureOnTheReceiverPairsTheTruePartners) {
    osc::testing::TraceBuilder b;
    part(b, 0, true, us(0), us(10), 0);
    part(b, 0, true, us(100), us(160), 1);
    part(b, 1, false, us(40), us(160), 1);
    const Analysis a = analyze(b.finalized());
    ASSERT_EQ(a.devices.size(), 2u);
    ASSERT_EQ(a.p2p.size(), 1u);
    EXPECT_EQ(a.p2p[0].sender, (std::pair<int, int>{0, 1}));
    EXPECT_EQ(a.p2p[0].receiver, (std::pair<int, int>{1, 0}));
    EXPECT_EQ(a.devices[1].wait->comm_wait_ns, us(60));
    EXPECT_EQ(a.devices[1].wait->exposed_wait_ns, us(60));
    EXPECT_EQ(a.devices[0].wait->comm_wait_ns, 0);
    // The send started later while the receive ran: rank 0 arrived last.
    EXPECT_EQ(a.devices[0].last_arrivals, 1);
    EXPECT_EQ(a.devices[0].delay_caused_ns, us(60));
    ASSERT_EQ(a.warnings.size(), 1u);
    EXPECT_NE(a.warnings[0].find("1 send(s)/receive(s) found no partner"), std::string::npos) << a.warnings[0];
}

// The same kernels with rank 0's sends both numbered 0: the route falls
// back to order, send 0 with the receive, and nothing waits.
TEST(P2pSequence, RepeatedNumbersOnARoutePairByOrder) {
    osc::testing::TraceBuilder b;
    part(b, 0, true, us(0), us(10), 0);
    part(b, 0, true, us(100), us(160), 0);
    part(b, 1, false, us(40), us(160), 1);
    const Analysis a = analyze(b.finalized());
    ASSERT_EQ(a.p2p.size(), 1u);
    EXPECT_EQ(a.p2p[0].sender, (std::pair<int, int>{0, 0}));
    EXPECT_EQ(a.p2p[0].receiver, (std::pair<int, int>{1, 0}));
    EXPECT_EQ(a.devices[1].wait->comm_wait_ns, 0);
    EXPECT_EQ(a.devices[0].last_arrivals, 0);
    EXPECT_EQ(a.devices[1].last_arrivals, 0);
}

// synth numbers Send/Recv rows as the agent does: per rank, communicator,
// peer and direction, from 0, in call (here: time) order.
void expectNumberedPerPeerAndDirection(const Capture& c) {
    size_t rows = 0;
    for (const auto& p : c.processes) {
        const auto& t = p.collectives;
        std::map<std::tuple<uint64_t, int32_t, std::string_view>, std::vector<std::pair<TimeNs, uint64_t>>> calls;
        for (size_t r = 0; r < t.size(); ++r) {
            const std::string_view func = c.strings.at(t.func[r]);
            if (func == "Send" || func == "Recv")
                calls[{t.commHash[r], t.root[r], func}].emplace_back(t.gpuStart[r], t.seqNumber[r]);
        }
        for (auto& [route, list] : calls) {
            std::stable_sort(list.begin(), list.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
            for (size_t k = 0; k < list.size(); ++k, ++rows)
                EXPECT_EQ(list[k].second, k)
                    << "rank " << p.rank << " peer " << std::get<1>(route) << ' ' << std::get<2>(route);
        }
    }
    EXPECT_GT(rows, 0u);
}

TEST(P2pSequence, SynthNumbersAsTheAgentDoes) {
    synth::PipelineSpec pipe;
    pipe.stages = 4;
    pipe.microbatches = 3;
    pipe.steps = 2;
    expectNumberedPerPeerAndDirection(synth::synthesizePipeline(pipe));
    synth::AllToAllSpec a2a;
    a2a.ranks = 4;
    a2a.steps = 2;
    expectNumberedPerPeerAndDirection(synth::synthesizeAllToAll(a2a));
}

// --- A pipeline whose middle stage attached late --------------------------

void exec(const std::string& file, const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
    sqlite3_free(error);
    sqlite3_close(db);
}

// What the rank lost by starting its capture at `t`: kernels and plugin rows before it.
void startCaptureAt(const std::string& file, TimeNs t) {
    const std::string at = std::to_string(t);
    exec(file, "DELETE FROM OVERLAPSCOPE_KERNEL WHERE start < " + at +
                   "; DELETE FROM OVERLAPSCOPE_NCCL_COLL WHERE gpuStart < " + at);
}

using OpId = std::pair<int, int>;  // (device, operation)

// Union length of intervals, by elementary segments.
TimeNs lengthOf(const std::vector<std::pair<TimeNs, TimeNs>>& in, const std::vector<std::pair<TimeNs, TimeNs>>& minus) {
    std::vector<TimeNs> cuts;
    for (const auto* v : {&in, &minus})
        for (const auto& [s, e] : *v) {
            cuts.push_back(s);
            cuts.push_back(e);
        }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    const auto covers = [](const std::vector<std::pair<TimeNs, TimeNs>>& v, TimeNs a, TimeNs b) {
        for (const auto& [s, e] : v)
            if (s <= a && b <= e) return true;
        return false;
    };
    TimeNs total = 0;
    for (size_t i = 0; i + 1 < cuts.size(); ++i)
        if (covers(in, cuts[i], cuts[i + 1]) && !covers(minus, cuts[i], cuts[i + 1])) total += cuts[i + 1] - cuts[i];
    return total;
}

class LatePipeline : public ::testing::Test {
protected:
    void SetUp() override {
        synth::PipelineSpec spec;
        spec.stages = 4;
        spec.microbatches = 4;
        spec.steps = 2;
        spec.forwardNs = 200'000;
        spec.backwardNs = 400'000;
        spec.transferNs = 30'000;
        spec.activationBytes = 1 << 20;
        files_ = synth::writePipeline(spec, dir_ / "pipe", false);
        ASSERT_EQ(files_.size(), 4u);
        // Stage 2 attached while step 0 ran: after its first receive from
        // stage 1 (it starts once stage 1's first forward is done), before
        // its second. Stage 1 still holds the sends of both.
        late_ = 2;
        const Capture whole = loadCaptures(files_);
        std::vector<TimeNs> receives;
        for (const auto& p : whole.processes) {
            if (p.rank != late_) continue;
            const auto& t = p.collectives;
            for (size_t r = 0; r < t.size(); ++r)
                if (whole.strings.at(t.func[r]) == "Recv" && t.root[r] == late_ - 1) receives.push_back(t.gpuStart[r]);
        }
        ASSERT_GE(receives.size(), 3u);
        std::sort(receives.begin(), receives.end());
        startCaptureAt(files_[static_cast<size_t>(late_)], (receives[0] + receives[1]) / 2);
    }

    // The true pairs: a send to rank B and a receive from rank A ending at the
    // same moment (the generator ends both at the transfer's arrival, and a
    // stage's sends to one peer go one after another on one stream).
    static std::set<std::pair<OpId, OpId>> truePairs(const Analysis& a) {
        std::set<std::pair<OpId, OpId>> out;
        for (size_t x = 0; x < a.devices.size(); ++x)
            for (size_t i = 0; i < a.devices[x].collectives.size(); ++i) {
                const auto& s = a.devices[x].collectives[i];
                if (s.p2p.size() != 1 || !s.p2p[0].send) continue;
                for (size_t y = 0; y < a.devices.size(); ++y) {
                    if (a.devices[y].rank != s.p2p[0].peer) continue;
                    for (size_t j = 0; j < a.devices[y].collectives.size(); ++j) {
                        const auto& r = a.devices[y].collectives[j];
                        if (r.p2p.size() == 1 && !r.p2p[0].send && r.p2p[0].peer == a.devices[x].rank &&
                            r.end_ns == s.end_ns)
                            out.insert({{static_cast<int>(x), static_cast<int>(i)},
                                        {static_cast<int>(y), static_cast<int>(j)}});
                    }
                }
            }
        return out;
    }

    static report::ReportOptions options(const std::vector<std::string>& inputs) {
        report::ReportOptions o;
        o.inputs = inputs;
        o.toolVersion = "test";
        o.steps = o.collectives = o.interference = true;
        o.topCollectives = 0;
        return o;
    }

    const testsupport::TempDir dir_;
    std::vector<std::string> files_;
    int late_ = -1;
};

TEST_F(LatePipeline, EveryTransferLinksTheTruePartners) {
    const Analysis a = analyze(loadCaptures(files_));
    ASSERT_EQ(a.devices.size(), 4u);
    const auto truth = truePairs(a);
    size_t receives = 0, sends = 0;
    for (const auto& d : a.devices)
        for (const auto& op : d.collectives)
            for (const auto& p : op.p2p) (p.send ? sends : receives) += 1;
    // Stage 1 holds a send whose receive stage 2 never captured.
    ASSERT_GT(sends, truth.size());
    std::ostringstream json;
    report::writeJsonReport(json, a, options(files_));
    const auto transfers = nlohmann::json::parse(json.str()).at("p2p_transfers");
    std::set<std::pair<OpId, OpId>> reported;
    for (const auto& t : transfers)
        reported.insert({{t["sender"]["device"].get<int>(), t["sender"]["collective"].get<int>()},
                         {t["receiver"]["device"].get<int>(), t["receiver"]["collective"].get<int>()}});
    EXPECT_EQ(transfers.size(), truth.size());
    EXPECT_EQ(reported, truth);
    const std::string unmatched =
        std::to_string(sends + receives - 2 * truth.size()) + " send(s)/receive(s) found no partner";
    bool warned = false;
    for (const auto& w : a.warnings) warned |= w.find(unmatched) != std::string::npos;
    EXPECT_TRUE(warned) << unmatched;
}

// docs/metrics.md 7c/7d from the true pairs, by brute force: per kernel its
// last arrival, waiting and transfer parts, then the unions per device.
TEST_F(LatePipeline, WaitingAndLastArrivalsFollowTheTruePairs) {
    const Analysis a = analyze(loadCaptures(files_));
    const auto truth = truePairs(a);
    std::map<OpId, std::vector<OpId>> partners;
    for (const auto& [s, r] : truth) {
        partners[s].push_back(r);
        partners[r].push_back(s);
    }
    const auto op = [&](OpId id) -> const CollectiveInstance& {
        return a.devices[static_cast<size_t>(id.first)].collectives[static_cast<size_t>(id.second)];
    };
    std::vector<int> lastArrivals(a.devices.size(), 0);
    std::vector<TimeNs> delay(a.devices.size(), 0);
    for (const auto& [s, r] : truth) {
        const auto &x = op(s), &y = op(r);
        if (x.start_ns == y.start_ns) continue;
        const bool yLate = y.start_ns > x.start_ns;
        const auto& early = yLate ? x : y;
        const auto& late = yLate ? y : x;
        if (late.start_ns > early.end_ns) continue;
        const int who = yLate ? r.first : s.first;
        lastArrivals[static_cast<size_t>(who)] += 1;
        delay[static_cast<size_t>(who)] += late.start_ns - early.start_ns;
    }
    TimeNs anyWait = 0;
    for (size_t d = 0; d < a.devices.size(); ++d) {
        const auto& dev = a.devices[d];
        std::vector<std::pair<TimeNs, TimeNs>> wait, transfer, compute;
        for (size_t i = 0; i < dev.collectives.size(); ++i) {
            const auto& k = dev.collectives[i];
            const auto it = partners.find({static_cast<int>(d), static_cast<int>(i)});
            if (it == partners.end()) {
                transfer.emplace_back(k.start_ns, k.end_ns);
                continue;
            }
            TimeNs last = k.start_ns;
            for (const auto& p : it->second)
                if (op(p).start_ns <= k.end_ns) last = std::max(last, op(p).start_ns);
            wait.emplace_back(k.start_ns, std::min(k.end_ns, last));
            transfer.emplace_back(std::max(k.start_ns, last), k.end_ns);
        }
        // Compute kernels: everything but the SendRecv ones, from the capture.
        const Capture c = loadCapture(files_[d]);
        ASSERT_EQ(c.processes.size(), 1u);
        const auto& kernels = c.processes[0].devices.at(0).kernels;
        for (size_t i = 0; i < kernels.size(); ++i)
            if (c.strings.at(kernels.name[i]).find("SendRecv") == std::string_view::npos)
                compute.emplace_back(kernels.start[i], kernels.end[i]);
        // Wt ∖ Tr, and of that what compute does not cover.
        const TimeNs commWait = lengthOf(wait, transfer);
        std::vector<std::pair<TimeNs, TimeNs>> covered = transfer;
        covered.insert(covered.end(), compute.begin(), compute.end());
        const TimeNs exposedWait = lengthOf(wait, covered);
        ASSERT_TRUE(dev.wait.has_value());
        EXPECT_EQ(dev.wait->comm_wait_ns, commWait) << "rank " << dev.rank;
        EXPECT_EQ(dev.wait->exposed_wait_ns, exposedWait) << "rank " << dev.rank;
        EXPECT_EQ(dev.wait->exposed_transfer_ns, dev.totals.exposed_comm_ns - exposedWait) << "rank " << dev.rank;
        EXPECT_EQ(dev.last_arrivals, lastArrivals[d]) << "rank " << dev.rank;
        EXPECT_EQ(dev.delay_caused_ns, delay[d]) << "rank " << dev.rank;
        anyWait += commWait;
    }
    EXPECT_GT(anyWait, 0);  // the pipeline does wait: the figures are not trivially 0
}

// report --partial per rank and merge: the same bytes as report over all
// captures (the partials carry the numbers; without them the merge pairs by
// order and links other kernels).
TEST_F(LatePipeline, PartialsPerRankMergeToTheSameReport) {
    const AnalysisSettings settings;
    std::ostringstream want;
    report::writeJsonReport(want, analyze(loadCaptures(files_), settings), options(files_));
    std::vector<std::string> partials;
    for (const auto& f : files_) {
        const job::AnalyzedFiles analyzed({f}, settings);
        const std::string out = dir_ / (fs::path(f).stem().string() + ".partial.json");
        std::ofstream o(out, std::ios::binary);
        analyzed.writePartial(o, {f}, "overlapscope test");
        partials.push_back(out);
    }
    partial::PartSet set;
    for (const auto& p : partials) set.addPartialFile(p);
    std::ostringstream merged;
    partial::writeMergedJson(set, {}, options(files_), merged);
    EXPECT_EQ(merged.str(), want.str());
}

}  // namespace
