// The NCCL plugin's send and receive rows end to end: each rank of a job is a
// capture file written by a CaptureSession (its GPU activity a script of
// kernels) while the test plays NCCL on that rank's plugin context; the
// analyzer reads the files and must pair every send with its receive
// (docs/metrics.md sections 7d and 7f). The plugin's GPU times are put on a
// clock 0.77 ms off the kernels', as on the H100 (plugin_clock.h).
#include "agent/core/buffer_pool.h"
#include "agent/core/capture_session.h"
#include "analyzer/crossrank/analyze.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/metrics/analysis.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/fake_nccl_sink.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <set>
#include <tuple>
#include <vector>

namespace osc::agent {
namespace {

using FakeNcclComm = test::SinkNcclComm;
using test::NcclAbi;

constexpr uint64_t kComm = 0xC0FFEE0123ull;
constexpr uint64_t MiB = 1u << 20;
constexpr TimeNs us(int64_t v) { return v * 1000; }
constexpr int64_t kSourceOrigin = 5'000'000'000;  // the kernels' clock at capture start
constexpr int64_t kGpuClockAhead = us(770);       // the GPU timer reads this much later

// A rank's GPU activity as a script, handed over in one buffer when the
// capture starts; times are capture-relative ns.
class ScriptedSource final : public ActivitySource {
public:
    struct Kernel {
        TimeNs start = 0, end = 0;
        bool nccl = false;  // NCCL's SendRecv kernel, else a GEMM
    };
    ScriptedSource(int64_t originUtcNs, std::vector<Kernel> kernels)
        : originUtcNs_(originUtcNs), kernels_(std::move(kernels)) {}

    const char* name() const override { return "scripted"; }
    bool start(BufferSink& sink, std::string& error) override {
        size_t size = 0;
        uint8_t* buffer = sink.requestBuffer(&size);
        const size_t bytes = kernels_.size() * sizeof(Kernel);
        if (!buffer || size < bytes) {
            error = "scripted source: no buffer big enough";
            return false;
        }
        std::memcpy(buffer, kernels_.data(), bytes);
        sink.bufferCompleted(buffer, bytes);
        return true;
    }
    void stop() override {}
    void flush() override {}
    void decode(const uint8_t* buffer, size_t validBytes, const DecodeContext& context, RowSink& rows) override {
        uint32_t correlation = 0;
        for (size_t at = 0; at + sizeof(Kernel) <= validBytes; at += sizeof(Kernel)) {
            Kernel k;
            std::memcpy(&k, buffer + at, sizeof k);
            KernelRow r;
            r.start = k.start;
            r.end = k.end;
            r.deviceId = 0;
            r.contextId = 1;
            r.streamId = k.nccl ? 13 : 7;
            r.correlationId = ++correlation;
            r.globalPid = context.globalPid;
            r.demangledName = k.nccl ? "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"
                                     : "gemm_bf16_tn(float*, float*, float*, int)";
            r.shortName = k.nccl ? "ncclDevKernel_SendRecv" : "gemm_bf16_tn";
            r.gridX = r.gridY = r.gridZ = r.blockX = r.blockY = r.blockZ = 1;
            rows.addKernel(r);
        }
    }
    int64_t timestampNs() const override { return kSourceOrigin; }
    CaptureOrigin captureOrigin() const override { return {kSourceOrigin, originUtcNs_}; }
    uint64_t takeDroppedRecords() override { return 0; }

private:
    int64_t originUtcNs_;
    std::vector<Kernel> kernels_;
};

// One send or receive of a kernel launch.
struct Call {
    bool send = true;
    int peer = -1;
    uint64_t bytes = 0;  // bf16: half as many elements
};

// One rank: its capture runs while the test plays NCCL on its communicator
// through the plugin callbacks, whose rows go into the capture as the
// agent's do.
class Rank {
public:
    Rank(const std::string& path, int rank, int nranks, int64_t originUtcNs,
         std::vector<ScriptedSource::Kernel> kernels)
        : originUtcNs_(originUtcNs),
          source_(originUtcNs, std::move(kernels)),
          pool_(1u << 20, 64u << 10),
          session_(config(path, rank, nranks), source_, pool_) {
        std::string error;
        started_ = session_.start(error) == CaptureSession::Start::Started;
        EXPECT_TRUE(started_) << error;
        comm_ = std::make_unique<FakeNcclComm>(NcclAbi::V5, kComm, nranks, rank, [this](PendingCollective&& c) {
            session_.submitCollective(std::move(c));
        });
    }

    // One kernel launch of `calls`, the kernel running [start, end) on the
    // kernels' clock; each call on a channel of its own spanning the kernel.
    void launch(const std::vector<Call>& calls, TimeNs start, TimeNs end) {
        FakeNcclComm& c = *comm_;
        void* group = c.launch();
        std::vector<void*> ops;
        for (const Call& call : calls) {
            const size_t count = call.bytes / 2;
            ops.push_back(call.send ? c.send(group, call.peer, count, "ncclBfloat16", 1)
                                    : c.recv(group, call.peer, count, "ncclBfloat16", 1));
        }
        for (void* op : ops) c.stop(op);
        c.stop(group);
        for (size_t i = 0; i < ops.size(); ++i) c.channel(ops[i], static_cast<int>(i), gpuTimer(start), gpuTimer(end));
    }

    void finish() {
        comm_->finalize();  // the communicator is destroyed, then the capture stops
        session_.stop(CaptureEnd::Stopped);
    }

private:
    static SessionConfig config(const std::string& path, int rank, int nranks) {
        SessionConfig cfg;
        cfg.path = path;
        cfg.who.host = "node" + std::to_string(rank);
        cfg.who.pid = 4000 + rank;
        cfg.who.rank = cfg.who.localRank = rank;
        cfg.who.worldSize = nranks;
        cfg.who.commandLine = cfg.who.executable = "train.py";
        return cfg;
    }
    uint64_t gpuTimer(TimeNs t) const { return static_cast<uint64_t>(originUtcNs_ + t + kGpuClockAhead); }

    int64_t originUtcNs_;
    ScriptedSource source_;
    BufferPool pool_;
    CaptureSession session_;
    bool started_ = false;
    std::unique_ptr<FakeNcclComm> comm_;
};

// (sender rank, its kernel's start, receiver rank, its kernel's start, bytes)
using Transfer = std::tuple<int, TimeNs, int, TimeNs, uint64_t>;

std::multiset<Transfer> transfersByRank(const Analysis& a) {
    std::multiset<Transfer> out;
    for (const P2pTransfer& t : a.p2p) {
        const DeviceAnalysis& s = a.devices.at(static_cast<size_t>(t.sender.first));
        const DeviceAnalysis& r = a.devices.at(static_cast<size_t>(t.receiver.first));
        EXPECT_EQ(t.commHash.value_or(0), kComm);
        out.insert({s.rank, s.collectives.at(static_cast<size_t>(t.sender.second)).start_ns, r.rank,
                    r.collectives.at(static_cast<size_t>(t.receiver.second)).start_ns, t.bytes});
    }
    return out;
}

TEST(PluginP2pCapture, PipelineSendsPairWithReceivesAcrossTwoRanks) {
    // Two pipeline stages: stage 0 sends an activation (4 MiB) to stage 1; in
    // the steady state both exchange in one grouped kernel (activation one
    // way, gradient of 2 MiB the other); then stage 1 sends a last gradient.
    test::TempDir dir;
    const int64_t origin = realtimeNs();
    Rank r0(
        dir / "rank0.sqlite", 0, 2, origin,
        {{us(100), us(400), true}, {us(400), us(900), false}, {us(1000), us(1250), true}, {us(1900), us(2250), true}});
    Rank r1(
        dir / "rank1.sqlite", 1, 2, origin,
        {{us(50), us(400), true}, {us(400), us(950), false}, {us(1000), us(1250), true}, {us(2000), us(2200), true}});
    r0.launch({{true, 1, 4 * MiB}}, us(100), us(400));
    r1.launch({{false, 0, 4 * MiB}}, us(50), us(400));
    r0.launch({{true, 1, 4 * MiB}, {false, 1, 2 * MiB}}, us(1000), us(1250));
    r1.launch({{false, 0, 4 * MiB}, {true, 0, 2 * MiB}}, us(1000), us(1250));
    r1.launch({{true, 0, 2 * MiB}}, us(2000), us(2200));
    r0.launch({{false, 1, 2 * MiB}}, us(1900), us(2250));
    r0.finish();
    r1.finish();

    const Analysis a = analyze(loadCaptures({dir / "rank0.sqlite", dir / "rank1.sqlite"}));
    ASSERT_EQ(a.devices.size(), 2u);
    for (const DeviceAnalysis& d : a.devices) {
        size_t withPeers = 0;
        for (const CollectiveInstance& op : d.collectives) withPeers += !op.p2p.empty();
        EXPECT_EQ(withPeers, 3u) << "every SendRecv kernel of rank " << d.rank << " got its rows";
    }
    const std::multiset<Transfer> want = {
        {0, us(100), 1, us(50), 4 * MiB},
        {0, us(1000), 1, us(1000), 4 * MiB},
        {1, us(1000), 0, us(1000), 2 * MiB},
        {1, us(2000), 0, us(1900), 2 * MiB},
    };
    EXPECT_EQ(transfersByRank(a), want);
    for (const std::string& w : a.warnings) EXPECT_EQ(w.find("unmatched"), std::string::npos) << w;
}

TEST(PluginP2pCapture, GroupedAllToAllOfThreeRanks) {
    // docs/metrics.md Example 8 from plugin rows: rank 0 sends 2 MiB to each
    // other rank, rank 1 likewise, rank 2 sends 8 MiB to each; every rank
    // also copies 1 MiB to itself, which moves nothing between ranks.
    test::TempDir dir;
    const int64_t origin = realtimeNs();
    const auto sent = [](int from, int to) { return from == to ? MiB : from == 2 ? 8 * MiB : 2 * MiB; };
    const TimeNs base = us(1000);
    const std::vector<std::pair<TimeNs, TimeNs>> kernel = {
        {base, base + us(60)}, {base + us(10), base + us(60)}, {base + us(20), base + us(100)}};
    std::vector<std::unique_ptr<Rank>> ranks;
    for (int r = 0; r < 3; ++r) {
        std::vector<ScriptedSource::Kernel> k = {
            {kernel[static_cast<size_t>(r)].first, kernel[static_cast<size_t>(r)].second, true}};
        if (r == 0) k.push_back({base, base + us(30), false});
        ranks.push_back(std::make_unique<Rank>(dir / ("r" + std::to_string(r) + ".sqlite"), r, 3, origin, k));
    }
    for (int r = 0; r < 3; ++r) {
        std::vector<Call> calls;
        for (int p = 0; p < 3; ++p) {
            calls.push_back({true, p, sent(r, p)});
            calls.push_back({false, p, sent(p, r)});
        }
        ranks[static_cast<size_t>(r)]->launch(calls, kernel[static_cast<size_t>(r)].first,
                                              kernel[static_cast<size_t>(r)].second);
    }
    for (auto& r : ranks) r->finish();

    const Analysis a = analyze(loadCaptures({dir / "r0.sqlite", dir / "r1.sqlite", dir / "r2.sqlite"}));
    ASSERT_EQ(a.devices.size(), 3u);
    std::multiset<Transfer> want;
    for (int from = 0; from < 3; ++from)
        for (int to = 0; to < 3; ++to)
            if (from != to)
                want.insert({from, kernel[static_cast<size_t>(from)].first, to, kernel[static_cast<size_t>(to)].first,
                             sent(from, to)});
    EXPECT_EQ(transfersByRank(a), want);

    ASSERT_EQ(a.alltoall.size(), 1u);
    const AllToAllStep& s = a.alltoall[0];
    ASSERT_EQ(s.ranks.size(), 3u);
    for (const AllToAllRank& rank : s.ranks) {
        const int r = a.devices.at(static_cast<size_t>(rank.device)).rank;
        // Sent to and received from the other ranks: 14, 14 and 20 MiB.
        EXPECT_EQ(rank.bytes.value_or(0), r == 2 ? 20 * MiB : 14 * MiB) << "rank " << r;
    }
    ASSERT_TRUE(s.bytes_imbalance);
    EXPECT_DOUBLE_EQ(*s.bytes_imbalance, 1.25);
    EXPECT_EQ(a.devices.at(static_cast<size_t>(s.overloaded)).rank, 2);
}

}  // namespace
}  // namespace osc::agent
