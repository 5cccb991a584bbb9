// SharedText and the communication operations that hold it (issue 46: a
// one-file report's memory). Copies must share their characters, or a
// device's 300,000 operations each carry their kernel name again.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/metrics/shared_text.h"
#include "analyzer/partial/device_codec.h"
#include "test_metrics_support.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

using osc::SharedText;
using osc::testing::TraceBuilder;

TEST(SharedText, BehavesAsTheStringItHolds) {
    const SharedText empty;
    EXPECT_TRUE(empty.empty());
    EXPECT_EQ(empty.size(), 0u);
    EXPECT_STREQ(empty.c_str(), "");
    EXPECT_EQ(empty, "");
    EXPECT_TRUE(SharedText("").empty());
    EXPECT_TRUE(SharedText(std::string()).empty());

    const std::string long_name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    const SharedText t(long_name);
    EXPECT_EQ(t.size(), long_name.size());
    EXPECT_EQ(t.str(), long_name);
    EXPECT_EQ(t, long_name);
    EXPECT_EQ(long_name, t);
    EXPECT_EQ(t, SharedText(long_name));
    EXPECT_NE(t, "ncclDevKernel");
    EXPECT_EQ(t.c_str()[t.size()], '\0');
    EXPECT_EQ(std::string_view(t).substr(0, 13), "ncclDevKernel");
    EXPECT_LT(SharedText("AllGather"), SharedText("AllReduce"));
    EXPECT_EQ("x" + SharedText("y") + "z", "xyz");
    // Embedded NULs are kept: the size is the text's, not strlen's.
    const std::string withNul("a\0b", 3);
    EXPECT_EQ(SharedText(withNul).size(), 3u);
    EXPECT_EQ(SharedText(withNul), withNul);
}

TEST(SharedText, CopiesShareAndOutliveTheOriginal) {
    SharedText copy;
    const char* chars = nullptr;
    {
        const SharedText original("AllReduce over the data-parallel group");
        chars = original.data();
        copy = original;
        EXPECT_EQ(copy.data(), chars);
        SharedText moved(std::move(copy));
        EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
        EXPECT_EQ(moved.data(), chars);
        copy = moved;
        copy = copy;  // self-assignment keeps the text
    }
    EXPECT_EQ(copy.data(), chars);
    EXPECT_EQ(copy, "AllReduce over the data-parallel group");
    copy = "other";
    EXPECT_EQ(copy, "other");
    copy.clear();
    EXPECT_TRUE(copy.empty());
}

// Many threads copying and dropping one text: the count must not be lost
// (ASan in CI's sanitized build would see a double free or a leak).
TEST(SharedText, CountsCopiesAcrossThreads) {
    const SharedText text("ReduceScatter");
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&text] {
            std::vector<SharedText> held;
            for (int i = 0; i < 20000; ++i) {
                held.push_back(text);
                if (held.size() > 64) held.clear();
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(text, "ReduceScatter");
}

TEST(SharedText, RecentTextsShareWhatRepeats) {
    osc::RecentTexts recent;
    const SharedText a = recent.recall("AllReduce");
    const SharedText b = recent.recall(std::string("AllReduce"));
    EXPECT_EQ(a.data(), b.data());
    EXPECT_TRUE(recent.recall("").empty());
    // Past 16 other texts the first is made again, equal but not shared.
    for (int i = 0; i < 16; ++i) recent.recall("t" + std::to_string(i));
    const SharedText c = recent.recall("AllReduce");
    EXPECT_EQ(c, a);
    EXPECT_NE(c.data(), a.data());
}

namespace {

// A device with `n` all-reduce and all-gather kernels between compute, the
// plugin's rows naming each one's algorithm and protocol.
osc::Capture commHeavy(int n) {
    TraceBuilder b;
    const std::string ar = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    const std::string ag = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    for (int i = 0; i < n; ++i) {
        const osc::TimeNs t = 1000 * static_cast<osc::TimeNs>(i);
        b.kernel(0, 0, "gemm_kernel_with_a_long_enough_name", t, t + 600, 7);
        const bool reduce = i % 3 != 0;
        b.kernel(0, 0, reduce ? ar : ag, t + 100, t + 900, 13);
        b.pluginRow(0, 0, 0xabc, static_cast<uint64_t>(i), reduce ? "AllReduce" : "AllGather", 4096, t, t + 100,
                    t + 900, i % 2 ? "RING" : "TREE", "LL");
    }
    return std::move(b.finalized());
}

}  // namespace

TEST(SharedText, OperationsOfOneKernelShareItsTexts) {
    const osc::Analysis a = osc::analyze(commHeavy(3000));
    ASSERT_EQ(a.devices.size(), 1u);
    const auto& ops = a.devices[0].collectives;
    ASSERT_EQ(ops.size(), 3000u);
    std::map<std::string, std::set<const char*>> storage;  // text -> distinct characters holding it
    for (const auto& op : ops) {
        EXPECT_EQ(op.collective,
                  op.name.view().find("AllReduce") != std::string_view::npos ? "AllReduce" : "AllGather");
        ASSERT_FALSE(op.algo.empty());
        ASSERT_EQ(op.proto, "LL");
        for (const SharedText* t : {&op.name, &op.collective, &op.datatype, &op.algo, &op.proto})
            if (!t->empty()) storage[t->str()].insert(t->data());
    }
    // Two kernel names, AllReduce and AllGather, f32 (the all-gather kernel
    // names no datatype), RING and TREE, LL.
    EXPECT_EQ(storage.size(), 8u);
    for (const auto& [text, places] : storage) EXPECT_EQ(places.size(), 1u) << text;
}

// Emptying the capture before the cross-rank half gives the same analysis.
TEST(SharedText, AnalysingAMovedCaptureEmptiesItAndAnswersTheSame) {
    osc::Capture kept = commHeavy(500);
    osc::Capture given = commHeavy(500);
    const osc::Analysis expected = osc::analyze(kept);
    const osc::Analysis got = osc::analyze(std::move(given));
    EXPECT_TRUE(given.processes.empty());  // NOLINT(bugprone-use-after-move): emptied by contract
    EXPECT_EQ(given.strings.size(), osc::Capture{}.strings.size());
    ASSERT_EQ(got.devices.size(), expected.devices.size());
    std::string a, b;
    osc::partial::encodeDevice(expected.devices[0], a);
    osc::partial::encodeDevice(got.devices[0], b);
    EXPECT_EQ(a, b);
    ASSERT_EQ(got.matched.size(), expected.matched.size());
    EXPECT_EQ(got.summary.comm_ns, expected.summary.comm_ns);
}

// Decoded operations share their texts too (a merge of 1,024 ranks holds
// every rank's).
TEST(SharedText, DecodedOperationsShareTheirTexts) {
    const osc::Analysis a = osc::analyze(commHeavy(200));
    std::string bytes;
    osc::partial::encodeDevice(a.devices[0], bytes);
    const osc::DeviceAnalysis back = osc::partial::decodeDevice(bytes.data(), bytes.size(), "test");
    ASSERT_EQ(back.collectives.size(), 200u);
    std::set<const char*> names;
    for (const auto& op : back.collectives) names.insert(op.name.data());
    EXPECT_EQ(names.size(), 2u);
    EXPECT_EQ(back.collectives[1].name, a.devices[0].collectives[1].name);
}
