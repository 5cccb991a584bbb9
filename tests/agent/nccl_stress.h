// A busy 2D-parallel rank, played on a profiler plugin's table without a GPU
// (issue 47): several communicators (a 2x2 mesh has 4 per process), a main
// thread and an autograd-like thread launching on them, and one proxy thread
// per communicator reporting kernel channels, as NCCL 2.28 does. On top,
// what a busy machine does to NCCL's threads:
// - preemption at random points of every thread;
// - the proxy race of NCCL 2.28.9 (two loads of the GPU's counters with a
//   preemption between them): a KernelCh stop that names the slot's previous,
//   long-stopped channel, then the start of the channel it meant, never stopped;
// - operations stopped twice;
// - communicators destroyed mid-stream (finalize racing the proxy thread,
//   which goes on with the finalized context and handles), then created anew.
// Every call that is anomalous by construction is tallied here, so that the
// plugin's own count of refused calls can be checked against it.
//
// Header-only on fake_nccl.h: the unit tests play it on the plugin's tables
// (rows to a sink, also under ThreadSanitizer), bench_nccl_plugin_stress on
// an agent library's exported ncclProfiler_v5, loaded with dlopen as NCCL
// loads it.
#pragma once

#include "tests/agent/fake_nccl.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <utility>
#include <vector>

namespace osc::agent::test {

struct StressOptions {
    int communicators = 4;
    double seconds = 2;
    uint64_t seed = 1;
    double preemptProbability = 0.02;     // per preemption point: a yield or a sleep of up to 200 us
    double staleStopProbability = 0.01;   // per channel: the proxy race
    double doubleStopProbability = 0.01;  // per operation
    int destroyEveryMs = 250;             // a communicator destroyed and created again (0: never)
};

struct StressTally {
    uint64_t launches = 0, operations = 0;  // operations that got a handle: one row each
    uint64_t channels = 0, staleStops = 0, doubleStops = 0, destroyed = 0;
    // Calls the plugin must refuse (`definite`), and calls racing a finalize
    // that it may or may not refuse, depending on who came first.
    uint64_t definite = 0, racing = 0;

    StressTally& operator+=(const StressTally& o) {
        for (auto [mine, theirs] : {std::pair{&launches, o.launches},
                                    {&operations, o.operations},
                                    {&channels, o.channels},
                                    {&staleStops, o.staleStops},
                                    {&doubleStops, o.doubleStops},
                                    {&destroyed, o.destroyed},
                                    {&definite, o.definite},
                                    {&racing, o.racing}})
            *mine += theirs;
        return *this;
    }
};

// A new communicator (NCCL's `init`) of `commHash`: what the test drives.
using MakeComm = std::function<std::unique_ptr<FakeNcclComm>(uint64_t commHash)>;

namespace detail {

class Preempter {
public:
    Preempter(uint64_t seed, double p) : rng_(seed), p_(p) {}
    void point() {
        if (p_ <= 0 || coin_(rng_) >= p_) return;
        if (coin_(rng_) < 0.5)
            std::this_thread::yield();
        else
            std::this_thread::sleep_for(std::chrono::microseconds(1 + rng_() % 200));
    }
    bool chance(double p) { return coin_(rng_) < p; }
    uint32_t next() { return static_cast<uint32_t>(rng_()); }

private:
    std::mt19937_64 rng_;
    std::uniform_real_distribution<double> coin_{0.0, 1.0};
    double p_;
};

// One communicator of the mesh: its current incarnation, and what its proxy
// thread still has to report.
struct Incarnation {
    std::unique_ptr<FakeNcclComm> comm;
    std::atomic<bool> finalizing{false}, finalized{false};
};

struct Work {
    std::shared_ptr<Incarnation> of;
    void* op = nullptr;
    int channels = 0;  // reported (may be fewer than announced)
};

// Operations a proxy thread may lag behind its launches: as NCCL's work
// queue, a launch waits for room (and memory stays bounded however long the
// job runs).
inline constexpr size_t kMaxQueued = 64;

struct Slot {
    uint64_t commHash = 0;
    std::mutex launchOrder;  // NCCL launches a communicator's kernels one at a time
    std::shared_ptr<Incarnation> current;
    std::mutex queueMutex;
    std::condition_variable queued, room;
    std::deque<Work> queue;
    bool done = false;
};

}  // namespace detail

// Plays the job for `options.seconds`, then destroys every communicator.
inline StressTally runNcclStress(const StressOptions& options, const MakeComm& make) {
    using detail::Incarnation;
    using detail::Preempter;
    using detail::Slot;
    using detail::Work;
    std::vector<std::unique_ptr<Slot>> slots;
    for (int i = 0; i < options.communicators; ++i) {
        auto s = std::make_unique<Slot>();
        s->commHash = 0xC0AA0000u + static_cast<uint64_t>(i);
        s->current = std::make_shared<Incarnation>();
        s->current->comm = make(s->commHash);
        slots.push_back(std::move(s));
    }
    std::mutex tallyMutex;
    StressTally tally;
    const auto add = [&](const StressTally& t) {
        std::lock_guard lock(tallyMutex);
        tally += t;
    };
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                            std::chrono::duration<double>(options.seconds));
    std::atomic<bool> stopping{false};

    // A call on `inc` that is anomalous only if its finalize came first.
    const auto racingCall = [](const Incarnation& inc, StressTally& t, const std::function<void()>& call) {
        const bool after = inc.finalized.load();
        call();
        if (after)
            ++t.definite;
        else if (inc.finalizing.load())
            ++t.racing;
    };

    std::vector<std::thread> proxies;
    for (int i = 0; i < options.communicators; ++i)
        proxies.emplace_back([&, i] {
            Slot& slot = *slots[static_cast<size_t>(i)];
            Preempter pre(options.seed * 7919 + static_cast<uint64_t>(i), options.preemptProbability);
            StressTally t;
            void* lastChannel = nullptr;  // the slot NCCL reuses without clearing it
            uint64_t timer = 1'000'000'000ull * static_cast<uint64_t>(i + 1);
            for (;;) {
                Work w;
                {
                    std::unique_lock lock(slot.queueMutex);
                    slot.queued.wait(lock, [&] { return !slot.queue.empty() || slot.done; });
                    if (slot.queue.empty()) break;
                    w = std::move(slot.queue.front());
                    slot.queue.pop_front();
                }
                slot.room.notify_all();
                FakeNcclComm& comm = *w.of->comm;
                for (int ch = 0; ch < w.channels; ++ch, timer += 100) {
                    pre.point();
                    if (lastChannel && pre.chance(options.staleStopProbability)) {
                        // Kernel seen finished before seen started: the stop goes
                        // to the old handle (record + stop), the start follows.
                        comm.channelStop(lastChannel, timer + 50);
                        t.definite += 2;
                        ++t.staleStops;
                        pre.point();
                        racingCall(*w.of, t, [&] { comm.channelStart(w.op, ch, timer); });
                        continue;  // that channel is never stopped
                    }
                    void* h = nullptr;
                    racingCall(*w.of, t, [&] { h = comm.channelStart(w.op, ch, timer); });
                    if (!h) continue;  // NCCL asks nothing more of an event without a handle
                    ++t.channels;
                    pre.point();
                    // Two calls (record, stop), either of which may come after the finalize.
                    const bool after = w.of->finalized.load();
                    comm.channelStop(h, timer + 40);
                    if (after)
                        t.definite += 2;
                    else if (w.of->finalizing.load())
                        t.racing += 2;
                    lastChannel = h;
                }
            }
            add(t);
        });

    // The main thread runs forward (communicators 0, 1, ...), the autograd
    // thread backward, as a 2D mesh's forward and backward passes do.
    const auto launcher = [&](int thread) {
        Preempter pre(options.seed * 104729 + static_cast<uint64_t>(thread), options.preemptProbability);
        StressTally t;
        for (uint64_t n = 0; !stopping.load(); ++n) {
            const int k = static_cast<int>(n % static_cast<uint64_t>(options.communicators));
            Slot& slot = *slots[static_cast<size_t>(thread == 0 ? k : options.communicators - 1 - k)];
            std::lock_guard order(slot.launchOrder);
            std::shared_ptr<Incarnation> inc = slot.current;
            FakeNcclComm& comm = *inc->comm;
            void* group = comm.launch();
            ++t.launches;
            std::vector<Work> work;
            const int announced = 1 + static_cast<int>(pre.next() % 3);
            // NCCL 2.28 may report fewer channels than it announced.
            const int reported = pre.chance(0.2) ? announced - 1 : announced;
            void* op = pre.next() % 2 ? comm.coll(group, "AllReduce", n, 256, "ncclBfloat16", announced)
                                      : comm.send(group, 1, 256, "ncclBfloat16", announced);
            if (op) work.push_back({inc, op, reported});
            if (pre.next() % 3 == 0) {
                void* recv = comm.recv(group, 1, 128, "ncclFloat32", 1);
                if (recv) work.push_back({inc, recv, 1});
            }
            {
                // Handed to the proxy before NCCL stops the operations.
                std::unique_lock lock(slot.queueMutex);
                slot.room.wait(lock, [&] { return slot.queue.size() < detail::kMaxQueued; });
                for (const Work& w : work) slot.queue.push_back(w);
            }
            slot.queued.notify_one();
            pre.point();
            for (const Work& w : work) {
                comm.stop(w.op);
                ++t.operations;
                if (pre.chance(options.doubleStopProbability)) {
                    comm.stop(w.op);  // stopped twice: refused whether or not its row is out
                    ++t.definite;
                    ++t.doubleStops;
                }
                pre.point();
            }
            comm.stop(group);
        }
        add(t);
    };
    std::thread autograd(launcher, 1);
    std::thread mainThread(launcher, 0);

    // Communicators destroyed mid-stream: the proxy may still be reporting
    // the old one's channels while the new one launches.
    Preempter destroyer(options.seed * 31337, 0);
    StressTally destroyTally;
    while (std::chrono::steady_clock::now() < end) {
        const auto nap = options.destroyEveryMs > 0 ? std::chrono::milliseconds(options.destroyEveryMs)
                                                    : std::chrono::milliseconds(50);
        std::this_thread::sleep_until(std::min(end, std::chrono::steady_clock::now() + nap));
        if (options.destroyEveryMs <= 0 || std::chrono::steady_clock::now() >= end) continue;
        Slot& slot = *slots[destroyer.next() % slots.size()];
        std::lock_guard order(slot.launchOrder);
        std::shared_ptr<Incarnation> old = slot.current;
        old->finalizing = true;
        old->comm->finalizeKeepingContext();
        old->finalized = true;
        auto fresh = std::make_shared<Incarnation>();
        fresh->comm = make(slot.commHash);
        slot.current = std::move(fresh);
        ++destroyTally.destroyed;
    }
    add(destroyTally);
    stopping = true;
    mainThread.join();
    autograd.join();
    for (auto& s : slots) {
        {
            std::lock_guard lock(s->queueMutex);
            s->done = true;
        }
        s->queued.notify_all();
    }
    for (auto& p : proxies) p.join();
    for (auto& s : slots) s->current->comm->finalize();
    return tally;
}

}  // namespace osc::agent::test
