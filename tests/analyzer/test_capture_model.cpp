#include "analyzer/capture/model.h"

#include <gtest/gtest.h>

namespace osc {
namespace {

TEST(StringTable, InternsOnceAndFindsById) {
    StringTable t;
    const auto a = t.intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    const auto b = t.intern("gemm");
    EXPECT_NE(a, b);
    EXPECT_EQ(t.intern("gemm"), b);
    EXPECT_EQ(t.at(a), "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    EXPECT_EQ(t.find("absent"), kNoId);
    EXPECT_EQ(t.at(kNoId), "");
    StringTable copy = t;  // the copy's index must point at its own strings
    t = StringTable{};
    EXPECT_EQ(copy.find("gemm"), b);
}

TEST(KernelTable, SortByStartPermutesEveryColumn) {
    KernelTable k;
    for (TimeNs s : {30, 10, 20}) {
        k.start.push_back(s);
        k.end.push_back(s + 5);
        k.stream.push_back(static_cast<uint32_t>(s));
        k.correlation.push_back(static_cast<uint32_t>(s * 2));
        k.name.push_back(0);
        k.shortName.push_back(0);
        k.gridX.push_back(static_cast<uint32_t>(s));
        k.gridY.push_back(1);
        k.gridZ.push_back(1);
        k.blockX.push_back(1);
        k.blockY.push_back(1);
        k.blockZ.push_back(1);
        k.registersPerThread.push_back(0);
        k.staticSharedMemory.push_back(0);
        k.dynamicSharedMemory.push_back(0);
        k.graphId.push_back(0);
        k.graphNodeId.push_back(0);
    }
    k.sortByStart();
    EXPECT_EQ(k.start, (std::vector<TimeNs>{10, 20, 30}));
    EXPECT_EQ(k.end, (std::vector<TimeNs>{15, 25, 35}));
    EXPECT_EQ(k.correlation, (std::vector<uint32_t>{20, 40, 60}));
    EXPECT_EQ(k.gridX, (std::vector<uint32_t>{10, 20, 30}));
}

TEST(Capture, AlignsProcessesOnEarliestSessionStart) {
    Capture c;
    for (int64_t session : {1'000'500, 1'000'000}) {
        Process p;
        p.sessionStartUtcNs = session;
        auto& d = p.deviceById(0);
        d.kernels.start.push_back(100);
        d.kernels.end.push_back(200);
        p.ranges.start.push_back(50);
        p.ranges.end.push_back(250);
        c.processes.push_back(std::move(p));
    }
    c.alignProcesses();
    EXPECT_EQ(c.originUtcNs, 1'000'000);
    EXPECT_EQ(c.processes[0].devices[0].kernels.start[0], 600);
    EXPECT_EQ(c.processes[0].ranges.end[0], 750);
    EXPECT_EQ(c.processes[1].devices[0].kernels.start[0], 100);
    c.alignProcesses();  // idempotent
    EXPECT_EQ(c.processes[0].devices[0].kernels.start[0], 600);
}

TEST(Process, DeviceByIdKeepsDevicesOrdered) {
    Process p;
    p.deviceById(3);
    p.deviceById(1);
    p.deviceById(3);
    ASSERT_EQ(p.devices.size(), 2u);
    EXPECT_EQ(p.devices[0].id, 1u);
    EXPECT_EQ(p.devices[1].id, 3u);
    EXPECT_EQ(p.findDevice(2), nullptr);
}

}  // namespace
}  // namespace osc
