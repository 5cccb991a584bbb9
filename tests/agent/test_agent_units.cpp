// Unit tests of the agent's plain parts: control protocol, settings, file
// naming, buffer pool, kernel names, NCCL collective tracking.
#include "agent/core/agent_settings.h"
#include "agent/core/buffer_pool.h"
#include "agent/core/kernel_names.h"
#include "agent/core/process_identity.h"
#include "agent/nccl_plugin/collective_tracker.h"
#include "control/control_protocol.h"
#include "tests/agent/agent_test_util.h"

#include <gtest/gtest.h>
#include <algorithm>

#include <sys/stat.h>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace osc::agent {
namespace {

// The control protocol and the settings' ranges come from control/.
using namespace osc::control;

TEST(ControlProtocol, RequestRoundTrip) {
    ControlRequest r;
    r.command = ControlCommand::Start;
    r.durationS = 2.5;
    r.outputDir = "/tmp/x y";
    const std::string line = encodeRequest(r);
    ASSERT_EQ(line.back(), '\n');
    const ControlRequest back = parseRequest(line.substr(0, line.size() - 1));
    EXPECT_EQ(back.command, ControlCommand::Start);
    ASSERT_TRUE(back.durationS);
    EXPECT_DOUBLE_EQ(*back.durationS, 2.5);
    EXPECT_EQ(back.outputDir.value_or(""), "/tmp/x y");
    EXPECT_EQ(parseRequest(R"({"cmd":"stop"})").command, ControlCommand::Stop);
    EXPECT_FALSE(parseRequest(R"({"cmd":"start","duration_s":0})").durationS);  // 0 = no limit
}

TEST(ControlProtocol, MalformedRequestsAreRejected) {
    for (const char* bad :
         {"", "not json", "[1,2]", R"({"cmd":5})", R"({"cmd":"reboot"})", R"({"cmd":"start","duration_s":"soon"})",
          R"({"cmd":"start","duration_s":-1})", R"({"cmd":"start","output_dir":""})", R"({"nocmd":1})"}) {
        EXPECT_THROW(parseRequest(bad), std::invalid_argument) << bad;
    }
    EXPECT_THROW(parseRequest(std::string(kMaxMessageBytes + 1, ' ')), std::invalid_argument);
    // Past about 9.2e9 s a duration overflows the clock: refused well before.
    EXPECT_THROW(parseRequest(R"({"cmd":"start","duration_s":1e10})"), std::invalid_argument);
    EXPECT_THROW(parseRequest(R"({"cmd":"start","duration_s":1000001})"), std::invalid_argument);
    EXPECT_DOUBLE_EQ(parseRequest(R"({"cmd":"start","duration_s":1000000})").durationS.value_or(0), 1e6);
}

TEST(ControlProtocol, ReplyRoundTrip) {
    ControlReply r;
    r.ok = false;
    r.error = "nope";
    r.status.pid = 4242;
    r.status.rank = 3;
    r.status.state = "capturing";
    r.status.output = "/o/h-4242-rank3.sqlite";
    r.status.captures = 2;
    r.status.dropped = 17;
    const ControlReply back = parseReply(encodeReply(r));
    EXPECT_FALSE(back.ok);
    EXPECT_EQ(back.error, "nope");
    EXPECT_EQ(back.status.pid, 4242);
    EXPECT_EQ(back.status.rank, 3);
    EXPECT_EQ(back.status.state, "capturing");
    EXPECT_EQ(back.status.output, "/o/h-4242-rank3.sqlite");
    EXPECT_EQ(back.status.captures, 2u);
    EXPECT_EQ(back.status.dropped, 17u);
    EXPECT_THROW(parseReply("{"), std::invalid_argument);
}

TEST(ControlProtocol, SocketNames) {
    EXPECT_EQ(socketPathFor("/d", 77), "/d/agent-77.sock");
    EXPECT_EQ(pidFromSocketName("agent-77.sock"), 77);
    EXPECT_EQ(pidFromSocketName("agent-.sock"), -1);
    EXPECT_EQ(pidFromSocketName("agent-7x.sock"), -1);
    EXPECT_EQ(pidFromSocketName("other-7.sock"), -1);
    EXPECT_EQ(pidFromSocketName("agent-7.sockx"), -1);
}

TEST(SocketDirectory, TrustAndFallbacks) {
    test::TempDir dir;
    const uid_t me = ::geteuid();
    EXPECT_EQ(untrustedDirectoryReason(dir / "none", me).value_or(""), "does not exist");
    ASSERT_EQ(::mkdir((dir / "mine").c_str(), 0700), 0);
    EXPECT_FALSE(untrustedDirectoryReason(dir / "mine", me));
    EXPECT_NE(untrustedDirectoryReason(dir / "mine", me + 1).value_or("").find("owned by uid"), std::string::npos);
    ::chmod((dir / "mine").c_str(), 0750);
    EXPECT_NE(untrustedDirectoryReason(dir / "mine", me).value_or("").find("mode 0750"), std::string::npos);
    ::chmod((dir / "mine").c_str(), 0700);
    ASSERT_EQ(::symlink((dir / "mine").c_str(), (dir / "link").c_str()), 0);
    EXPECT_EQ(untrustedDirectoryReason(dir / "link", me).value_or(""), "is a symbolic link");
    std::ofstream(dir / "file") << "x";
    EXPECT_EQ(untrustedDirectoryReason(dir / "file", me).value_or(""), "is not a directory");

    // Only "<dir>-" and six mkdtemp characters count as fallbacks of <dir>.
    EXPECT_EQ(fallbackDirectoryTemplate(dir / "s/"), dir / "s-XXXXXX");
    for (const char* name : {"s-Ab3xYz", "s-000000", "s-abc", "s-abcdefg", "s-ab.def", "sx-abcdef", "t-abcdef"})
        ASSERT_EQ(::mkdir((dir / name).c_str(), 0700), 0) << name;
    EXPECT_EQ(socketDirectoriesFor(dir / "s"),
              (std::vector<std::string>{dir / "s", dir / "s-000000", dir / "s-Ab3xYz"}));
}

TEST(AgentSettings, ReadsEnvironmentAndWarnsOnGarbage) {
    ::setenv("OVERLAPSCOPE_OUTPUT_DIR", "/out", 1);
    ::setenv("OVERLAPSCOPE_DELAY", "1.5", 1);
    ::setenv("OVERLAPSCOPE_DURATION", "abc", 1);
    ::setenv("OVERLAPSCOPE_DORMANT", "1", 1);
    ::setenv("OVERLAPSCOPE_BUFFER_MB", "2.5", 1);
    ::setenv("OVERLAPSCOPE_COMMIT_MS", "250", 1);
    std::string warnings;
    AgentSettings s = settingsFromEnvironment(warnings);
    EXPECT_EQ(s.stopGraceMs, 200);  // the default
    ::setenv("OVERLAPSCOPE_STOP_GRACE_MS", "0", 1);
    EXPECT_EQ(settingsFromEnvironment(warnings).stopGraceMs, 0);
    ::setenv("OVERLAPSCOPE_STOP_GRACE_MS", "750", 1);
    s = settingsFromEnvironment(warnings);
    EXPECT_EQ(s.stopGraceMs, 750);
    EXPECT_EQ(s.outputDir, "/out");
    EXPECT_DOUBLE_EQ(s.delayS, 1.5);
    EXPECT_DOUBLE_EQ(s.durationS, 0);
    EXPECT_TRUE(s.dormant);
    EXPECT_EQ(s.bufferBytes, 2621440u);
    EXPECT_EQ(s.commitIntervalMs, 250);
    EXPECT_NE(warnings.find("OVERLAPSCOPE_DURATION=abc"), std::string::npos);
    // Out of range: a warning each, and the defaults stay.
    ::setenv("OVERLAPSCOPE_DELAY", "1e10", 1);
    ::setenv("OVERLAPSCOPE_DURATION", "inf", 1);
    ::setenv("OVERLAPSCOPE_BUFFER_MB", "1e30", 1);
    ::setenv("OVERLAPSCOPE_COMMIT_MS", "5", 1);
    ::setenv("OVERLAPSCOPE_STOP_GRACE_MS", "60001", 1);
    warnings.clear();
    s = settingsFromEnvironment(warnings);
    EXPECT_DOUBLE_EQ(s.delayS, 0);
    EXPECT_DOUBLE_EQ(s.durationS, 0);
    EXPECT_EQ(s.bufferBytes, 64u << 20);
    EXPECT_EQ(s.commitIntervalMs, 1000);
    EXPECT_EQ(s.stopGraceMs, 200);
    for (const char* n : {"OVERLAPSCOPE_DELAY=1e10", "OVERLAPSCOPE_DURATION=inf", "OVERLAPSCOPE_BUFFER_MB=1e30",
                          "OVERLAPSCOPE_COMMIT_MS=5", "OVERLAPSCOPE_STOP_GRACE_MS=60001"})
        EXPECT_NE(warnings.find(n), std::string::npos) << n << " not reported: " << warnings;
    for (const char* n :
         {"OVERLAPSCOPE_OUTPUT_DIR", "OVERLAPSCOPE_DELAY", "OVERLAPSCOPE_DURATION", "OVERLAPSCOPE_DORMANT",
          "OVERLAPSCOPE_BUFFER_MB", "OVERLAPSCOPE_COMMIT_MS", "OVERLAPSCOPE_STOP_GRACE_MS"})
        ::unsetenv(n);
    EXPECT_EQ(activityBufferBytes(64u << 20), 4u << 20);   // CUPTI's recommended range
    EXPECT_EQ(activityBufferBytes(64u << 10), 32u << 10);  // small bounds: two buffers fit
}

// OVERLAPSCOPE_PARTIAL's analysis settings (`run --partial` sets them).
TEST(AgentSettings, PartialSettingsFromEnvironment) {
    ::setenv("OVERLAPSCOPE_PARTIAL", "1", 1);
    ::setenv("OVERLAPSCOPE_COMM_KERNEL", "userbuffers\nmy_allreduce", 1);
    ::setenv("OVERLAPSCOPE_STEP_PATTERN", "^it(\\d+)$", 1);
    ::setenv("OVERLAPSCOPE_MICROBATCH_PATTERN", "^(f|b)_(\\d+)$", 1);
    ::setenv("OVERLAPSCOPE_PIPELINE_STAGES", "6", 1);
    std::string warnings;
    AgentSettings s = settingsFromEnvironment(warnings);
    EXPECT_TRUE(s.partial) << warnings;
    EXPECT_EQ(warnings, "");
    EXPECT_EQ(s.analysis.commKernelPatterns, (std::vector<std::string>{"userbuffers", "my_allreduce"}));
    EXPECT_EQ(s.analysis.stepPattern, "^it(\\d+)$");
    EXPECT_EQ(s.analysis.microbatchPattern, "^(f|b)_(\\d+)$");
    EXPECT_EQ(s.analysis.pipelineStages, 6);
    // Stages that are not a whole number from 0 to 65536: the default and a note.
    for (const char* bad : {"2.5", "-1", "70000", "six"}) {
        ::setenv("OVERLAPSCOPE_PIPELINE_STAGES", bad, 1);
        warnings.clear();
        s = settingsFromEnvironment(warnings);
        EXPECT_TRUE(s.partial) << bad;
        EXPECT_EQ(s.analysis.pipelineStages, 0) << bad;
        EXPECT_NE(warnings.find(std::string("OVERLAPSCOPE_PIPELINE_STAGES=") + bad), std::string::npos) << warnings;
    }
    // A micro-batch pattern without its two groups would fail every partial: none, said once.
    ::setenv("OVERLAPSCOPE_MICROBATCH_PATTERN", "^fwd", 1);
    warnings.clear();
    s = settingsFromEnvironment(warnings);
    EXPECT_FALSE(s.partial);
    EXPECT_NE(warnings.find("OVERLAPSCOPE_MICROBATCH_PATTERN"), std::string::npos) << warnings;
    EXPECT_NE(warnings.find("two groups"), std::string::npos) << warnings;
    for (const char* n : {"OVERLAPSCOPE_PARTIAL", "OVERLAPSCOPE_COMM_KERNEL", "OVERLAPSCOPE_STEP_PATTERN",
                          "OVERLAPSCOPE_MICROBATCH_PATTERN", "OVERLAPSCOPE_PIPELINE_STAGES"})
        ::unsetenv(n);
}

TEST(ProcessIdentity, RankFromLauncherVariables) {
    ::unsetenv("RANK");
    ::setenv("OMPI_COMM_WORLD_RANK", "5", 1);
    ::setenv("SLURM_PROCID", "9", 1);
    EXPECT_EQ(currentProcessIdentity().rank, 5);  // OMPI before SLURM
    ::setenv("RANK", "2", 1);
    EXPECT_EQ(currentProcessIdentity().rank, 2);
    ::unsetenv("RANK");
    ::unsetenv("OMPI_COMM_WORLD_RANK");
    ::unsetenv("SLURM_PROCID");
    const ProcessIdentity me = currentProcessIdentity();
    EXPECT_EQ(me.rank, -1);
    EXPECT_EQ(me.pid, ::getpid());
    EXPECT_NE(me.commandLine.find("test_agent_units"), std::string::npos);
}

TEST(ProcessIdentity, FileNamesNeverReuseAFile) {
    test::TempDir dir;
    ProcessIdentity who;
    who.host = "node1";
    who.pid = 321;
    EXPECT_EQ(captureFileName(dir.path(), who, 1), dir / "node1-321.sqlite");
    who.rank = 4;
    const std::string first = captureFileName(dir.path(), who, 1);
    EXPECT_EQ(first, dir / "node1-321-rank4.sqlite");
    EXPECT_EQ(captureFileName(dir.path(), who, 2), dir / "node1-321-rank4-2.sqlite");
    std::ofstream(dir / "node1-321-rank4-2.sqlite") << "x";
    EXPECT_EQ(captureFileName(dir.path(), who, 2), dir / "node1-321-rank4-3.sqlite");
    std::ofstream(first) << "x";
    EXPECT_EQ(captureFileName(dir.path(), who, 1), dir / "node1-321-rank4-3.sqlite");
}

TEST(BufferPool, BoundIsHonouredAndRefusalsCounted) {
    BufferPool pool(3 * 4096, 4096);
    EXPECT_EQ(pool.capacityBuffers(), 3u);
    std::set<uint8_t*> taken;
    for (int i = 0; i < 3; ++i) {
        uint8_t* b = pool.acquire();
        ASSERT_NE(b, nullptr);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 8, 0u);
        taken.insert(b);
    }
    EXPECT_EQ(taken.size(), 3u);
    EXPECT_EQ(pool.acquire(), nullptr);
    EXPECT_EQ(pool.acquire(), nullptr);
    EXPECT_EQ(pool.refusedRequests(), 2u);
    uint8_t* b = *taken.begin();
    b[0] = 0xAB;
    pool.pushCompleted(b, 1);
    CompletedBuffer done;
    ASSERT_TRUE(pool.tryPopCompleted(done));
    EXPECT_EQ(done.data, b);
    EXPECT_EQ(done.validBytes, 1u);
    pool.release(b);
    uint8_t* again = pool.acquire();
    EXPECT_EQ(again, b);     // recycled...
    EXPECT_EQ(again[0], 0);  // ...and zeroed
    EXPECT_EQ(pool.buffersInUse(), 3u);
}

// CUPTI writes records from the buffer's start and may leave a record begun
// past validBytes; it is told buffers come zeroed, so those bytes must be
// zero when the buffer is lent again. A buffer handed back without being
// completed may hold bytes anywhere; a size beyond the buffer is cut to it.
TEST(BufferPool, EveryByteCuptiMayHaveWrittenIsZeroAgain) {
    constexpr size_t kBytes = 256 * 1024;
    const auto allZero = [&](const uint8_t* b) { return std::all_of(b, b + kBytes, [](uint8_t v) { return v == 0; }); };
    BufferPool pool(kBytes, kBytes);
    uint8_t* b = pool.acquire();
    ASSERT_NE(b, nullptr);
    const size_t valid = 100 * 1024;
    std::fill(b, b + valid + 208, 0xAB);  // the records, and a kernel record begun past them
    pool.pushCompleted(b, valid);
    CompletedBuffer done;
    ASSERT_TRUE(pool.tryPopCompleted(done));
    pool.release(done.data);
    ASSERT_EQ(pool.acquire(), b);
    EXPECT_TRUE(allZero(b));

    std::fill(b, b + kBytes, 0xCD);  // lent, written all over, handed back uncompleted
    pool.release(b);
    ASSERT_EQ(pool.acquire(), b);
    EXPECT_TRUE(allZero(b));

    std::fill(b, b + kBytes, 0xEF);
    pool.pushCompleted(b, SIZE_MAX);  // a size beyond the buffer: all of it
    ASSERT_TRUE(pool.tryPopCompleted(done));
    EXPECT_EQ(done.validBytes, kBytes);
    pool.release(done.data);
    ASSERT_EQ(pool.acquire(), b);
    EXPECT_TRUE(allZero(b));
}

TEST(BufferPool, PopWaitsUntilDeadline) {
    BufferPool pool(8192, 4096);
    CompletedBuffer out;
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_FALSE(pool.popCompleted(out, t0 + std::chrono::milliseconds(30)));
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(25));
}

TEST(KernelNames, DemangleAndShortName) {
    EXPECT_EQ(demangle("_Z3fooPfi"), "foo(float*, int)");
    EXPECT_EQ(demangle("ncclDevKernel_AllReduce_Sum_f32_RING_LL"), "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    EXPECT_EQ(demangle("_Zbroken"), "_Zbroken");
    EXPECT_EQ(shortKernelName("foo(float*, int)"), "foo");
    EXPECT_EQ(shortKernelName("void at::native::vectorized_elementwise_kernel<4, at::native::Fn<(int)1> >(int, float)"),
              "vectorized_elementwise_kernel");
    EXPECT_EQ(shortKernelName("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgs4K)"),
              "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    EXPECT_EQ(shortKernelName("plain_name"), "plain_name");
    KernelNameCache cache;
    const auto& a = cache.lookup("_ZN2ns6kernelEv");
    EXPECT_EQ(a.demangled, "ns::kernel()");
    EXPECT_EQ(a.shortName, "kernel");
    cache.lookup("_ZN2ns6kernelEv");
    EXPECT_EQ(cache.size(), 1u);
}

// CUPTI passes each kernel's name pointer again and again; the cache keys on
// it but must notice when the text behind a pointer has changed.
TEST(KernelNames, PointerHitsAreConfirmedByText) {
    KernelNameCache cache;
    char buffer[32] = "_Z3fooi";
    EXPECT_EQ(cache.lookup(static_cast<const char*>(buffer)).shortName, "foo");
    EXPECT_EQ(cache.lookup(static_cast<const char*>(buffer)).shortName, "foo");
    std::snprintf(buffer, sizeof buffer, "_Z3bari");  // same address, new kernel
    EXPECT_EQ(cache.lookup(static_cast<const char*>(buffer)).demangled, "bar(int)");
    std::snprintf(buffer, sizeof buffer, "_Z3fooi");
    EXPECT_EQ(cache.lookup(static_cast<const char*>(buffer)).demangled, "foo(int)");
    EXPECT_EQ(cache.size(), 2u);
}

// Each sink gets ids of its own: a decoder's cached ids must never leak into
// the next capture's file, whose string table starts afresh.
TEST(KernelNames, SinkIdsAreCachedPerSink) {
    struct IdSink final : RowSink {
        explicit IdSink(uint32_t base) : next(base) {}
        void addKernel(const KernelRow&) override {}
        void addCopy(const CopyRow&) override {}
        void addMemset(const MemsetRow&) override {}
        void addSync(const SyncRow&) override {}
        void addApiCall(const ApiCallRow&) override {}
        void addRange(const RangeRow&) override {}
        void addCollective(const CollectiveRow&) override {}
        uint32_t stringId(std::string_view text) override {
            asked.emplace_back(text);
            return next++;
        }
        uint32_t next;
        std::vector<std::string> asked;
    };
    KernelNameCache cache;
    const auto& names = cache.lookup("_Z3fooi");
    auto first = std::make_unique<IdSink>(100);
    KernelRow row;
    setKernelNames(row, names, *first);
    setKernelNames(row, names, *first);
    EXPECT_EQ(row.demangledNameId, 100u);
    EXPECT_EQ(row.shortNameId, 101u);
    EXPECT_EQ(first->asked, (std::vector<std::string>{"foo(int)", "foo"})) << "asked once per sink";
    first.reset();
    auto second = std::make_unique<IdSink>(7);  // may well reuse the first one's address
    setKernelNames(row, names, *second);
    EXPECT_EQ(row.demangledNameId, 7u);
    EXPECT_EQ(row.shortNameId, 8u);
    EXPECT_EQ(row.demangledName, "foo(int)");
    struct TextSink final : RowSink {  // keeps text: no ids
        void addKernel(const KernelRow&) override {}
        void addCopy(const CopyRow&) override {}
        void addMemset(const MemsetRow&) override {}
        void addSync(const SyncRow&) override {}
        void addApiCall(const ApiCallRow&) override {}
        void addRange(const RangeRow&) override {}
        void addCollective(const CollectiveRow&) override {}
    } text;
    setKernelNames(row, names, text);
    EXPECT_EQ(row.demangledNameId, kNoId);
    EXPECT_EQ(row.shortName, "foo");
}

TEST(CollectiveTracker, RowCompleteAfterEveryChannelStops) {
    std::vector<PendingCollective> out;
    CollectiveTracker t(0xABCDu, 8, 3, [&](PendingCollective&& c) { out.push_back(std::move(c)); });
    CollectiveTracker::CollInfo info;
    info.seqNumber = 41;
    info.func = "ReduceScatter";
    info.datatype = "ncclFloat32";
    info.algo = "RING";
    info.proto = "LL128";
    info.count = 256;
    info.root = -1;
    info.nChannels = 2;
    void* coll = t.startColl(info, 5000);
    EXPECT_TRUE(t.isOpenOperation(coll));
    t.stop(coll);  // enqueued: not complete yet
    void* ch0 = t.startKernelChannel(coll, 9000);
    void* ch1 = t.startKernelChannel(coll, 8000);
    t.kernelChannelStopped(ch0, 12000);
    t.kernelChannelStopped(ch1, 15000);
    t.stop(ch0);
    EXPECT_TRUE(out.empty());
    t.stop(ch1);
    ASSERT_EQ(out.size(), 1u);
    const CollectiveRow& r = out[0].row;
    EXPECT_EQ(r.commHash, 0xABCDu);
    EXPECT_EQ(r.rank, 3);
    EXPECT_EQ(r.nranks, 8);
    EXPECT_EQ(r.seqNumber, 41u);
    EXPECT_EQ(out[0].func, "ReduceScatter");
    EXPECT_EQ(out[0].datatype, "ncclFloat32");
    EXPECT_EQ(out[0].algo, "RING");
    EXPECT_EQ(out[0].proto, "LL128");
    EXPECT_EQ(r.count, 256u);
    EXPECT_EQ(r.bytes, 1024u);
    EXPECT_EQ(r.nChannels, 2);
    EXPECT_EQ(r.enqueue, 5000);
    EXPECT_EQ(r.gpuStart, 8000);  // earliest channel start
    EXPECT_EQ(r.gpuEnd, 15000);   // latest channel stop
}

TEST(CollectiveTracker, FinalizeFlushesOpenCollectives) {
    std::vector<PendingCollective> out;
    {
        CollectiveTracker t(1, 2, 0, [&](PendingCollective&& c) { out.push_back(std::move(c)); });
        CollectiveTracker::CollInfo info;
        info.func = "AllGather";
        info.datatype = "ncclInt8";
        info.count = 10;
        info.nChannels = 4;
        t.stop(t.startColl(info, 1));
        t.startColl(info, 2);  // never stopped
        EXPECT_TRUE(out.empty());
    }  // destructor = NCCL finalize
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].row.gpuStart, -1);
    EXPECT_EQ(out[0].row.bytes, 10u);
}

// A capture closing while collectives run (a hung job) writes them: copies
// with their GPU start and no GPU end, the tracker keeping them open.
TEST(CollectiveTracker, OpenRowsAreCopiesWithoutAGpuEnd) {
    std::vector<PendingCollective> out;
    CollectiveTracker t(7, 4, 2, [&](PendingCollective&& c) { out.push_back(std::move(c)); });
    CollectiveTracker::CollInfo info;
    info.seqNumber = 17;
    info.func = "AllReduce";
    info.datatype = "ncclFloat32";
    info.count = 8;
    info.nChannels = 1;
    void* done = t.startColl(info, 100);
    t.stop(done);
    t.stop(t.startKernelChannel(done, 150));  // ran to its end (no stop time reported)
    info.seqNumber = 18;
    void* hung = t.startColl(info, 200);
    t.stop(hung);
    t.startKernelChannel(hung, 250);  // started, never stops
    ASSERT_EQ(out.size(), 1u);
    const auto open = t.openRows();
    ASSERT_EQ(open.size(), 1u);
    EXPECT_EQ(open[0].row.seqNumber, 18u);
    EXPECT_EQ(open[0].row.enqueue, 200);
    EXPECT_EQ(open[0].row.gpuStart, 250);
    EXPECT_EQ(open[0].row.gpuEnd, -1);
    EXPECT_EQ(open[0].func, "AllReduce");
    EXPECT_EQ(t.openRows().size(), 1u);  // still open
}

TEST(CollectiveTracker, DatatypeSizes) {
    EXPECT_EQ(ncclDatatypeBytes("ncclBfloat16"), 2u);
    EXPECT_EQ(ncclDatatypeBytes("ncclFloat64"), 8u);
    EXPECT_EQ(ncclDatatypeBytes("ncclUint8"), 1u);
    EXPECT_EQ(ncclDatatypeBytes("ncclInt32"), 4u);
    EXPECT_EQ(ncclDatatypeBytes("mystery"), 0u);
    EXPECT_EQ(ncclDatatypeBytes(nullptr), 0u);
}

}  // namespace
}  // namespace osc::agent
