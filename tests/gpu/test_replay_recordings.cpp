// Replays every committed raw CUPTI recording (tests/gpu/recordings/SET/RUN/)
// through the agent's real decoder and writer, reads the capture back with
// the analyzer and asserts what a real run of the workload must show. The
// fabricated set stands in until a GPU session adds real sets beside it
// (tests/gpu/README.md): each run folder holds one NAME.cupti recording per
// rank and an expected.json written by the kit (or the fabricator).
#include "agent/recording/replay_source.h"
#include "analyzer/crossrank/analyze.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/metrics/analysis.h"
#include "tests/agent/agent_test_util.h"
#include "tests/gpu/capture_facts.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

namespace osc {
namespace {

namespace fs = std::filesystem;

struct RunDir {
    std::string set, name, path;
};

void PrintTo(const RunDir& run, std::ostream* os) { *os << run.set << "/" << run.name; }

std::vector<RunDir> discoverRuns() {
    std::vector<RunDir> runs;
    std::error_code ec;
    for (const auto& set : fs::directory_iterator(OSC_RECORDINGS_DIR, ec)) {
        if (!set.is_directory()) continue;
        for (const auto& run : fs::directory_iterator(set.path(), ec))
            if (fs::exists(run.path() / "expected.json"))
                runs.push_back({set.path().filename().string(), run.path().filename().string(), run.path().string()});
    }
    std::sort(runs.begin(), runs.end(), [](const RunDir& a, const RunDir& b) { return a.path < b.path; });
    return runs;
}

// A run replayed into a temporary directory and analysed.
struct Replayed {
    nlohmann::json expected;
    Capture capture;
    gpukit::CaptureFacts facts;
};

Replayed replay(const RunDir& run, const agent::test::TempDir& out) {
    Replayed r;
    std::ifstream(run.path + "/expected.json") >> r.expected;
    for (const auto& dir : agent::recording::findRecordings(run.path)) {
        const auto recording = agent::recording::readRecording(dir);
        agent::recording::replayToCapture(recording, out / (fs::path(dir).stem().string() + ".sqlite"));
    }
    r.capture = loadCapture(out.path());
    AnalysisSettings settings;
    settings.commCopies = r.expected.value("comm", "nccl") == "copies";
    r.facts = gpukit::captureFacts(r.capture, analyze(r.capture, settings));
    return r;
}

class ReplayedRun : public ::testing::TestWithParam<RunDir> {
protected:
    void SetUp() override { r = replay(GetParam(), dir); }
    agent::test::TempDir dir;
    Replayed r;
};

TEST_P(ReplayedRun, EveryRankReplaysIntoOneProcess) {
    const int ranks = r.expected.at("ranks").get<int>();
    ASSERT_EQ(static_cast<int>(r.capture.processes.size()), ranks);
    for (const Process& p : r.capture.processes) {
        if (ranks > 1) {  // a one-rank job (--comm copies) sets no RANK
            EXPECT_GE(p.rank, 0);
        }
        EXPECT_EQ(p.meta.at("activity_source"), "cupti-replay");
    }
}

TEST_P(ReplayedRun, EveryLaunchedKernelIsInTheCapture) {
    const nlohmann::json counts = r.expected.value("kernels_per_rank", nlohmann::json::array());
    for (const auto& p : r.facts.processes) {
        EXPECT_GT(p.launchCalls, 0u) << "rank " << p.rank << ": no kernel launch calls in the capture";
        EXPECT_TRUE(p.launchesWithoutKernel.empty())
            << "rank " << p.rank << ": launches without their kernel, e.g. "
            << (p.launchesWithoutKernel.empty() ? "" : p.launchesWithoutKernel.begin()->first);
        // What the program (or the live capture) had: nothing lost on the way.
        if (p.rank >= 0 && static_cast<size_t>(p.rank) < counts.size()) {
            EXPECT_EQ(p.kernels, counts[static_cast<size_t>(p.rank)].get<size_t>()) << "rank " << p.rank;
        }
    }
}

TEST_P(ReplayedRun, NcclKernelsAreCommunicationAndNothingElseIs) {
    for (const auto& p : r.facts.processes) {
        EXPECT_EQ(p.ncclAsCommunication, p.ncclKernels) << "rank " << p.rank;
        EXPECT_EQ(p.otherAsCommunication, 0u) << "rank " << p.rank;
        if (r.expected.value("comm", "nccl") == "nccl") {
            EXPECT_GT(p.ncclKernels, 0u) << "rank " << p.rank;
        }
    }
}

TEST_P(ReplayedRun, StepsAndTheirCollectivesAreFound) {
    const size_t steps = r.expected.at("steps").get<size_t>();
    // A number, or one per rank where the ranks differ (pipeline stages).
    const nlohmann::json perStepJson = r.expected.value("collectives_per_step", nlohmann::json(-1));
    // With --comm copies each collective is a down and an up copy per slice of
    // the staging buffer: at least twice as many, and the same in every step.
    const bool copies = r.expected.value("comm", "nccl") == "copies";
    ASSERT_FALSE(r.facts.devices.empty());
    for (const auto& d : r.facts.devices) {
        EXPECT_EQ(d.steps, steps) << "rank " << d.rank;
        int perStep = -1;
        if (perStepJson.is_array()) {
            ASSERT_TRUE(d.rank >= 0 && static_cast<size_t>(d.rank) < perStepJson.size()) << "rank " << d.rank;
            perStep = perStepJson.at(static_cast<size_t>(d.rank)).get<int>();
        } else {
            perStep = perStepJson.get<int>();
        }
        if (perStep < 0) continue;
        for (size_t s = 0; s < d.collectivesPerStep.size(); ++s) {
            if (copies) {
                EXPECT_GE(d.collectivesPerStep[s], 2 * perStep) << "rank " << d.rank << " step " << s;
                EXPECT_EQ(d.collectivesPerStep[s], d.collectivesPerStep[0]) << "rank " << d.rank << " step " << s;
            } else {
                EXPECT_EQ(d.collectivesPerStep[s], perStep) << "rank " << d.rank << " step " << s;
            }
        }
    }
}

std::string runName(const ::testing::TestParamInfo<RunDir>& info) {
    std::string n = info.param.set + "_" + info.param.name;
    for (char& c : n)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return n;
}

INSTANTIATE_TEST_SUITE_P(Recordings, ReplayedRun, ::testing::ValuesIn(discoverRuns()), runName);

// The ordering every correct capture of the reference workloads shows
// (reference_workloads/README.md, "What overlap to expect").
TEST(ReplayedRuns, OverlapOrderingOfModes) {
    struct Rule {
        const char *workload, *lower, *higher;
    };
    const Rule rules[] = {
        {"ddp_overlap", "sequential", "per-param"},
        {"ddp_overlap", "sequential", "bucketed"},
        {"tp_overlap", "serial", "pipelined"},
        {"fsdp_prefetch", "prefetch-0", "prefetch-1"},
        {"fsdp_prefetch", "prefetch-0", "prefetch-2"},
        // Issue 18 (tests/gpu/gpukit/report.py ORDERING_RULES): none recorded yet.
        {"pp_overlap", "gpipe", "gpipe-overlap"},
        {"pp_overlap", "1f1b", "1f1b-overlap"},
        {"moe_alltoall", "serial", "overlap"},
        {"moe_alltoall", "serial-imbalance-4", "overlap-imbalance-4"},
        {"tp_overlap", "serial", "ring"},
        {"ddp_overlap", "sequential", "zero1"},
    };
    std::map<std::string, std::map<std::string, double>> overlap;  // set -> "workload/mode" -> ratio
    for (const RunDir& run : discoverRuns()) {
        agent::test::TempDir dir;
        const Replayed r = replay(run, dir);
        const std::string key =
            r.expected.at("workload").get<std::string>() + "/" + r.expected.at("mode").get<std::string>();
        overlap[run.set][key] = r.facts.overlapMean();
    }
    ASSERT_TRUE(overlap.count("fabricated")) << "the fabricated recordings are missing from " << OSC_RECORDINGS_DIR;
    for (const auto& [set, ratios] : overlap) {
        int checked = 0;
        for (const Rule& rule : rules) {
            const std::string w = rule.workload;
            auto lo = ratios.find(w + "/" + rule.lower), hi = ratios.find(w + "/" + rule.higher);
            if (lo == ratios.end() || hi == ratios.end()) continue;
            ++checked;
            EXPECT_LT(lo->second, hi->second) << set << ": " << w << " " << rule.lower << " " << lo->second
                                              << " should overlap less than " << rule.higher << " " << hi->second;
        }
        EXPECT_GT(checked, 0) << set << ": no pair of modes to compare";
    }
}

}  // namespace
}  // namespace osc
