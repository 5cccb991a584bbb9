// job::ArrivingParts (overlapscope.distributed's client): file parts given in
// any order, as Dask's tasks finish, merged into the report the whole job
// loaded at once gives; its refusals keep the one-process job's order.
#include "analyzer/capture/capture_error.h"
#include "analyzer/crossrank/analyze.h"
#include "analyzer/job/arriving_parts.h"
#include "analyzer/job/job.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/partial/device_codec.h"
#include "analyzer/report/report_json.h"
#include "analyzer/synth/workload_synth.h"
#include "tests/analyzer/random_job.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>

using namespace osc;
namespace fs = std::filesystem;

namespace {

std::string json(const Analysis& a, const std::vector<std::string>& inputs) {
    report::ReportOptions o;
    o.inputs = inputs;
    std::ostringstream out;
    report::writeJsonReport(out, a, o);
    return out.str();
}

// Each capture file's part, as a worker sends it.
std::vector<std::string> partsOf(const std::vector<std::string>& captures, const AnalysisSettings& s) {
    std::vector<std::string> parts;
    for (const auto& c : captures) {
        parts.emplace_back();
        partial::encodeFilePart(job::analyzeCaptureFile(c, s, readCaptureFile), parts.back());
    }
    return parts;
}

// As if its process had been killed: no end_reason.
void unfinish(const std::string& file) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, "DELETE FROM OVERLAPSCOPE_META WHERE name = 'end_reason'", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
}

job::JobRequest requestOf(const AnalysisSettings& s) {
    job::JobRequest r;
    r.settings = s;
    r.jobs = 2;
    return r;
}

}  // namespace

TEST(ArrivingParts, PartsInAnyOrderGiveTheWholeJobsReport) {
    const testsupport::TempDir tmp;
    std::mt19937 rng(44);
    for (int round = 0; round < 6; ++round) {
        const auto spec = osc::test::randomJob(rng);
        const fs::path d = fs::path(tmp.path()) / ("job" + std::to_string(round));
        const auto files = synth::writeWorkload(spec, d.string(), false);
        // Two captures that did not finish: their warnings come in file
        // order, whatever order their parts came in.
        for (size_t f : {size_t{0}, files.size() - 1}) unfinish(files[f]);
        AnalysisSettings s;
        s.alignCollectives = round % 2 == 1;
        const auto captures = captureFiles({d.string()});
        const auto parts = partsOf(captures, s);
        std::vector<size_t> order(parts.size());
        std::iota(order.begin(), order.end(), 0);
        if (round % 3 == 1) std::reverse(order.begin(), order.end());
        if (round % 3 == 2) std::shuffle(order.begin(), order.end(), rng);
        job::ArrivingParts arriving(s, {d.string()});
        for (size_t i : order) arriving.add(i, parts[i], captures[i]);
        const std::string want = json(analyze(loadCapture(d.string()), s), {d.string()});
        ASSERT_NE(want.find("did not finish"), std::string::npos);
        ASSERT_EQ(json(arriving.analysis(parts.size(), requestOf(s)), {d.string()}), want) << "round " << round;
    }
}

// As in one process: a part that cannot be read is refused as it comes, the
// same capture twice (which only the set sees) once every part came.
TEST(ArrivingParts, RefusalsNameThePartAndWaitForTheRest) {
    const testsupport::TempDir tmp;
    synth::WorkloadSpec spec;
    spec.ranks = 3;
    spec.steps = 2;
    const auto captures = synth::writeWorkload(spec, tmp.path() + "/j", false);
    const AnalysisSettings s;
    const auto parts = partsOf(captures, s);

    job::ArrivingParts twice(s, {"j"});
    twice.add(0, parts[0], captures[0]);
    twice.add(1, parts[0], captures[0] + "-copy");  // the same capture again: taken for now
    twice.add(2, parts[2], captures[2]);
    try {
        twice.analysis(3, requestOf(s));
        FAIL() << "the same capture twice was accepted";
    } catch (const CaptureError& e) {
        EXPECT_NE(std::string(e.what()).find("given twice"), std::string::npos) << e.what();
    }

    job::ArrivingParts damaged(s, {"j"});
    damaged.add(1, parts[1], captures[1]);
    try {
        damaged.add(0, "not a part", "rank0-made-elsewhere");
        FAIL() << "a damaged part was read";
    } catch (const CaptureError& e) {
        EXPECT_EQ(e.path(), "rank0-made-elsewhere");
    }

    job::ArrivingParts missing(s, {"j"});
    missing.add(0, parts[0], captures[0]);
    missing.add(2, parts[2], captures[2]);
    EXPECT_THROW(missing.add(2, parts[2], captures[2]), std::invalid_argument);
    EXPECT_THROW(missing.analysis(3, requestOf(s)), std::invalid_argument);  // part 1 never came
}
