// The NCCL profiler plugin's point-to-point rows: sends and receives played
// by a fake NCCL (fake_nccl.h) on the plugin's tables as nccl_plugin.cpp
// exports them, under both ABI versions, their `init` handing rows to the test.
#include "tests/agent/fake_nccl_sink.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace osc::agent {
namespace {

using FakeNcclComm = test::SinkNcclComm;
using test::NcclAbi;

constexpr uint64_t kComm = 0x5EED0F00Du;
constexpr uint64_t kT0 = 1'700'000'000'000'000'000ull;  // a GPU timer reading, ns

struct Rows {
    std::vector<PendingCollective> rows;
    CollectiveTracker::Emit sink() {
        return [this](PendingCollective&& c) { rows.push_back(std::move(c)); };
    }
};

class NcclP2p : public ::testing::TestWithParam<NcclAbi> {};

INSTANTIATE_TEST_SUITE_P(Abi, NcclP2p, ::testing::Values(NcclAbi::V4, NcclAbi::V5),
                         [](const auto& p) { return p.param == NcclAbi::V4 ? "v4" : "v5"; });

TEST_P(NcclP2p, AsksForSendsReceivesTheirLaunchesAndChannels) {
    Rows out;
    FakeNcclComm comm(GetParam(), kComm, 2, 0, out.sink());
    EXPECT_EQ(comm.initResult(), 0);
    for (int bit : {ncclProfileGroup, ncclProfileColl, ncclProfileP2p, ncclProfileKernelCh})
        EXPECT_TRUE(comm.mask() & bit) << bit;
    // Nothing NCCL would have to produce for nothing: no proxy steps, no API events.
    EXPECT_FALSE(comm.mask() & (ncclProfileProxyOp | ncclProfileProxyStep | ncclProfileP2pApi));
}

TEST_P(NcclP2p, SendRowHasPeerBytesAndGpuTimesOfItsChannels) {
    Rows out;
    FakeNcclComm comm(GetParam(), kComm, 8, 3, out.sink());
    void* launch = comm.launch();
    ASSERT_NE(launch, nullptr) << "ABI 4 starts no operation event under a launch without a handle";
    void* send = comm.send(launch, 5, 1000, "ncclBfloat16", 2);
    ASSERT_NE(send, nullptr);
    comm.stop(send);
    comm.stop(launch);
    void* ch0 = comm.channelStart(send, 0, kT0 + 900);
    void* ch1 = comm.channelStart(send, 1, kT0 + 800);
    comm.channelStop(ch0, kT0 + 1200);
    EXPECT_TRUE(out.rows.empty()) << "channel 1 still runs";
    comm.channelStop(ch1, kT0 + 1500);
    ASSERT_EQ(out.rows.size(), 1u);
    const PendingCollective& p = out.rows[0];
    EXPECT_EQ(p.func, "Send");
    EXPECT_EQ(p.datatype, "ncclBfloat16");
    EXPECT_EQ(p.algo, "");
    EXPECT_EQ(p.proto, "");
    EXPECT_EQ(p.row.commHash, kComm);
    EXPECT_EQ(p.row.rank, 3);
    EXPECT_EQ(p.row.nranks, 8);
    EXPECT_EQ(p.row.root, 5);  // the peer
    EXPECT_EQ(p.row.count, 1000u);
    EXPECT_EQ(p.row.bytes, 2000u);
    EXPECT_EQ(p.row.nChannels, 2);
    EXPECT_EQ(p.row.seqNumber, 0u);
    EXPECT_EQ(p.row.gpuStart, static_cast<int64_t>(kT0 + 800));  // earliest channel start
    EXPECT_EQ(p.row.gpuEnd, static_cast<int64_t>(kT0 + 1500));   // latest channel stop
    EXPECT_GT(p.row.enqueue, 0);
}

TEST_P(NcclP2p, ReceivesAndSequenceNumbersPerPeerAndDirection) {
    Rows out;
    FakeNcclComm comm(GetParam(), kComm, 4, 0, out.sink());
    // Five launches of one call each, each kernel 100 ns after the last.
    const std::vector<std::tuple<const char*, int, uint64_t>> calls = {
        {"Send", 1, 0}, {"Send", 1, 1}, {"Recv", 1, 0}, {"Send", 2, 0}, {"Recv", 1, 1}};
    uint64_t t = kT0;
    for (const auto& [func, peer, seq] : calls) {
        void* launch = comm.launch();
        void* op = std::string(func) == "Send" ? comm.send(launch, peer, 64, "ncclFloat32", 1)
                                               : comm.recv(launch, peer, 64, "ncclFloat32", 1);
        comm.stop(op);
        comm.stop(launch);
        comm.channel(op, 0, t, t + 50);
        t += 100;
    }
    ASSERT_EQ(out.rows.size(), calls.size());
    for (size_t i = 0; i < calls.size(); ++i) {
        const auto& [func, peer, seq] = calls[i];
        EXPECT_EQ(out.rows[i].func, func) << i;
        EXPECT_EQ(out.rows[i].row.root, peer) << i;
        EXPECT_EQ(out.rows[i].row.seqNumber, seq) << i;
        EXPECT_EQ(out.rows[i].row.bytes, 256u) << i;
        EXPECT_EQ(out.rows[i].row.gpuStart, static_cast<int64_t>(kT0 + 100 * i)) << i;
    }
}

TEST_P(NcclP2p, GroupedSendsAndReceivesOfOneKernelEachGetTheirOwnRow) {
    // batch_isend_irecv: four calls, one kernel, each call on its own channels.
    Rows out;
    FakeNcclComm comm(GetParam(), kComm, 3, 0, out.sink());
    void* launch = comm.launch();
    void* s1 = comm.send(launch, 1, 100, "ncclInt8", 2);
    void* r1 = comm.recv(launch, 1, 200, "ncclInt8", 2);
    void* s2 = comm.send(launch, 2, 300, "ncclInt8", 1);
    void* r2 = comm.recv(launch, 2, 400, "ncclInt8", 1);
    // The proxy thread may report channels before the launching thread has
    // stopped the calls.
    void* s1a = comm.channelStart(s1, 0, kT0 + 10);
    void* r1a = comm.channelStart(r1, 1, kT0 + 11);
    void* s2a = comm.channelStart(s2, 2, kT0 + 12);
    void* r2a = comm.channelStart(r2, 3, kT0 + 13);
    void* s1b = comm.channelStart(s1, 4, kT0 + 14);
    void* r1b = comm.channelStart(r1, 5, kT0 + 15);
    for (void* op : {s1, r1, s2, r2}) comm.stop(op);
    comm.stop(launch);
    comm.channelStop(s2a, kT0 + 300);
    ASSERT_EQ(out.rows.size(), 1u);
    EXPECT_EQ(out.rows[0].row.root, 2);
    EXPECT_EQ(out.rows[0].func, "Send");
    comm.channelStop(s1a, kT0 + 400);
    comm.channelStop(r1a, kT0 + 410);
    comm.channelStop(r2a, kT0 + 420);
    comm.channelStop(r1b, kT0 + 430);
    EXPECT_EQ(out.rows.size(), 3u) << "the first send still has a channel running";
    comm.channelStop(s1b, kT0 + 440);
    ASSERT_EQ(out.rows.size(), 4u);
    // func, peer, bytes, gpuStart, gpuEnd: each from its own call and channels.
    std::map<std::pair<std::string, int>, std::tuple<uint64_t, uint64_t, uint64_t>> got;
    for (const auto& p : out.rows) got[{p.func, p.row.root}] = {p.row.bytes, p.row.gpuStart - kT0, p.row.gpuEnd - kT0};
    using T = std::tuple<uint64_t, uint64_t, uint64_t>;
    EXPECT_EQ(got.at({"Send", 1}), (T{100, 10, 440}));
    EXPECT_EQ(got.at({"Recv", 1}), (T{200, 11, 430}));
    EXPECT_EQ(got.at({"Send", 2}), (T{300, 12, 300}));
    EXPECT_EQ(got.at({"Recv", 2}), (T{400, 13, 420}));
}

TEST_P(NcclP2p, AllToAllOfFourRanksGivesEverySendItsReceive) {
    // all_to_all_single as PyTorch issues it: per rank one group with a send
    // to and a receive from every rank, itself included; two dispatches.
    constexpr int n = 4;
    // Elements rank a sends rank b in dispatch d (bf16): all different.
    const auto elems = [](int d, int a, int b) { return static_cast<size_t>(1000 * (d + 1) + 100 * a + 10 * b); };
    std::vector<Rows> out(n);
    std::vector<std::unique_ptr<FakeNcclComm>> ranks;
    for (int r = 0; r < n; ++r)
        ranks.push_back(std::make_unique<FakeNcclComm>(GetParam(), kComm, n, r, out[static_cast<size_t>(r)].sink()));
    for (int d = 0; d < 2; ++d) {
        for (int r = 0; r < n; ++r) {
            FakeNcclComm& comm = *ranks[static_cast<size_t>(r)];
            void* launch = comm.launch();
            std::vector<void*> ops;
            for (int p = 0; p < n; ++p) {
                ops.push_back(comm.send(launch, p, elems(d, r, p), "ncclBfloat16", 1));
                ops.push_back(comm.recv(launch, p, elems(d, p, r), "ncclBfloat16", 1));
            }
            for (void* op : ops) comm.stop(op);
            comm.stop(launch);
            const uint64_t k = kT0 + static_cast<uint64_t>(d) * 1'000'000;  // this dispatch's kernel
            for (size_t i = 0; i < ops.size(); ++i) comm.channel(ops[i], static_cast<int>(i), k + i, k + 5000);
        }
    }
    // Every rank: 2 dispatches x n peers x (send, receive).
    for (int r = 0; r < n; ++r) ASSERT_EQ(out[static_cast<size_t>(r)].rows.size(), size_t{2 * n * 2}) << r;
    // (rank, func, peer, seqNumber) -> bytes; the analyzer pairs the k-th
    // send of a to b with the k-th receive of b from a.
    std::map<std::tuple<int, std::string, int, uint64_t>, uint64_t> bytes;
    for (int r = 0; r < n; ++r)
        for (const auto& p : out[static_cast<size_t>(r)].rows) {
            EXPECT_EQ(p.row.rank, r);
            EXPECT_EQ(p.row.nranks, n);
            EXPECT_EQ(p.row.commHash, kComm);
            EXPECT_TRUE(bytes.emplace(std::tuple{r, p.func, p.row.root, p.row.seqNumber}, p.row.bytes).second)
                << "one row per call";
        }
    for (int d = 0; d < 2; ++d)
        for (int a = 0; a < n; ++a)
            for (int b = 0; b < n; ++b) {
                const uint64_t want = 2 * elems(d, a, b);
                const auto seq = static_cast<uint64_t>(d);
                EXPECT_EQ(bytes.at({a, "Send", b, seq}), want) << d << ' ' << a << "->" << b;
                EXPECT_EQ(bytes.at({b, "Recv", a, seq}), want) << d << ' ' << a << "->" << b;
            }
}

TEST_P(NcclP2p, ChannelsAnnouncedButNeverReportedEndWithTheNextKernel) {
    // NCCL 2.28 announces channels that have nothing to move and so never
    // report (NCCL issue 2056): the row ends once a later launch's kernel ran.
    Rows out;
    FakeNcclComm comm(GetParam(), kComm, 2, 0, out.sink());
    void* first = comm.launch();
    void* send = comm.send(first, 1, 8, "ncclFloat32", 4);  // 4 announced, 2 reported
    void* recv = comm.recv(first, 1, 8, "ncclFloat32", 1);
    comm.stop(send);
    comm.stop(recv);
    comm.stop(first);
    comm.channel(send, 0, kT0 + 100, kT0 + 300);
    comm.channel(send, 1, kT0 + 110, kT0 + 320);
    comm.channel(recv, 2, kT0 + 120, kT0 + 310);
    ASSERT_EQ(out.rows.size(), 1u) << "the receive is complete; its own launch says nothing of the send";
    EXPECT_EQ(out.rows[0].func, "Recv");

    void* second = comm.launch();
    void* next = comm.send(second, 1, 8, "ncclFloat32", 1);
    comm.stop(next);
    comm.stop(second);
    void* ch = comm.channelStart(next, 0, kT0 + 1000);
    EXPECT_EQ(out.rows.size(), 1u) << "a start alone proves nothing";
    comm.channelStop(ch, kT0 + 1100);
    ASSERT_EQ(out.rows.size(), 3u);
    EXPECT_EQ(out.rows[1].func, "Send");
    EXPECT_EQ(out.rows[1].row.seqNumber, 0u);
    EXPECT_EQ(out.rows[1].row.nChannels, 4);
    EXPECT_EQ(out.rows[1].row.gpuStart, static_cast<int64_t>(kT0 + 100));
    EXPECT_EQ(out.rows[1].row.gpuEnd, static_cast<int64_t>(kT0 + 320));
    EXPECT_EQ(out.rows[2].row.seqNumber, 1u);
    EXPECT_EQ(out.rows[2].row.gpuStart, static_cast<int64_t>(kT0 + 1000));
}

TEST_P(NcclP2p, ChannelOfAFinishedOrUnknownOperationIsIgnored) {
    Rows out;
    FakeNcclComm comm(GetParam(), kComm, 2, 1, out.sink());
    void* launch = comm.launch();
    void* recv = comm.recv(launch, 0, 4, "ncclInt32", 1);
    comm.stop(recv);
    comm.stop(launch);
    comm.channel(recv, 0, kT0, kT0 + 10);
    ASSERT_EQ(out.rows.size(), 1u);
    // NCCL names its operations by the handles it was given, also after they ended.
    EXPECT_EQ(comm.channelStart(recv, 1, kT0 + 20), nullptr);
    EXPECT_EQ(comm.channelStart(launch, 0, kT0 + 20), nullptr);
    EXPECT_EQ(comm.channelStart(nullptr, 0, kT0 + 20), nullptr);
    int notAnEvent = 0;
    EXPECT_EQ(comm.channelStart(&notAnEvent, 0, kT0 + 20), nullptr);
    comm.stop(nullptr);
    comm.finalize();
    EXPECT_EQ(out.rows.size(), 1u);
}

TEST_P(NcclP2p, FinalizeEmitsOpenCallsInStartOrder) {
    Rows out;
    FakeNcclComm comm(GetParam(), kComm, 2, 0, out.sink());
    void* launch = comm.launch();
    void* a = comm.send(launch, 1, 1, "ncclUint8", 1);
    void* b = comm.recv(launch, 1, 2, "ncclUint8", 1);
    void* c = comm.send(launch, 1, 3, "ncclUint8", 1);
    for (void* op : {a, b, c}) comm.stop(op);
    comm.channelStart(b, 0, kT0 + 5);  // never stopped: the communicator goes first
    comm.finalize();
    ASSERT_EQ(out.rows.size(), 3u);
    EXPECT_EQ(out.rows[0].row.bytes, 1u);
    EXPECT_EQ(out.rows[1].row.bytes, 2u);
    EXPECT_EQ(out.rows[1].row.gpuStart, static_cast<int64_t>(kT0 + 5));
    EXPECT_EQ(out.rows[1].row.gpuEnd, -1);
    EXPECT_EQ(out.rows[2].row.bytes, 3u);
    EXPECT_EQ(out.rows[2].row.seqNumber, 1u);
    EXPECT_EQ(out.rows[0].row.gpuStart, -1);
}

TEST_P(NcclP2p, CollectivesAndSendsShareALaunch) {
    Rows out;
    FakeNcclComm comm(GetParam(), kComm, 2, 0, out.sink());
    void* launch = comm.launch();
    void* ar = comm.coll(launch, "AllReduce", 7, 256, "ncclFloat32", 2);
    void* send = comm.send(launch, 1, 256, "ncclFloat32", 1);
    comm.stop(ar);
    comm.stop(send);
    comm.stop(launch);
    comm.channel(ar, 0, kT0 + 1, kT0 + 90);
    comm.channel(send, 1, kT0 + 3, kT0 + 95);
    EXPECT_EQ(out.rows.size(), 1u);
    comm.channel(ar, 2, kT0 + 2, kT0 + 99);
    ASSERT_EQ(out.rows.size(), 2u);
    EXPECT_EQ(out.rows[0].func, "Send");
    EXPECT_EQ(out.rows[1].func, "AllReduce");
    EXPECT_EQ(out.rows[1].row.seqNumber, 7u);  // NCCL's own, for collectives
    EXPECT_EQ(out.rows[1].algo, "RING");
    EXPECT_EQ(out.rows[1].row.bytes, 1024u);
    EXPECT_EQ(out.rows[1].row.gpuStart, static_cast<int64_t>(kT0 + 1));
    EXPECT_EQ(out.rows[1].row.gpuEnd, static_cast<int64_t>(kT0 + 99));
}

TEST_P(NcclP2p, CommunicatorsOfOneProcessRunConcurrentlyOnTheirOwnThreads) {
    // A 2D mesh (mesh_2d.py): a tensor-parallel and a data-parallel
    // communicator busy at once in the backward pass. Per communicator two
    // threads launch (the main and the autograd thread; NCCL runs a launch's
    // Group and Coll events on the launching thread, in launch order) and its
    // proxy thread reports channels of operations possibly already stopped,
    // sometimes fewer than announced. Every operation must give exactly one
    // row of its own communicator.
    constexpr int kComms = 2, kLaunchersPerComm = 2, kLaunches = 3000;
    struct Comm {
        std::mutex rowsMutex;
        std::map<uint64_t, int> rowsByComm;
        CollectiveTracker::Emit sink;
        std::unique_ptr<FakeNcclComm> nccl;
        std::mutex launchOrder;  // NCCL launches a communicator's kernels one at a time
        std::mutex queueMutex;
        std::condition_variable queued;
        std::deque<void*> proxyQueue;
        bool launchesDone = false;
        std::atomic<int> ops{0};
    };
    std::vector<std::unique_ptr<Comm>> comms;
    for (int i = 0; i < kComms; ++i) {
        auto c = std::make_unique<Comm>();
        Comm* raw = c.get();
        raw->sink = [raw](PendingCollective&& row) {
            std::lock_guard lock(raw->rowsMutex);
            ++raw->rowsByComm[row.row.commHash];
        };
        raw->nccl = std::make_unique<FakeNcclComm>(GetParam(), kComm + i, 2, 0, raw->sink);
        comms.push_back(std::move(c));
    }
    std::vector<std::thread> proxies, launchers;
    for (auto& c : comms) {
        Comm* comm = c.get();
        proxies.emplace_back([comm] {
            uint64_t t = kT0;
            for (int n = 0;; ++n) {
                void* op = nullptr;
                {
                    std::unique_lock lock(comm->queueMutex);
                    comm->queued.wait(lock, [&] { return !comm->proxyQueue.empty() || comm->launchesDone; });
                    if (comm->proxyQueue.empty()) return;
                    op = comm->proxyQueue.front();
                    comm->proxyQueue.pop_front();
                }
                const int reported = n % 3 == 0 ? 1 : 2;  // 2 announced
                for (int ch = 0; ch < reported; ++ch, t += 10) comm->nccl->channel(op, ch, t, t + 5);
            }
        });
        for (int l = 0; l < kLaunchersPerComm; ++l)
            launchers.emplace_back([comm, l] {
                for (int n = 0; n < kLaunches; ++n) {
                    std::lock_guard order(comm->launchOrder);
                    void* launch = comm->nccl->launch();
                    std::vector<void*> ops;
                    ops.push_back(comm->nccl->coll(launch, "AllReduce", n, 64, "ncclFloat32", 2));
                    if ((n + l) % 2) ops.push_back(comm->nccl->send(launch, 1, 64, "ncclFloat32", 2));
                    {
                        // Handed to the proxy before NCCL stops the operations.
                        std::lock_guard lock(comm->queueMutex);
                        for (void* op : ops) comm->proxyQueue.push_back(op);
                    }
                    comm->queued.notify_one();
                    for (void* op : ops) comm->nccl->stop(op);
                    comm->nccl->stop(launch);
                    comm->ops += static_cast<int>(ops.size());
                }
            });
    }
    for (auto& t : launchers) t.join();
    for (auto& c : comms) {
        {
            std::lock_guard lock(c->queueMutex);
            c->launchesDone = true;
        }
        c->queued.notify_all();
    }
    for (auto& t : proxies) t.join();
    for (int i = 0; i < kComms; ++i) {
        comms[i]->nccl->finalize();
        std::lock_guard lock(comms[i]->rowsMutex);
        EXPECT_EQ(comms[i]->rowsByComm.size(), 1u);
        EXPECT_EQ(comms[i]->rowsByComm[kComm + i], comms[i]->ops.load()) << "communicator " << i;
    }
}

}  // namespace
}  // namespace osc::agent
