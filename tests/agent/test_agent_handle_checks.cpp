// Issue 47: nothing NCCL or CUPTI hands back is trusted. Handles, contexts
// and buffers that the agent did not give out, or no longer holds, are
// counted and ignored: played on the plugin's own tables (rows to the test),
// on the buffer pool, and under load from several threads. This file also
// builds under ThreadSanitizer (test_agent_handle_checks_tsan) and
// AddressSanitizer (scripts/sanitized-tests.sh).
#include "agent/core/buffer_pool.h"
#include "agent/nccl_plugin/plugin_comms.h"
#include "agent/nccl_plugin/plugin_handles.h"
#include "tests/agent/fake_nccl_sink.h"
#include "tests/agent/nccl_stress.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace osc::agent {
namespace {

using test::NcclAbi;
using FakeNcclComm = test::SinkNcclComm;

constexpr uint64_t kComm = 0x47u;
constexpr uint64_t kT0 = 1'700'000'000'000'000'000ull;

using Rows = test::SinkRows;

// One kernel launch of one collective, stopped once enqueued as NCCL does.
void* launchCollective(FakeNcclComm& comm, const char* func, uint64_t seq, int nChannels) {
    void* group = comm.launch();
    void* op = comm.coll(group, func, seq, 64, "ncclFloat32", nChannels);
    comm.stop(op);
    comm.stop(group);
    return op;
}

// What the process's plugin refused since the test began.
class Refused {
public:
    Refused() : before_(nccl::ignoredCallsOfAll()) {}
    uint64_t operator[](IgnoredReason r) const { return nccl::ignoredCallsOfAll().since(before_)[r]; }
    // Refused calls, leaving out orphan channels (which are no calls).
    uint64_t calls() const {
        IgnoredCalls d = nccl::ignoredCallsOfAll().since(before_);
        d[IgnoredReason::NcclOrphanChannel] = 0;
        return d.total();
    }

private:
    IgnoredCalls before_;
};

TEST(PluginHandles, TaggedNumbersNeverPointers) {
    using nccl::HandleKind;
    for (auto kind :
         {HandleKind::Group, HandleKind::Operation, HandleKind::Channel, HandleKind::Context, HandleKind::Link}) {
        void* h = nccl::makeHandle(kind, 0xABCDEFu, 0x123456789ull);
        const auto f = nccl::readHandle(h);
        ASSERT_TRUE(f.has_value());
        EXPECT_EQ(f->kind, kind);
        EXPECT_EQ(f->comm, 0xABCDEFu);
        EXPECT_EQ(f->id, 0x123456789ull);
    }
    EXPECT_EQ(nccl::readHandle(nccl::makeHandle(HandleKind::Link, nccl::kMaxCommSerial, nccl::kMaxHandleId))->id,
              nccl::kMaxHandleId);
    // What any allocator gives (8-aligned) and what NCCL zeroes are no handle of ours.
    int onStack = 0;
    auto onHeap = std::make_unique<double>(1.0);
    EXPECT_FALSE(nccl::readHandle(nullptr));
    EXPECT_FALSE(nccl::readHandle(onHeap.get()));
    EXPECT_FALSE(nccl::readHandle(reinterpret_cast<void*>(uintptr_t{6})));            // kind 6
    EXPECT_FALSE(nccl::readHandle(reinterpret_cast<void*>(uintptr_t{7})));            // kind 7
    EXPECT_FALSE(nccl::readHandle(reinterpret_cast<void*>(uintptr_t{1} << 27 | 2)));  // serial 0
    EXPECT_FALSE(nccl::readHandle(reinterpret_cast<void*>(uintptr_t{1} << 3 | 2)));   // id 0
    (void)onStack;
}

class HandleChecks : public ::testing::TestWithParam<NcclAbi> {};

INSTANTIATE_TEST_SUITE_P(Abi, HandleChecks, ::testing::Values(NcclAbi::V4, NcclAbi::V5),
                         [](const auto& p) { return p.param == NcclAbi::V4 ? "v4" : "v5"; });

// The exact path of the H200 mesh crash: NCCL 2.28.9's proxy thread stops a
// KernelCh event with the handle of a channel stopped a launch ago (the
// slot's old handle), then starts the channel it meant, which it never stops.
TEST_P(HandleChecks, KernelChStopOnAStoppedChannelIsCountedAndItsOrphanEndsItsRow) {
    Rows out;
    Refused refused;
    FakeNcclComm comm(GetParam(), kComm, 2, 0, out.sink());
    // Launch 1: one collective, one channel, reported normally.
    void* a = launchCollective(comm, "AllReduce", 1, 1);
    void* old = comm.channelStart(a, 0, kT0 + 100);
    comm.channelStop(old, kT0 + 200);
    ASSERT_EQ(out.size(), 1u);
    // Launch 2: the proxy sees its kernel finished before it sees it start.
    void* b = launchCollective(comm, "AllReduce", 2, 1);
    comm.channelStop(old, kT0 + 1200);  // recordEventState + stopEvent on the dead handle
    EXPECT_EQ(refused[IgnoredReason::NcclStaleHandle], 2u);
    void* orphan = comm.channelStart(b, 0, kT0 + 1100);
    ASSERT_NE(orphan, nullptr);
    EXPECT_EQ(out.size(), 1u) << "its channel is open: the row waits";
    // Launches 3 and 4 run: b's kernel has long finished.
    for (uint64_t i = 3; i <= 4; ++i)
        comm.channel(launchCollective(comm, "AllReduce", i, 1), 0, kT0 + 1000 * i, kT0 + 1000 * i + 100);
    ASSERT_EQ(out.size(), 4u);
    // b's row went out once launch 4's kernel had run (after launch 3's row).
    EXPECT_EQ(out.rows[2].row.seqNumber, 2u);
    EXPECT_EQ(out.rows[2].row.gpuStart, static_cast<int64_t>(kT0 + 1100));
    EXPECT_EQ(out.rows[2].row.gpuEnd, static_cast<int64_t>(kT0 + 1200)) << "the stale stop's timer was b's end";
    EXPECT_EQ(refused[IgnoredReason::NcclOrphanChannel], 1u);
    // The orphan went with its row: a late stop of it is refused too.
    comm.channelStop(orphan, kT0 + 9999);
    EXPECT_EQ(refused[IgnoredReason::NcclStaleHandle], 4u);
    EXPECT_EQ(out.size(), 4u);
}

TEST_P(HandleChecks, StopsOfHandlesNeverGivenOutAreCounted) {
    Rows out;
    Refused refused;
    FakeNcclComm comm(GetParam(), kComm, 2, 0, out.sink());
    void* g = comm.launch();
    void* op = comm.coll(g, "AllReduce", 1, 64, "ncclFloat32", 1);
    const auto f = nccl::readHandle(op);
    ASSERT_TRUE(f);
    int local = 0;
    auto heap = std::make_unique<uint64_t>(42);
    comm.stop(nullptr);
    comm.stop(&local);
    comm.stop(heap.get());
    comm.channelStop(heap.get(), kT0);
    comm.stop(nccl::makeHandle(nccl::HandleKind::Channel, f->comm, f->id + 1000));              // never given out
    comm.stop(nccl::makeHandle(nccl::HandleKind::Operation, nccl::kMaxCommSerial - 1, f->id));  // no such communicator
    comm.stop(nccl::makeHandle(nccl::HandleKind::Context, f->comm, 1));                         // a context is no event
    EXPECT_EQ(refused[IgnoredReason::NcclNullHandle], 1u);
    EXPECT_EQ(refused[IgnoredReason::NcclForeignHandle], 5u);
    EXPECT_EQ(refused[IgnoredReason::NcclUnknownHandle], 2u);
    EXPECT_EQ(*heap, 42u);
    // None of it touched the real operation.
    comm.stop(op);
    comm.stop(g);
    comm.channel(op, 0, kT0, kT0 + 10);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out.rows[0].row.gpuEnd, static_cast<int64_t>(kT0 + 10));
}

TEST_P(HandleChecks, SecondStopsAreCountedOnceEach) {
    Rows out;
    Refused refused;
    FakeNcclComm comm(GetParam(), kComm, 2, 0, out.sink());
    void* g = comm.launch();
    void* op = comm.send(g, 1, 8, "ncclInt8", 2);
    comm.stop(op);
    comm.stop(op);  // still open: its channels have not run
    EXPECT_EQ(refused[IgnoredReason::NcclStoppedTwice], 1u);
    comm.stop(g);
    void* c0 = comm.channelStart(op, 0, kT0);
    comm.channelStop(c0, kT0 + 5);
    comm.stop(c0);
    EXPECT_EQ(refused[IgnoredReason::NcclStaleHandle], 1u);
    comm.channel(op, 1, kT0 + 1, kT0 + 6);
    ASSERT_EQ(out.size(), 1u);
    comm.stop(op);  // written already
    EXPECT_EQ(refused[IgnoredReason::NcclStaleHandle], 2u);
    EXPECT_EQ(comm.channelStart(op, 2, kT0 + 7), nullptr);  // a channel of a written operation
    EXPECT_EQ(refused[IgnoredReason::NcclStaleHandle], 3u);
    EXPECT_EQ(out.size(), 1u);
    EXPECT_EQ(refused.calls(), 4u);
}

TEST_P(HandleChecks, FinalizeLeavesNoChannelPointingAtAWrittenRow) {
    Rows out;
    Refused refused;
    FakeNcclComm comm(GetParam(), kComm, 2, 0, out.sink());
    void* op = launchCollective(comm, "AllGather", 1, 2);
    void* running = comm.channelStart(op, 0, kT0);
    void* context = comm.context();
    comm.finalizeKeepingContext();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out.rows[0].row.gpuStart, static_cast<int64_t>(kT0));
    EXPECT_EQ(out.rows[0].row.gpuEnd, -1);
    // The proxy thread had not noticed: its channel, its operation, its context.
    comm.channelStop(running, kT0 + 50);
    comm.stop(op);
    EXPECT_EQ(comm.channelStart(op, 1, kT0), nullptr);
    EXPECT_EQ(comm.startOn(context, ncclProfileColl, nullptr), nullptr);
    nccl::finalize(context);  // NCCL finalizing twice
    EXPECT_EQ(refused[IgnoredReason::NcclFinalizedHandle], 6u);
    EXPECT_EQ(refused.calls(), 6u);
    EXPECT_EQ(out.size(), 1u);
}

TEST_P(HandleChecks, ContextsAreCheckedBeforeUse) {
    Rows out;
    Refused refused;
    FakeNcclComm comm(GetParam(), kComm, 2, 0, out.sink());
    int notAContext = 0;
    EXPECT_EQ(comm.startOn(&notAContext, ncclProfileGroup, nullptr), nullptr);
    EXPECT_EQ(comm.startOn(nccl::makeHandle(nccl::HandleKind::Context, nccl::kMaxCommSerial - 3, 1), ncclProfileGroup,
                           nullptr),
              nullptr);
    EXPECT_EQ(refused[IgnoredReason::NcclUnknownContext], 2u);
    // A null context is what our own `init` gives when it cannot serve: not counted.
    EXPECT_EQ(comm.startOn(nullptr, ncclProfileGroup, nullptr), nullptr);
    EXPECT_EQ(refused.calls(), 2u);
    // The communicator itself is untouched.
    EXPECT_NE(comm.launch(), nullptr);
}

TEST_P(HandleChecks, AnotherCommunicatorsHandlesAreForeign) {
    Rows out;
    Refused refused;
    FakeNcclComm a(GetParam(), kComm, 2, 0, out.sink());
    FakeNcclComm b(GetParam(), kComm + 1, 2, 0, out.sink());
    void* ga = a.launch();
    void* opA = a.coll(ga, "AllReduce", 1, 64, "ncclFloat32", 1);
    void* gb = b.launch();
    EXPECT_EQ(b.channelStart(opA, 0, kT0), nullptr);               // a's operation as b's parent
    void* opB = b.coll(ga, "AllReduce", 1, 64, "ncclFloat32", 1);  // a's launch as b's
    EXPECT_EQ(refused[IgnoredReason::NcclForeignHandle], 2u);
    a.stop(opA);
    b.stop(opB);
    a.stop(ga);
    b.stop(gb);
    a.channel(opA, 0, kT0, kT0 + 1);
    b.channel(opB, 0, kT0, kT0 + 1);
    EXPECT_EQ(out.size(), 2u);
}

TEST(HandleChecks, OpenRowsOfAllListsEveryLiveCommunicator) {
    Rows out;
    FakeNcclComm a(NcclAbi::V5, 0x1111, 2, 0, out.sink());
    FakeNcclComm b(NcclAbi::V5, 0x2222, 2, 1, out.sink());
    a.stop(a.coll(a.launch(), "AllReduce", 5, 1, "ncclInt8", 1));
    b.coll(b.launch(), "Broadcast", 9, 1, "ncclInt8", 1);
    std::map<uint64_t, uint64_t> open;
    for (const auto& r : nccl::openRowsOfAll()) open[r.row.commHash] = r.row.seqNumber;
    EXPECT_EQ(open.at(0x1111), 5u);
    EXPECT_EQ(open.at(0x2222), 9u);
    b.finalize();
    open.clear();
    for (const auto& r : nccl::openRowsOfAll()) open[r.row.commHash] = r.row.seqNumber;
    EXPECT_EQ(open.count(0x2222), 0u);
}

// NCCL keeps one event mask for the process, read by every communicator's
// threads: an `init` only ever raises it, atomically, and one that makes no
// communicator leaves it alone.
TEST(HandleChecks, InitNeverLowersTheProcessWideEventMask) {
    Rows out;
    const CollectiveTracker::Emit sink = out.sink();
    constexpr int kOthers = ncclProfileProxyOp | ncclProfileCollApi;  // another plugin's, say
    int mask = kOthers;
    std::atomic<bool> done{false};
    std::atomic<int> lowered{0};
    std::thread reader([&] {
        // As NCCL reads it (COMPILER_ATOMIC_LOAD, relaxed) while communicators come up.
        while (!done.load())
            if ((std::atomic_ref<int>(mask).load(std::memory_order_relaxed) & kOthers) != kOthers) ++lowered;
    });
    std::vector<void*> contexts(8, nullptr);
    std::vector<std::thread> inits;
    for (size_t i = 0; i < contexts.size(); ++i)
        inits.emplace_back([&, i] {
            nccl::initContext(&contexts[i], &mask, nccl::Abi::V5, {100 + i, "mesh", 1, 8, int(i), nullptr}, sink);
        });
    for (auto& t : inits) t.join();
    done = true;
    reader.join();
    EXPECT_EQ(lowered.load(), 0);
    EXPECT_EQ(std::atomic_ref<int>(mask).load(), kOthers | nccl::kEventMask);
    for (void* c : contexts) {
        EXPECT_NE(c, nullptr);
        nccl::finalize(c);
    }
    // No context to give: the mask stays as it was.
    int untouched = kOthers;
    EXPECT_EQ(nccl::initContext(nullptr, &untouched, nccl::Abi::V5, {}, sink), 0);
    EXPECT_EQ(untouched, kOthers);
}

// Stops, state calls and starts from several threads while the main thread
// finalizes: nothing faults, every operation gives exactly one row, and
// every call after the finalize is counted.
TEST(HandleChecks, StopsRacingFinalizeFromSeveralThreads) {
    for (int round = 0; round < 20; ++round) {
        Rows out;
        Refused refused;
        auto comm = std::make_unique<FakeNcclComm>(NcclAbi::V5, kComm + round, 2, 0, out.sink());
        constexpr int kOps = 64, kThreads = 4;
        std::vector<void*> ops, channels;
        void* g = comm->launch();
        for (int i = 0; i < kOps; ++i) ops.push_back(comm->coll(g, "AllReduce", i, 8, "ncclInt8", kThreads));
        for (void* op : ops)
            for (int ch = 0; ch < kThreads; ++ch) channels.push_back(comm->channelStart(op, ch, kT0 + ch));
        std::atomic<int> ready{0};
        std::atomic<bool> finalized{false};
        std::atomic<uint64_t> afterFinalize{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t)
            threads.emplace_back([&, t] {
                ++ready;
                while (ready.load() < kThreads + 1) std::this_thread::yield();
                for (int i = 0; i < kOps; ++i) {
                    void* ch = channels[static_cast<size_t>(i * kThreads + t)];
                    const bool late = finalized.load();
                    comm->channelStop(ch, kT0 + 100);
                    if (t == 0) comm->stop(ops[static_cast<size_t>(i)]);
                    if (late) afterFinalize += t == 0 ? 3 : 2;
                }
            });
        ++ready;
        while (ready.load() < kThreads + 1) std::this_thread::yield();
        comm->finalizeKeepingContext();
        finalized = true;
        for (auto& t : threads) t.join();
        EXPECT_EQ(out.size(), static_cast<size_t>(kOps)) << "round " << round;
        std::map<uint64_t, int> seen;
        for (const auto& r : out.rows) ++seen[r.row.seqNumber];
        for (const auto& [seq, n] : seen) EXPECT_EQ(n, 1) << "seq " << seq;
        EXPECT_GE(refused.calls(), afterFinalize.load());
        EXPECT_LE(refused.calls(), static_cast<uint64_t>(kOps * (2 * kThreads + 1)));
    }
}

TEST(BufferChecks, OnlyLentBuffersAreQueuedOrReleased) {
    BufferPool pool(4 * 4096, 4096);
    uint8_t* lent = pool.acquire();
    ASSERT_NE(lent, nullptr);
    std::vector<uint8_t> notOurs(4096, 0x5A);
    pool.pushCompleted(notOurs.data(), 100);
    pool.pushCompleted(nullptr, 0);
    pool.release(notOurs.data());
    pool.release(lent + 8);  // inside a buffer, not one
    EXPECT_EQ(pool.ignored()[IgnoredReason::BufferForeign], 4u);
    EXPECT_EQ(notOurs[0], 0x5A) << "a buffer not ours is never zeroed";
    EXPECT_EQ(pool.completedCount(), 0u);
    pool.pushCompleted(lent, 1 << 20);  // more than a buffer holds: cut to it
    pool.pushCompleted(lent, 8);        // twice
    EXPECT_EQ(pool.ignored()[IgnoredReason::BufferForeign], 6u);
    CompletedBuffer done;
    ASSERT_TRUE(pool.tryPopCompleted(done));
    EXPECT_EQ(done.validBytes, 4096u);
    EXPECT_FALSE(pool.tryPopCompleted(done));
    pool.release(lent);
    pool.release(lent);  // twice
    EXPECT_EQ(pool.ignored()[IgnoredReason::BufferForeign], 7u);
    EXPECT_EQ(pool.buffersInUse(), 0u);
}

TEST(BufferChecks, BuffersHandedBackAfterTheStopGoBackToThePool) {
    BufferPool pool(2 * 4096, 4096);
    uint8_t* a = pool.acquire();
    uint8_t* b = pool.acquire();
    EXPECT_EQ(pool.acquire(), nullptr);
    pool.pushCompleted(a, 10);  // queued, never taken by the capture
    pool.closeIntake();         // the capture ended
    pool.pushCompleted(b, 10);  // CUPTI's last buffer, after the stop
    EXPECT_EQ(pool.ignored()[IgnoredReason::BufferAfterStop], 2u);
    EXPECT_EQ(pool.buffersInUse(), 0u);
    EXPECT_NE(pool.acquire(), nullptr);
    EXPECT_NE(pool.acquire(), nullptr) << "both came back: the next capture has its whole budget";
}

TEST(BufferChecks, LendingRacesTheIntakeClosing) {
    BufferPool pool(16 * 4096, 4096);
    std::atomic<bool> stop{false};
    std::thread source([&] {
        while (!stop.load())
            if (uint8_t* b = pool.acquire()) {
                b[0] = 1;
                pool.pushCompleted(b, 1);
            }
    });
    std::thread writer([&] {
        CompletedBuffer done;
        while (!stop.load())
            if (pool.popCompleted(done, std::chrono::steady_clock::now() + std::chrono::milliseconds(1)))
                pool.release(done.data);
    });
    for (int i = 0; i < 200; ++i) {
        pool.closeIntake();
        pool.openIntake();
    }
    stop = true;
    source.join();
    writer.join();
    pool.closeIntake();
    EXPECT_EQ(pool.buffersInUse(), 0u);
    EXPECT_EQ(pool.ignored()[IgnoredReason::BufferForeign], 0u);
}

// The short CI run of bench_nccl_plugin_stress's job, on the plugin's own
// tables: 4 communicators, a main and an autograd thread, a proxy thread
// each, the proxy race, double stops, communicators destroyed mid-stream.
TEST(NcclStress, FourCommunicatorsUnderLoadCountEveryRefusedCall) {
    test::StressOptions options;
    if (const char* s = std::getenv("OSC_STRESS_SECONDS")) options.seconds = std::atof(s);
    options.staleStopProbability = 0.02;
    options.doubleStopProbability = 0.02;
    options.destroyEveryMs = 100;
    std::mutex rowsMutex;
    std::map<uint64_t, uint64_t> rowsByComm;
    const CollectiveTracker::Emit sink = [&](PendingCollective&& c) {
        std::lock_guard lock(rowsMutex);
        ++rowsByComm[c.row.commHash];
    };
    Refused refused;
    const test::StressTally tally = test::runNcclStress(
        options, [&](uint64_t commHash) { return std::make_unique<FakeNcclComm>(NcclAbi::V5, commHash, 4, 1, sink); });
    uint64_t rows = 0;
    for (const auto& [comm, n] : rowsByComm) rows += n;
    std::printf(
        "stress: %llu launches, %llu operations, %llu stale stops, %llu double stops, %llu destroyed; "
        "%llu anomalous calls, %llu racing a finalize, %llu refused, %llu orphan channels\n",
        static_cast<unsigned long long>(tally.launches), static_cast<unsigned long long>(tally.operations),
        static_cast<unsigned long long>(tally.staleStops), static_cast<unsigned long long>(tally.doubleStops),
        static_cast<unsigned long long>(tally.destroyed), static_cast<unsigned long long>(tally.definite),
        static_cast<unsigned long long>(tally.racing), static_cast<unsigned long long>(refused.calls()),
        static_cast<unsigned long long>(refused[IgnoredReason::NcclOrphanChannel]));
    EXPECT_GT(tally.launches, 100u);
    EXPECT_GT(tally.staleStops, 0u);
    EXPECT_GT(tally.doubleStops, 0u);
    EXPECT_GT(tally.destroyed, 0u);
    EXPECT_EQ(rows, tally.operations) << "one row per operation, whatever happened to it";
    EXPECT_GE(refused.calls(), tally.definite);
    EXPECT_LE(refused.calls(), tally.definite + tally.racing);
    EXPECT_LE(refused[IgnoredReason::NcclOrphanChannel], tally.staleStops);
    EXPECT_EQ(nccl::PluginComms::process().liveCount(), 0u);
}

}  // namespace
}  // namespace osc::agent
