// partial::mergedReport: the text and Markdown reports of partial results,
// made device by device as the merge hands them out, against the reports
// of the whole merged Analysis (mergedAnalysis) and of the single process
// (analyze(loadCaptures(files))): data-parallel jobs with and without
// --align collectives, pipelines and all-to-all, split into partials at
// random, with the matched instances forced out of memory.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/job/file_workers.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/partial/merge.h"
#include "analyzer/report/report_markdown.h"
#include "analyzer/report/report_text.h"
#include "analyzer/synth/pattern_synth.h"
#include "analyzer/synth/workload_synth.h"
#include "tests/analyzer/random_job.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>

using namespace osc;

namespace {

class MergedReport : public ::testing::Test {
protected:
    std::string path(const std::string& name) const { return dir_ / name; }

    // The files split into 1 to 3 partials of consecutive files.
    partial::PartSet partials(const std::vector<std::string>& files, const AnalysisSettings& s, std::mt19937& rng) {
        partial::PartSet set;
        for (size_t i = 0; i < files.size();) {
            const size_t n = std::min(files.size() - i, std::uniform_int_distribution<size_t>(1, 3)(rng));
            const std::vector<std::string> group(files.begin() + static_cast<std::ptrdiff_t>(i),
                                                 files.begin() + static_cast<std::ptrdiff_t>(i + n));
            const job::AnalyzedFiles analyzed(group, s, {});
            const std::string file = path("part" + std::to_string(parts_++) + ".partial.json");
            {
                std::ofstream out(file, std::ios::binary);
                analyzed.writePartial(out, group, "overlapscope test");
            }
            set.addPartialFile(file);
            i += n;
        }
        return set;
    }

    void expectSameReports(const std::vector<std::string>& files, std::mt19937& rng, const std::string& what) {
        for (bool align : {false, true}) {
            AnalysisSettings s;
            s.alignCollectives = align;
            const std::string label = what + (align ? " --align collectives" : "");
            const Analysis single = analyze(loadCaptures(files), s);
            const partial::PartSet set = partials(files, s, rng);
            partial::MergeOptions mo;
            mo.instancesInMemory = std::uniform_int_distribution<size_t>(1, 64)(rng);
            const Analysis merged = partial::mergedAnalysis(set, mo);
            // The devices read back on 2 or 3 threads ahead of the one taken.
            partial::MergeOptions onThreads = mo;
            onThreads.threads = std::uniform_int_distribution<int>(2, 3)(rng);
            onThreads.bytesForThreads = 0;
            EXPECT_EQ(report::formatTextReport(partial::mergedAnalysis(set, onThreads), {}),
                      report::formatTextReport(merged, {}))
                << label;
            for (int k = 0; k < 3; ++k) {
                report::ReportOptions o;
                o.inputs = files;
                o.steps = k != 1;
                o.collectives = k != 0;
                o.interference = k == 2;
                o.topCollectives = k == 2 ? 0 : 3;
                std::vector<std::string> warnings;
                const std::string text =
                    partial::mergedReport(set, k == 1 ? onThreads : mo, o, report::ReportFormat::Text, &warnings);
                EXPECT_EQ(text, report::formatTextReport(merged, o)) << label << " options " << k;
                EXPECT_EQ(text, report::formatTextReport(single, o)) << label << " options " << k;
                EXPECT_EQ(warnings, merged.warnings) << label;
                const std::string markdown = partial::mergedReport(set, mo, o, report::ReportFormat::Markdown);
                EXPECT_EQ(markdown, report::formatMarkdownReport(merged, o)) << label << " options " << k;
                EXPECT_EQ(markdown, report::formatMarkdownReport(single, o)) << label << " options " << k;
            }
        }
    }

    testsupport::TempDir dir_;
    int parts_ = 0;
};

}  // namespace

TEST_F(MergedReport, DataParallelJobsGiveTheWholeAnalysisReports) {
    std::mt19937 rng(3101);
    for (int round = 0; round < 4; ++round) {
        const std::string name = "dp" + std::to_string(round);
        expectSameReports(synth::writeWorkload(test::randomJob(rng), path(name), false), rng, name);
    }
}

// Files analysed in this process keep their devices in binary, filled
// into the set while the files are still read; the devices then read back
// on threads, or on one.
TEST_F(MergedReport, DevicesKeptInBinaryReadOnThreadsGiveTheSameReports) {
    std::mt19937 rng(3103);
    for (int round = 0; round < 3; ++round) {
        const std::string name = "bin" + std::to_string(round);
        const auto files = synth::writeWorkload(test::randomJob(rng), path(name), false);
        const AnalysisSettings s;
        const Analysis single = analyze(loadCaptures(files), s);
        partial::PartSet set;
        job::FileWorkerOptions fo;
        fo.jobs = std::uniform_int_distribution<int>(1, 3)(rng);
        const job::AnalyzedFiles analyzed(files, s, fo, set, files);
        report::ReportOptions o;
        o.inputs = files;
        o.steps = true;
        o.collectives = true;
        for (int threads : {1, 2, 3}) {
            partial::MergeOptions mo;
            mo.threads = threads;
            mo.bytesForThreads = 0;
            EXPECT_EQ(partial::mergedReport(set, mo, o, report::ReportFormat::Text),
                      report::formatTextReport(single, o))
                << name << " on " << threads << " threads";
            EXPECT_EQ(report::formatTextReport(partial::mergedAnalysis(set, mo), o),
                      report::formatTextReport(single, o))
                << name << " on " << threads << " threads";
        }
    }
}

TEST_F(MergedReport, PipelinesAndAllToAllGiveTheWholeAnalysisReports) {
    std::mt19937 rng(3102);
    for (int round = 0; round < 2; ++round) {
        const std::string r = std::to_string(round);
        synth::PipelineSpec pp;
        pp.stages = std::uniform_int_distribution<int>(2, 5)(rng);
        pp.microbatches = std::uniform_int_distribution<int>(2, 6)(rng);
        pp.steps = 2;
        pp.transferNs = std::uniform_int_distribution<TimeNs>(0, 100'000)(rng);
        pp.slowStage = round;
        pp.slowFactor = 2.0;
        expectSameReports(synth::writePipeline(pp, path("pp" + r), false), rng, "pipeline " + r);
        synth::AllToAllSpec a2a;
        a2a.ranks = std::uniform_int_distribution<int>(3, 6)(rng);
        a2a.steps = 2;
        a2a.imbalance = 2.5;
        a2a.hotRank = round;
        expectSameReports(synth::writeAllToAll(a2a, path("a2a" + r), false), rng, "alltoall " + r);
    }
}
