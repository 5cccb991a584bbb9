// The look-back ring's records name their rows in the step assembler's
// queues instead of copying them (held_rows.h, recorded_step.h): the queue
// against a brute-force model of it, and every record the ring keeps, read
// back at any later step, against the copy taken when its step closed (what
// the ring kept before). Also the assembler's sort of a step's kernels by
// runs, against a plain sort.
#include "agent/live/live_pipeline.h"
#include "agent/live/step_assembler.h"
#include "agent/live/step_ring.h"
#include "analyzer/load/load_capture.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/live_feed.h"

#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <future>
#include <random>
#include <sstream>

namespace osc::agent::live {
namespace {

TEST(LiveRing, TheRowQueueMatchesABruteForceQueueWithRetainedRows) {
    std::mt19937 rng(41);
    for (int round = 0; round < 20; ++round) {
        RowQueue<Held<SyncRow>> q;
        // The model: every row ever pushed, by sequence number; what is held
        // is [head, end), what may be read is [first, end).
        std::vector<int64_t> pushed;
        uint64_t first = 0, head = 0;
        bool retaining = round % 2 == 1;
        q.setRetaining(retaining);
        for (int op = 0; op < 3000; ++op) {
            const int what = static_cast<int>(rng() % 10);
            if (what < 5) {
                Held<SyncRow> h;
                h.row.start = static_cast<int64_t>(rng());
                q.push_back(h);
                pushed.push_back(h.row.start);
            } else if (what < 8) {
                if (head < pushed.size()) {
                    q.pop_front();
                    ++head;
                    if (!retaining) first = head;
                }
            } else if (what == 8) {
                const uint64_t to = pushed.empty() ? 0 : rng() % (pushed.size() + 1);
                q.releaseBefore(to);
                first = std::max(first, std::min<uint64_t>(to, head));
            } else if (rng() % 8 == 0) {
                retaining = !retaining;
                q.setRetaining(retaining);
                if (!retaining) first = head;
            }
            ASSERT_EQ(q.size(), pushed.size() - head);
            ASSERT_EQ(q.empty(), head == pushed.size());
            ASSERT_EQ(q.retained(), head - first);
            ASSERT_EQ(q.endSeq(), pushed.size());
            if (!q.empty()) {
                ASSERT_EQ(q.front().row.start, pushed[head]);
            }
        }
        size_t i = 0;
        for (const auto& h : q) {
            ASSERT_EQ(q.seqAt(i), head + i);
            ASSERT_EQ(h.row.start, pushed[head + i]);
            ASSERT_EQ(q[i].row.start, pushed[head + i]);
            ++i;
        }
        ASSERT_EQ(i, q.size());
        for (uint64_t s = 0; s < pushed.size() + 3; ++s) {
            ASSERT_EQ(q.holds(s), s >= first && s < pushed.size()) << s;
            if (q.holds(s)) {
                ASSERT_EQ(q.bySeq(s).row.start, pushed[s]) << s;
            }
        }
    }
}

TEST(LiveRing, SortingByRunsGivesWhatASortGives) {
    std::mt19937 rng(8);
    std::vector<std::pair<TimeNs, uint32_t>> v, scratch;
    std::vector<size_t> runs;
    for (int round = 0; round < 400; ++round) {
        // A few ascending runs (kernels of streams interleaved), or many.
        const size_t n = rng() % 3000;
        const int streams = 1 + static_cast<int>(rng() % (round % 4 == 0 ? 200 : 6));
        v.clear();
        std::vector<TimeNs> next(static_cast<size_t>(streams), 0);
        for (uint32_t i = 0; i < n; ++i) {
            TimeNs& t = next[rng() % next.size()];
            t += static_cast<TimeNs>(rng() % 50);  // equal starts too: the index decides
            v.push_back({t, i});
        }
        auto expected = v;
        std::sort(expected.begin(), expected.end());
        sortRuns(v, scratch, runs);
        ASSERT_EQ(v, expected) << "round " << round;
    }
}

// Every row of a record as one line of text, with whether an earlier record holds it.
class RowsText final : public RowSink {
public:
    std::ostringstream out;
    void addKernel(const KernelRow& r) override {
        out << "k " << r.start << ' ' << r.end << ' ' << r.deviceId << ' ' << r.streamId << ' ' << r.correlationId
            << ' ' << r.demangledName << ' ' << r.shortName << ' ' << r.gridX << ' ' << r.blockX << '\n';
    }
    void addCopy(const CopyRow& r) override {
        out << "c " << r.start << ' ' << r.end << ' ' << r.deviceId << ' ' << r.correlationId << ' ' << r.bytes << '\n';
    }
    void addMemset(const MemsetRow& r) override {
        out << "m " << r.start << ' ' << r.end << ' ' << r.correlationId << '\n';
    }
    void addSync(const SyncRow& r) override { out << "s " << r.start << ' ' << r.end << '\n'; }
    void addApiCall(const ApiCallRow& r) override {
        out << "a " << r.start << ' ' << r.end << ' ' << r.correlationId << ' ' << r.name << ' ' << r.globalTid << '\n';
    }
    void addRange(const RangeRow& r) override {
        out << "r " << r.start << ' ' << r.end << ' ' << r.text << ' ' << r.domain << '\n';
    }
    void addCollective(const CollectiveRow& r) override {
        out << "n " << r.commHash << ' ' << r.seqNumber << ' ' << r.func << ' ' << r.enqueue << ' ' << r.gpuStart << ' '
            << r.gpuEnd << '\n';
    }
    void addCudaEvent(const CudaEventRow& r) override { out << "e " << r.correlationId << ' ' << r.eventId << '\n'; }
    void addGpu(const GpuInfo&) override {}
    void addStreamName(uint64_t, uint32_t, uint32_t, std::string_view) override {}
    void addThreadName(uint64_t, std::string_view) override {}
};

std::string textOf(const RecordedStep& r) {
    RowsText all, after;
    r.writeTo(all, false);
    r.writeTo(after, true);
    std::ostringstream o;
    o << r.name << ' ' << r.number << ' ' << r.rangeStart << ' ' << r.rangeEnd << ' ' << r.slotEnd << ' ' << r.complete
      << '\n'
      << all.out.str() << "--\n"
      << after.out.str();
    return o.str();
}

PacedTrainingOptions ringJob() {
    PacedTrainingOptions o;
    o.stepNs = 20'000'000;
    o.devices = 2;
    o.deviceSkewNs = 1'000'000;
    o.collectiveBytes = 1 << 20;
    o.computeKernels = 6;
    o.commKernels = 2;
    o.gpuLagNs = 7'000'000;
    return o;
}

TEST(LiveRing, RecordsReadBackLaterEqualTheCopiesTakenWhenTheirStepsClosed) {
    constexpr size_t kSteps = 4;
    for (const uint32_t seed : {3u, 17u}) {
        // The same rows, in the same order, into two assemblers (one play
        // feeds both): one copies each closing step's rows (the brute
        // force), one names them.
        test::LiveFeed feed;
        feed.add(ringJob(), 200, 40, 30'000'000, seed);
        const std::regex pattern(AnalysisSettings{}.stepPattern);
        StepAssembler byCopy(pattern), byName(pattern);
        byName.setRetaining(true);
        std::deque<std::string> expected;
        StepRing ring(kSteps, 1'000'000);
        std::mt19937 rng(seed);
        int checked = 0;
        RecordedStep scratch;
        const auto copyHandler = [&](const ClosedStep& s) {
            s.record(scratch);
            expected.push_back(textOf(scratch));
            if (expected.size() > kSteps) expected.pop_front();
        };
        const auto nameHandler = [&](const ClosedStep& s) {
            s.recordRows(ring.next());
            ring.keep();
            // Now and then the oldest record takes its rows copied (LivePipeline's row bound).
            if (rng() % 5 == 0)
                ring.ownOldest([&](const StepRows& in, RecordedStep& out) { byName.materialize(in, out); });
            byName.releaseBefore(ring.lowest(byName.endSeqs()));
        };
        struct Both final : RowSink {
            RowSink &a, &b;
            Both(RowSink& x, RowSink& y) : a(x), b(y) {}
            void addKernel(const KernelRow& r) override { a.addKernel(r), b.addKernel(r); }
            void addCopy(const CopyRow& r) override { a.addCopy(r), b.addCopy(r); }
            void addMemset(const MemsetRow& r) override { a.addMemset(r), b.addMemset(r); }
            void addSync(const SyncRow& r) override { a.addSync(r), b.addSync(r); }
            void addApiCall(const ApiCallRow& r) override { a.addApiCall(r), b.addApiCall(r); }
            void addRange(const RangeRow& r) override { a.addRange(r), b.addRange(r); }
            void addCollective(const CollectiveRow& r) override { a.addCollective(r), b.addCollective(r); }
            void addCudaEvent(const CudaEventRow& r) override { a.addCudaEvent(r), b.addCudaEvent(r); }
            void addGpu(const GpuInfo& g) override { a.addGpu(g), b.addGpu(g); }
            void addStreamName(uint64_t p, uint32_t d, uint32_t s, std::string_view n) override {
                a.addStreamName(p, d, s, n), b.addStreamName(p, d, s, n);
            }
            void addThreadName(uint64_t t, std::string_view n) override {
                a.addThreadName(t, n), b.addThreadName(t, n);
            }
        } both(byCopy, byName);
        const auto compare = [&] {
            ASSERT_EQ(ring.steps().size(), expected.size());
            for (size_t i = 0; i < expected.size(); ++i) {
                byName.materialize(ring.steps()[i], scratch);
                ASSERT_EQ(textOf(scratch), expected[i]) << "record " << i << " of step " << ring.steps()[i].number;
                ++checked;
            }
        };
        feed.play(both, 10'000'000, [&](int64_t now) {
            byCopy.advance(now, copyHandler);
            byName.advance(now, nameHandler);
            compare();
        });
        byCopy.finish(copyHandler);
        byName.finish(nameHandler, [&] { compare(); });
        EXPECT_GT(checked, 100);
        EXPECT_LE(byName.retainedRows(), 0u);  // finish() dropped everything
    }
}

// overlapscope_agent_lookback_bytes in the telemetry's text.
double lookbackBytes(const Telemetry& telemetry) {
    std::istringstream text(telemetry.prometheusText(0));
    std::string line;
    while (std::getline(text, line))
        if (line.rfind("overlapscope_agent_lookback_bytes", 0) == 0) return std::stod(line.substr(line.rfind(' ') + 1));
    return -1;
}

// A job that stops closing steps (no step ranges for a long while) would
// make the queues keep every row since the ring's oldest record: past the
// row bound those records copy their rows, and the ring's steps, dumped
// after, are what they were before.
TEST(LiveRing, AJobThatStopsClosingStepsKeepsTheRingsStepsInBoundedMemory) {
    test::TempDir dir;
    LiveSettings settings;
    settings.lookbackSteps = 3;
    settings.lookbackMaxRows = 2000;
    settings.limits.cpuQuietNs = 0;  // the last step closes without a next one
    settings.limits.keepOutsideStepsNs = 1'000'000;
    // Two pipelines see the same 8 steps; `pipeline` then a long while
    // without steps, and its ring's steps must be what `same`'s are.
    Telemetry telemetry(TelemetryIdentity{}), sameTelemetry(TelemetryIdentity{});
    LivePipeline pipeline(settings, ProcessIdentity{}, &telemetry, {});
    LivePipeline same(settings, ProcessIdentity{}, &sameTelemetry, {});
    for (LivePipeline* p : {&pipeline, &same}) {
        p->streamStarted(DecodeContext{}, {});
        test::LiveFeed feed;
        feed.add(ringJob(), 300, 8, 5'000'000, 5);
        feed.play(*p, 10'000'000, [&](int64_t) { p->cycleEnded(0); });
        p->cycleEnded(0);
        ASSERT_EQ(p->sight().lookbackLast, 307);
        ASSERT_EQ(p->sight().lookbackFirst, 305);
    }
    const double bytesBefore = lookbackBytes(telemetry);
    // `dump` on the control thread: the writer thread (here, this one) gives
    // the ring's records their rows at the end of a cycle.
    const auto dump = [&](LivePipeline& p, const std::string& path) {
        StepCaptureProgress written;
        std::string error;
        auto done = std::async(std::launch::async, [&] { return p.dump(path, written, error); });
        while (done.wait_for(std::chrono::milliseconds(5)) != std::future_status::ready) p.cycleEnded(0);
        EXPECT_TRUE(done.get()) << error;
    };
    dump(same, dir / "before.sqlite");

    // Then 40,000 launches and their kernels, and no step.
    const TimeNs t0 = 10'000'000'000;
    double mostBytes = 0;
    for (uint32_t i = 0; i < 40'000; ++i) {
        ApiCallRow a;
        a.start = t0 + i * 10'000;
        a.end = a.start + 2'000;
        a.correlationId = 1'000'000 + i;
        a.globalTid = 7;
        a.name = "cudaLaunchKernel_v7000";
        pipeline.addApiCall(a);
        KernelRow k;
        k.start = a.start + 5'000;
        k.end = k.start + 4'000;
        k.correlationId = a.correlationId;
        k.demangledName = k.shortName = "gemm";
        pipeline.addKernel(k);
        if (i % 500 == 499) {
            pipeline.cycleEnded(0);
            mostBytes = std::max(mostBytes, lookbackBytes(telemetry));
        }
    }
    const LivePipeline::Sight after = pipeline.sight();
    EXPECT_EQ(after.lookbackFirst, 305);
    EXPECT_EQ(after.lookbackLast, 307);
    // At most the row bound again beyond what the records name (80,000 rows came).
    EXPECT_LT(mostBytes, bytesBefore + 2.0 * 2000 * sizeof(Held<KernelRow>) + 200'000) << bytesBefore;
    dump(pipeline, dir / "after.sqlite");
    const auto textOfFile = [](const std::string& path) {
        const Capture cap = loadCapture(path);
        std::ostringstream o;
        for (const Process& p : cap.processes) {
            for (size_t i = 0; i < p.apiCalls.start.size(); ++i)
                o << "a " << p.apiCalls.start[i] << ' ' << p.apiCalls.correlation[i] << '\n';
            for (const Device& d : p.devices)
                for (size_t i = 0; i < d.kernels.size(); ++i)
                    o << "k " << d.id << ' ' << d.kernels.start[i] << ' ' << d.kernels.end[i] << ' '
                      << d.kernels.correlation[i] << ' ' << cap.strings.at(d.kernels.name[i]) << '\n';
            for (size_t i = 0; i < p.ranges.start.size(); ++i)
                o << "r " << p.ranges.start[i] << ' ' << cap.strings.at(p.ranges.name[i]) << '\n';
        }
        return o.str();
    };
    const std::string wasText = textOfFile(dir / "before.sqlite");
    EXPECT_GT(wasText.size(), 1000u);
    EXPECT_EQ(textOfFile(dir / "after.sqlite"), wasText);
}

}  // namespace
}  // namespace osc::agent::live
