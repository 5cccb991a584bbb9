// A capture loaded for the analysis only (LoadOptions::analysisOnly, what a
// report, check or diff reads) against the same files loaded whole: the
// columns the analysis does not read are empty, every other one is the
// same, the launch shapes come back the same through the shape table, and
// the analysis is the same to the byte. Also the compact members of a
// communication operation (PackedOptional, CompactList).
#include "analyzer/crossrank/analyze.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/metrics/compact_list.h"
#include "analyzer/metrics/packed_optional.h"
#include "analyzer/partial/device_codec.h"
#include "analyzer/partial/file_part.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

namespace osc {
namespace {

std::vector<std::vector<std::string>> pytorchJobs() {
    const std::filesystem::path examples = std::filesystem::path(OSC_SOURCE_DIR) / "examples" / "h100";
    const std::filesystem::path shared = OSC_REAL_TRACES_DIR;
    std::vector<std::vector<std::string>> jobs = {
        {(examples / "pytorch_ddp_torch_profiler" / "rank0.1795563376836014908.pt.trace.json.gz").string(),
         (examples / "pytorch_ddp_torch_profiler" / "rank1.1795563376816902259.pt.trace.json.gz").string()}};
    for (const char* name : {"hta/nccl_data.json.gz", "tracelens/resnet_act_checkpoint.json.gz",
                             "tracelens/b200_eager_trace.json.gz", "hta/mi250_minitoy_train_ROCm6_2_kineto.json.gz"})
        if (std::filesystem::exists(shared / name)) jobs.push_back({(shared / name).string()});
    return jobs;
}

Capture load(const std::vector<std::string>& paths, bool analysisOnly) {
    LoadOptions options;
    options.launchShapeOnly = true;  // as every job reads
    options.analysisOnly = analysisOnly;
    return loadCaptures(paths, options);
}

std::vector<std::string> encoded(const Analysis& a) {
    std::vector<std::string> out;
    for (const auto& d : a.devices) {
        std::string bytes;
        partial::encodeDevice(d, bytes);
        out.push_back(std::move(bytes));
    }
    return out;
}

TEST(AnalysisOnlyLoad, LeavesOutWhatTheAnalysisDoesNotReadAndAnswersTheSame) {
    const auto jobs = pytorchJobs();
    ASSERT_GE(jobs.size(), 2u) << "the public real traces are not at " << OSC_REAL_TRACES_DIR;
    size_t kernels = 0, shapes = 0;
    for (const auto& paths : jobs) {
        SCOPED_TRACE(paths.front());
        const Capture whole = load(paths, false), lean = load(paths, true);
        ASSERT_EQ(whole.processes.size(), lean.processes.size());
        for (size_t p = 0; p < whole.processes.size(); ++p) {
            const Process &w = whole.processes[p], &l = lean.processes[p];
            EXPECT_TRUE(l.apiCalls.returnValue.empty() && l.apiCalls.kind.empty() && l.cpuOps.globalTid.empty());
            EXPECT_EQ(l.apiCalls.start, w.apiCalls.start);
            EXPECT_EQ(l.apiCalls.end, w.apiCalls.end);
            EXPECT_EQ(l.apiCalls.correlation, w.apiCalls.correlation);
            EXPECT_EQ(l.apiCalls.globalTid, w.apiCalls.globalTid);
            EXPECT_EQ(l.cpuOps.start, w.cpuOps.start);
            EXPECT_EQ(l.cpuOps.name.size(), w.cpuOps.name.size());
            ASSERT_EQ(l.devices.size(), w.devices.size());
            for (size_t d = 0; d < w.devices.size(); ++d) {
                const KernelTable &wk = w.devices[d].kernels, &lk = l.devices[d].kernels;
                EXPECT_TRUE(lk.shortName.empty() && lk.gridX.empty() && lk.blockZ.empty());
                EXPECT_TRUE(wk.shape.empty() && wk.shapes.empty());
                ASSERT_EQ(lk.size(), wk.size());
                EXPECT_EQ(lk.shape.size(), wk.size());
                EXPECT_EQ(lk.start, wk.start);
                EXPECT_EQ(lk.correlation, wk.correlation);
                for (size_t i = 0; i < wk.size(); ++i) {
                    EXPECT_EQ(lk.launchShape(i), wk.launchShape(i)) << "kernel " << i;
                    EXPECT_EQ(lk.launchShape(i), (LaunchShape{wk.gridX[i], wk.gridY[i], wk.gridZ[i], wk.blockX[i],
                                                              wk.blockY[i], wk.blockZ[i]}));
                }
                kernels += wk.size();
                shapes += lk.shapes.size();
            }
        }
        const Analysis expected = analyze(whole);
        EXPECT_EQ(encoded(analyze(lean)), encoded(expected));
        // Given up, the capture is freed as the analysis reads it: the same answers.
        EXPECT_EQ(encoded(analyze(load(paths, true))), encoded(expected));
        if (paths.size() == 1) {
            Capture given = load(paths, true);
            std::string a, b;
            partial::encodeDevice(partial::analyzeFilePart(std::move(given), paths[0], {}).analysis.devices.at(0), a);
            partial::encodeDevice(partial::analyzeFilePart(whole, paths[0], {}).analysis.devices.at(0), b);
            EXPECT_EQ(a, b);
        }
    }
    EXPECT_GT(kernels, 1000u);
    EXPECT_GT(shapes, 10u);           // distinct shapes were met...
    EXPECT_LT(shapes * 20, kernels);  // ...and they are few
}

TEST(PackedOptional, MeansWhatStdOptionalMeansInNineBytes) {
    static_assert(sizeof(PackedOptional<uint64_t>) == 9 && alignof(PackedOptional<double>) == 1);
    PackedOptional<uint64_t> bytes;
    EXPECT_FALSE(bytes.has_value());
    EXPECT_EQ(bytes, std::nullopt);
    EXPECT_EQ(bytes.value_or(7), 7u);
    EXPECT_THROW(static_cast<void>(bytes.value()), std::bad_optional_access);
    bytes = UINT64_MAX;
    EXPECT_TRUE(bytes && *bytes == UINT64_MAX && bytes == UINT64_MAX);
    const std::optional<uint64_t> asStd = bytes;
    EXPECT_EQ(asStd, std::optional<uint64_t>(UINT64_MAX));
    bytes = std::optional<uint64_t>();
    EXPECT_FALSE(bytes.has_value());
    // Two empty ones are equal whatever their bytes held before.
    PackedOptional<uint64_t> other = 5;
    other.reset();
    EXPECT_EQ(bytes, other);
    PackedOptional<double> nan = std::numeric_limits<double>::quiet_NaN();
    EXPECT_TRUE(std::isnan(*nan));
    EXPECT_FALSE(nan == nan);  // as std::optional<double> compares
    // Packed side by side in a struct, without padding between them.
    struct Seven {
        PackedOptional<uint64_t> a, b, c;
        PackedOptional<double> d, e, f, g;
    };
    EXPECT_EQ(sizeof(Seven), 63u);
}

TEST(CompactList, IsAnEmptyVectorInEightBytesUntilItHoldsSomething) {
    static_assert(sizeof(CompactList<P2pPart>) == 8);
    CompactList<int> list;
    EXPECT_TRUE(list.empty());
    EXPECT_EQ(list.begin(), list.end());
    list.push_back(1);
    list.emplace_back(2);
    list = {3, 4, 5};
    ASSERT_EQ(list.size(), 3u);
    EXPECT_EQ(list.front() + list[1] + list.back(), 12);
    CompactList<int> copy = list;
    copy.push_back(6);
    EXPECT_EQ(list.size(), 3u);  // a copy owns its elements
    EXPECT_FALSE(copy == list);
    copy.resize(3);
    EXPECT_TRUE(copy == list);
    int sum = 0;
    for (int x : copy) sum += x;
    EXPECT_EQ(sum, 12);
    copy.clear();
    EXPECT_TRUE(copy.empty() && copy.data() == nullptr);
}

}  // namespace
}  // namespace osc
