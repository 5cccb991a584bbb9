// Thread names on the CPU lanes (issue 30): Nsight Systems' ThreadNames
// table, our captures' copy of it and PyTorch's "thread_name" metadata fill
// Process::threadNames; the lanes read "name · tid N: counts", or
// "CPU N: counts" for a thread without a name.
#include "analyzer/capture/capture_writer.h"
#include "analyzer/load/load_capture.h"
#include "gui/model/host_lanes.h"
#include "tests/analyzer/nsys_shaped.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace osc;
using namespace osc::gui;
using osc::testsupport::TempDir;

namespace {

constexpr int64_t kPid = 4000;
constexpr uint64_t kGpid = uint64_t{kPid} << 24;
// The writer puts a process's own runtime calls on thread 1.
constexpr uint64_t kMain = kGpid | 1, kWorker = kGpid | 2, kUnnamed = kGpid | 3;

// One process, one GPU, one kernel launched by one cudaLaunchKernel on
// thread 1 and a cudaMemcpyAsync after it: two calls on thread 1.
Capture oneProcess() {
    Capture c;
    Process p;
    p.host = "node";
    p.pid = kPid;
    p.rank = 0;
    Device& d = p.deviceById(0);
    KernelTable& k = d.kernels;
    k.start = {1000};
    k.end = {2000};
    k.stream = {7};
    k.correlation = {1};
    k.name = k.shortName = {c.strings.intern("gemm_kernel")};
    for (auto* v : {&k.gridX, &k.gridY, &k.gridZ, &k.blockX, &k.blockY, &k.blockZ, &k.registersPerThread,
                    &k.staticSharedMemory, &k.dynamicSharedMemory, &k.graphId})
        v->push_back(1);
    k.graphNodeId = {0};
    ApiCallTable& a = p.apiCalls;
    a.start = {100, 400};
    a.end = {300, 500};
    a.globalTid = {kMain, kMain};
    a.correlation = {1, 2};
    a.name = {c.strings.intern("cudaLaunchKernel"), c.strings.intern("cudaMemcpyAsync")};
    a.returnValue = {0, 0};
    a.kind = {ApiKind::Runtime, ApiKind::Runtime};
    c.processes.push_back(std::move(p));
    return c;
}

std::vector<std::string> labels(const Process& p) {
    std::vector<std::string> out;
    for (const HostThreadLane& lane : buildHostLanes(p)) out.push_back(lane.label);
    return out;
}

}  // namespace

TEST(ThreadNames, NsightThreadNamesNameTheModelsThreadsAndTheLanes) {
    TempDir dir;
    const std::string path = dir / "nsys.sqlite";
    {
        const Capture c = oneProcess();
        test::NsysShapedWriter w(path);
        w.write(c, {0}, false, 0);
        const int64_t memcpy = w.string("cudaMemcpyAsync");
        w.runtimeCall(kWorker, 600, 700, 3, memcpy);
        w.runtimeCall(kUnnamed, 800, 900, 4, memcpy);
        // Thread 1: the OS name, then nvtxNameOsThread's at a higher
        // priority, then a higher one still whose string is missing.
        w.threadName(kMain, w.string("python3"), 0);
        w.threadName(kMain, w.string("pt_main_thread"), 10);
        w.threadName(kMain, 999, 20);
        // Thread 2: renamed at the same priority; the later row wins.
        w.threadName(kWorker, w.string("worker-old"), 0);
        w.threadName(kWorker, w.string("pt_autograd_0"), 0);
        // Thread 3: only a name that is not in StringIds.
        w.threadName(kUnnamed, 998, 0);
        // A thread of a process with no activity in the file: no process for it.
        w.threadName((uint64_t{5000} << 24) | 1, w.string("launcher"), 0);
    }
    const Capture c = loadCapture(path);
    ASSERT_EQ(c.processes.size(), 1u);
    const Process& p = c.processes[0];
    const std::map<uint64_t, std::string> expected{{kMain, "pt_main_thread"}, {kWorker, "pt_autograd_0"}};
    EXPECT_EQ(p.threadNames, expected);
    // The busiest thread first (2 calls), then threads 2 and 3 (1 call each).
    EXPECT_EQ(labels(p), (std::vector<std::string>{"pt_main_thread · tid 1: 2 calls", "pt_autograd_0 · tid 2: 1 call",
                                                   "CPU 3: 1 call"}));
}

TEST(ThreadNames, WithoutTheTableLanesKeepTheirThreadIds) {
    TempDir dir;
    const std::string path = dir / "nsys.sqlite";
    {
        const Capture c = oneProcess();
        test::NsysShapedWriter w(path);
        w.write(c, {0}, false, 0);
    }
    const Capture c = loadCapture(path);
    ASSERT_EQ(c.processes.size(), 1u);
    EXPECT_TRUE(c.processes[0].threadNames.empty());
    EXPECT_EQ(labels(c.processes[0]), (std::vector<std::string>{"CPU 1: 2 calls"}));
}

TEST(ThreadNames, OurCapturesKeepThem) {
    TempDir dir;
    const std::string path = dir / "ours.sqlite";
    Capture original = oneProcess();
    original.processes[0].threadNames[kMain] = "dataloader";
    writeProcess(original, original.processes[0], path);
    const Capture c = loadCapture(path);
    ASSERT_EQ(c.processes.size(), 1u);
    EXPECT_EQ(c.processes[0].threadNames, original.processes[0].threadNames);
    EXPECT_EQ(labels(c.processes[0]), (std::vector<std::string>{"dataloader · tid 1: 2 calls"}));
}

TEST(ThreadNames, PyTorchThreadNameMetadata) {
    TempDir dir;
    const std::string path = dir / "trace.json";
    // Two host threads with operators; Kineto names both ("thread N (name)":
    // the name is what is in the brackets), a third without operators, and a
    // GPU stream (pid 0 = device 0, tid 7 = stream 7), which names no host
    // lane. The main thread is named twice: the later name wins.
    std::ofstream(path) << R"json({"traceEvents": [
{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 4312, "tid": 4312, "ts": 1, "dur": 5},
{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 4312, "tid": 4312, "ts": 7, "dur": 2},
{"ph": "X", "cat": "cpu_op", "name": "MulBackward0", "pid": 4312, "tid": 4400, "ts": 3, "dur": 1},
{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 2, "dur": 2, "args": {"device": 0, "stream": 7}},
{"ph": "M", "name": "thread_name", "pid": 4312, "tid": 4312, "args": {"name": "MainThread"}},
{"ph": "M", "name": "thread_name", "pid": 4312, "tid": 4312, "args": {"name": "thread 4312 (python)"}},
{"ph": "M", "name": "thread_name", "pid": 4312, "tid": 4400, "args": {"name": "thread 4400 (pt_autograd_0)"}},
{"ph": "M", "name": "thread_name", "pid": 4312, "tid": 4500, "args": {"name": "thread pool (x)"}},
{"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7"}},
{"ph": "M", "name": "process_name", "pid": 4312, "args": {"name": "python3"}}
]})json";
    const Capture c = loadCapture(path);
    ASSERT_EQ(c.processes.size(), 1u);
    const Process& p = c.processes[0];
    const uint64_t main = (uint64_t{4312} << 24) | 4312, autograd = (uint64_t{4312} << 24) | 4400;
    EXPECT_EQ(p.threadNames.at(main), "python");
    EXPECT_EQ(p.threadNames.at(autograd), "pt_autograd_0");
    EXPECT_EQ(p.threadNames.at((uint64_t{4312} << 24) | 4500), "thread pool (x)");  // not Kineto's pattern: whole
    EXPECT_EQ(labels(p), (std::vector<std::string>{"python · tid 4312: 2 ops", "pt_autograd_0 · tid 4400: 1 op"}));
}

TEST(ThreadNames, ANameWithControlBytesIsShownEscaped) {
    Capture c = oneProcess();
    c.processes[0].threadNames[kMain] = "evil\x1b[2Jname";
    EXPECT_EQ(hostThreadTitle(c.processes[0], kMain), "evil\\x1b[2Jname · tid 1");
    EXPECT_EQ(hostThreadTitle(c.processes[0], kWorker), "CPU 2");
}
