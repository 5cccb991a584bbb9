// analyzeInputs (files analysed apart, on several threads, captures freed
// early) against analyze(loadCaptures(...)) on the same random multi-rank
// jobs: the JSON reports must be byte-identical.
#include "analyzer/capture/capture_error.h"
#include "analyzer/export/chrome_export.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/pipeline/analyze_inputs.h"
#include "analyzer/report/report_json.h"
#include "analyzer/synth/workload_synth.h"
#include "tests/analyzer/random_job.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

using namespace osc;
using osc::test::randomJob;
namespace fs = std::filesystem;

namespace {

class PipelineTest : public ::testing::Test {
protected:
    static std::string json(const Analysis& a, const std::vector<std::string>& inputs) {
        report::ReportOptions o;
        o.inputs = inputs;
        std::ostringstream out;
        report::writeJsonReport(out, a, o);
        return out.str();
    }

    const testsupport::TempDir tmp_;
    const fs::path dir_{tmp_.path()};
};

// Each process starts its session at its own wall-clock time, so files sit
// at different offsets on the job's timeline.
void moveSessionStart(const std::string& file, int64_t byNs) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    const std::string sql = "UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = utcEpochNs + " + std::to_string(byNs);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
}

}  // namespace

TEST_F(PipelineTest, SameReportAsLoadingEverythingAtOnce) {
    std::mt19937 rng(16);
    for (int round = 0; round < 12; ++round) {
        const auto job = randomJob(rng);
        const fs::path d = dir_ / ("job" + std::to_string(round));
        const auto files = synth::writeWorkload(job, d.string(), false);
        for (const auto& f : files) moveSessionStart(f, std::uniform_int_distribution<int64_t>(0, 400'000)(rng));
        for (bool align : {false, true}) {
            AnalysisSettings s;
            s.alignCollectives = align;
            const std::string want = json(analyze(loadCapture(d.string()), s), {d.string()});
            for (int jobs : {1, 3}) {
                PipelineOptions o;
                o.jobs = jobs;
                size_t calls = 0;
                o.progress = [&](size_t done, size_t total, const std::string&) {
                    ++calls;
                    EXPECT_LE(done, total);
                };
                const auto got = analyzeInputs({d.string()}, s, o);
                EXPECT_EQ(got.files.size(), static_cast<size_t>(job.ranks));
                EXPECT_EQ(calls, static_cast<size_t>(job.ranks));
                ASSERT_EQ(json(got.analysis, {d.string()}), want)
                    << "round " << round << " align " << align << " jobs " << jobs;
            }
        }
    }
}

TEST_F(PipelineTest, KinetoFilesAndSeveralInputs) {
    // Each rank exported to a PyTorch-profiler-style trace; two inputs given
    // (a directory and a file), in an order that is not rank order.
    std::mt19937 rng(17);
    auto job = randomJob(rng);
    job.ranks = 4;
    job.arrivalSkewNs.resize(4);
    job.clockOffsetNs.resize(4);
    const fs::path sq = dir_ / "sqlite";
    const auto files = synth::writeWorkload(job, sq.string(), false);
    fs::create_directories(dir_ / "kineto");
    std::vector<std::string> jsons;
    for (const auto& f : files) {
        const fs::path out = dir_ / "kineto" / (fs::path(f).stem().string() + ".json");
        std::ofstream o(out);
        writeChromeTrace(loadCapture(f), o);
        jsons.push_back(out.string());
    }
    const std::string lone = jsons[1];
    fs::rename(lone, dir_ / "rank1.json");
    const std::vector<std::string> inputs = {(dir_ / "kineto").string(), (dir_ / "rank1.json").string()};
    const std::string want = json(analyze(loadCaptures(inputs)), inputs);
    PipelineOptions o;
    o.jobs = 2;
    EXPECT_EQ(json(analyzeInputs(inputs, {}, o).analysis, inputs), want);
}

TEST_F(PipelineTest, TheFirstBadFileInOrderIsReported) {
    synth::WorkloadSpec job;
    job.ranks = 6;
    job.steps = 1;
    const auto files = synth::writeWorkload(job, (dir_ / "j").string(), false);
    std::ofstream(files[2], std::ios::trunc) << "not a capture";
    std::ofstream(files[4], std::ios::trunc) << "not a capture either";
    for (int jobs : {1, 4}) {
        PipelineOptions o;
        o.jobs = jobs;
        try {
            analyzeInputs({(dir_ / "j").string()}, {}, o);
            FAIL() << "bad files were accepted";
        } catch (const CaptureError& e) {
            EXPECT_NE(std::string(e.what()).find(fs::path(files[2]).filename().string()), std::string::npos)
                << e.what();
        }
    }
}
