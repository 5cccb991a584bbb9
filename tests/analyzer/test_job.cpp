// job::analyzeJob on several files (analysed apart, on several threads,
// captures freed early, then merged) against analyze(loadCaptures(...)) on
// the same random multi-rank jobs: the JSON reports must be byte-identical.
#include "analyzer/capture/capture_error.h"
#include "analyzer/crossrank/analyze.h"
#include "analyzer/export/chrome_export.h"
#include "analyzer/job/job.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/partial/device_codec.h"
#include "analyzer/report/report_json.h"
#include "analyzer/report/report_markdown.h"
#include "analyzer/report/report_text.h"
#include "analyzer/synth/workload_synth.h"
#include "tests/analyzer/random_job.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <sstream>

using namespace osc;
using osc::test::randomJob;
namespace fs = std::filesystem;

namespace {

class JobTest : public ::testing::Test {
protected:
    static std::string json(const Analysis& a, const std::vector<std::string>& inputs) {
        report::ReportOptions o;
        o.inputs = inputs;
        std::ostringstream out;
        report::writeJsonReport(out, a, o);
        return out.str();
    }

    // Several capture files: analysed file by file and merged.
    static Analysis analyzeFiles(const std::vector<std::string>& paths, const AnalysisSettings& s, int jobs,
                                 const job::JobProgress& progress = {}) {
        job::JobRequest r;
        r.settings = s;
        r.jobs = jobs;
        const job::JobInputs in{job::JobKind::Captures, paths};
        EXPECT_TRUE(job::streamed(in));
        return job::analyzeJob(in, r, progress);
    }

    const testsupport::TempDir tmp_;
    const fs::path dir_{tmp_.path()};
};

// Each process starts its session at its own wall-clock time, so files sit
// at different offsets on the job's timeline.
void moveSessionStart(const std::string& file, int64_t byNs) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    const std::string sql =
        "UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = utcEpochNs + " + std::to_string(byNs);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
}

// The job's files in `d`, each process's session started up to 0.4 ms
// apart from the others'.
fs::path writeJob(const synth::WorkloadSpec& spec, const fs::path& d, std::mt19937& rng) {
    for (const auto& f : synth::writeWorkload(spec, d.string(), false))
        moveSessionStart(f, std::uniform_int_distribution<int64_t>(0, 400'000)(rng));
    return d;
}

}  // namespace

TEST_F(JobTest, SameReportAsLoadingEverythingAtOnce) {
    std::mt19937 rng(16);
    for (int round = 0; round < 12; ++round) {
        const auto spec = randomJob(rng);
        const fs::path d = writeJob(spec, dir_ / ("job" + std::to_string(round)), rng);
        for (bool align : {false, true}) {
            AnalysisSettings s;
            s.alignCollectives = align;
            const std::string want = json(analyze(loadCapture(d.string()), s), {d.string()});
            for (int jobs : {1, 3}) {
                job::JobProgress p;
                size_t calls = 0;
                p.counted = [&](std::string_view verb, size_t done, size_t total) {
                    if (verb != "analyzing") return;
                    ++calls;
                    EXPECT_LE(done, total);
                };
                const Analysis got = analyzeFiles({d.string()}, s, jobs, p);
                EXPECT_EQ(captureFiles({d.string()}).size(), static_cast<size_t>(spec.ranks));
                EXPECT_EQ(calls, static_cast<size_t>(spec.ranks));
                ASSERT_EQ(json(got, {d.string()}), want) << "round " << round << " align " << align << " jobs " << jobs;
            }
        }
    }
}

TEST_F(JobTest, FilePartsMadeElsewhereGiveTheReportMadeInMemory) {
    // What a Dask worker sends (overlapscope.distributed): each file's part
    // in device_codec's bytes, one file each, merged in the job's file order,
    // against the whole job loaded at once. A damaged part names its file.
    std::mt19937 rng(19);
    for (int round = 0; round < 4; ++round) {
        const auto spec = randomJob(rng);
        const fs::path d = writeJob(spec, dir_ / ("parts" + std::to_string(round)), rng);
        AnalysisSettings s;
        s.alignCollectives = round % 2 == 1;
        job::JobInputs in{job::JobKind::FileParts, {}};
        const auto captures = captureFiles({d.string()});
        for (size_t i = 0; i < captures.size(); ++i) {
            std::string bytes;
            partial::encodeFilePart(job::analyzeCaptureFile(captures[i], s, readCaptureFile), bytes);
            in.paths.push_back((dir_ / ("part" + std::to_string(round) + "-" + std::to_string(i))).string());
            std::ofstream(in.paths.back(), std::ios::binary) << bytes;
        }
        job::JobRequest r;
        r.settings = s;
        r.jobs = 2;
        ASSERT_TRUE(job::streamed(in));
        const std::string want = json(analyze(loadCapture(d.string()), s), {d.string()});
        ASSERT_EQ(json(job::analyzeJob(in, r), {d.string()}), want) << "round " << round;
        // Streamed (report --scheduler): each device read back, not kept.
        report::ReportOptions o;
        o.inputs = {d.string()};
        std::ostringstream streamed;
        job::writeJobJson(in, r, o, streamed);
        ASSERT_EQ(streamed.str(), want) << "round " << round;
        if (round == 0) {
            std::fstream(in.paths[1], std::ios::in | std::ios::out | std::ios::binary).write("XXXX", 4);
            try {
                job::analyzeJob(in, r);
                FAIL() << "a damaged part was read";
            } catch (const CaptureError& e) {
                EXPECT_EQ(e.path(), in.paths[1]);
            }
        }
    }
}

TEST_F(JobTest, TextAndMarkdownOfSeveralFilesEqualTheReportMadeInMemory) {
    // Several files go through the workers' binary parts, the merge and the
    // report made device by device; one capture in memory is the reference.
    std::mt19937 rng(18);
    for (int round = 0; round < 4; ++round) {
        const auto spec = randomJob(rng);
        const fs::path d = writeJob(spec, dir_ / ("text" + std::to_string(round)), rng);
        AnalysisSettings s;
        s.alignCollectives = round % 2 == 1;
        report::ReportOptions o;
        o.inputs = {d.string()};
        o.steps = o.collectives = o.interference = round >= 2;
        o.topCollectives = round == 3 ? 0 : 5;
        const Analysis whole = analyze(loadCapture(d.string()), s);
        job::JobRequest r;
        r.settings = s;
        r.jobs = 2;
        const job::JobInputs in{job::JobKind::Captures, {d.string()}};
        ASSERT_TRUE(job::streamed(in));
        EXPECT_EQ(job::jobReport(in, r, o, false), report::formatTextReport(whole, o)) << "round " << round;
        EXPECT_EQ(job::jobReport(in, r, o, true), report::formatMarkdownReport(whole, o)) << "round " << round;
    }
}

TEST_F(JobTest, KinetoFilesAndSeveralInputs) {
    // Each rank exported to a PyTorch-profiler-style trace; two inputs given
    // (a directory and a file), in an order that is not rank order.
    std::mt19937 rng(17);
    auto spec = randomJob(rng);
    spec.ranks = 4;
    spec.arrivalSkewNs.resize(4);
    spec.clockOffsetNs.resize(4);
    const fs::path sq = dir_ / "sqlite";
    const auto files = synth::writeWorkload(spec, sq.string(), false);
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
    EXPECT_EQ(json(analyzeFiles(inputs, {}, 2), inputs), want);
}

TEST_F(JobTest, TheFirstBadFileInOrderIsReported) {
    synth::WorkloadSpec spec;
    spec.ranks = 6;
    spec.steps = 1;
    const auto files = synth::writeWorkload(spec, (dir_ / "j").string(), false);
    std::ofstream(files[2], std::ios::trunc) << "not a capture";
    std::ofstream(files[4], std::ios::trunc) << "not a capture either";
    for (int jobs : {1, 4}) {
        try {
            analyzeFiles({(dir_ / "j").string()}, {}, jobs);
            FAIL() << "bad files were accepted";
        } catch (const CaptureError& e) {
            EXPECT_NE(std::string(e.what()).find(fs::path(files[2]).filename().string()), std::string::npos)
                << e.what();
        }
    }
}

// The set is filled while the workers still read (file_workers.cpp): a file
// the set refuses (the same capture twice) must not hide a bad file after
// it, which reading them all first reported, nor be lost when none follows.
TEST_F(JobTest, ABadFileAfterOneGivenTwiceIsStillTheOneReported) {
    synth::WorkloadSpec spec;
    spec.ranks = 4;
    spec.steps = 2;
    const auto files = synth::writeWorkload(spec, (dir_ / "j").string(), false);
    const fs::path copy = dir_ / "j" / "y-copy-of-rank0.sqlite";
    fs::copy_file(files[0], copy);
    for (int jobs : {1, 2, 4}) {
        try {
            analyzeFiles({(dir_ / "j").string()}, {}, jobs);
            FAIL() << "the same capture twice was accepted";
        } catch (const CaptureError& e) {
            EXPECT_NE(std::string(e.what()).find("also in"), std::string::npos) << e.what();
        }
    }
    std::ofstream(dir_ / "j" / "z-bad.sqlite") << "not a capture";
    for (int jobs : {1, 2, 4}) {
        try {
            analyzeFiles({(dir_ / "j").string()}, {}, jobs);
            FAIL() << "a bad file was accepted";
        } catch (const CaptureError& e) {
            EXPECT_NE(std::string(e.what()).find("z-bad.sqlite"), std::string::npos) << e.what();
        }
    }
}

// Cancelled once the first file is done: the workers stop, the thread
// filling the set stops waiting for files that will not come, and the job
// ends in LoadCancelled, whatever the number of workers.
TEST_F(JobTest, ACancelledJobOfSeveralFilesEndsWithoutHanging) {
    synth::WorkloadSpec spec;
    spec.ranks = 8;
    spec.steps = 3;
    synth::writeWorkload(spec, (dir_ / "j").string(), false);
    for (int jobs : {1, 2, 4}) {
        std::atomic<bool> cancel{false};
        job::JobProgress progress;
        progress.cancel = &cancel;
        progress.counted = [&](std::string_view verb, size_t done, size_t) {
            if (verb == "analyzing" && done >= 1) cancel = true;
        };
        EXPECT_THROW(analyzeFiles({(dir_ / "j").string()}, {}, jobs, progress), LoadCancelled) << "jobs " << jobs;
    }
}

TEST_F(JobTest, LoadingSeveralFilesReportsOneFractionAndNamesTheFile) {
    synth::WorkloadSpec spec;
    spec.ranks = 3;
    spec.steps = 2;
    synth::writeWorkload(spec, (dir_ / "j").string(), false);
    std::vector<std::pair<double, std::string>> calls;
    LoadOptions options;
    options.progress = [&](double fraction, std::string_view stage) { calls.emplace_back(fraction, stage); };
    loadCaptures({(dir_ / "j").string()}, options);
    ASSERT_FALSE(calls.empty());
    std::set<int> files;
    double last = 0;
    for (const auto& [fraction, stage] : calls) {
        ASSERT_EQ(stage.rfind("file ", 0), 0u) << stage;
        const int file = std::stoi(stage.substr(5));
        EXPECT_EQ(stage.substr(stage.find('/'), 4), "/3, ") << stage;
        EXPECT_GE(fraction, (file - 1) / 3.0 - 1e-12) << stage;
        EXPECT_LE(fraction, file / 3.0 + 1e-12) << stage;
        EXPECT_GE(fraction, last - 1e-12) << stage;  // it never goes back
        last = fraction;
        files.insert(file);
    }
    EXPECT_EQ(files, (std::set<int>{1, 2, 3}));
}

TEST_F(JobTest, AnalysingSeveralFilesReportsTheShareReadWithinFiles) {
    synth::WorkloadSpec spec;
    spec.ranks = 4;
    spec.steps = 3;
    synth::writeWorkload(spec, (dir_ / "j").string(), false);
    for (int jobs : {1, 3}) {
        std::vector<double> seen;
        std::mutex m;
        job::JobProgress progress;
        progress.reading = [&](double fraction) {
            const std::lock_guard lock(m);
            seen.push_back(fraction);
        };
        analyzeFiles({(dir_ / "j").string()}, {}, jobs, progress);
        ASSERT_GT(seen.size(), 4u) << "jobs " << jobs;  // more than once per file
        for (size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i], seen[i - 1]) << "jobs " << jobs;
        EXPECT_GE(seen.front(), 0.0);
        EXPECT_DOUBLE_EQ(seen.back(), 1.0);
    }
}
