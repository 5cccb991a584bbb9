// Issue 16: a job analysed file by file on several threads (streaming), and
// as partial results merged later (map-reduce), must give exactly the report
// of analyze(loadCaptures(files)): the same JSON bytes, the same text and
// Markdown. Random multi-rank jobs in our capture format, as Nsight Systems
// exports (several processes per file, some with two GPUs, no NCCL plugin
// rows) and as PyTorch profiler traces; with and without --align
// collectives; split into partials at random; with the matched instances
// forced out of memory.
#include "analyzer/capture/capture_error.h"
#include "analyzer/import/chrome_export.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/partial/device_json.h"
#include "analyzer/partial/merge.h"
#include "analyzer/partial/partial_format.h"
#include "analyzer/pipeline/analyze_inputs.h"
#include "analyzer/report/report_json.h"
#include "analyzer/report/report_markdown.h"
#include "analyzer/report/report_text.h"
#include "analyzer/synth/workload_synth.h"
#include "tests/analyzer/nsys_shaped.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <unistd.h>

using namespace osc;
namespace fs = std::filesystem;

namespace {

synth::WorkloadSpec randomJob(std::mt19937& rng, int minRanks = 2, int maxRanks = 7) {
    synth::WorkloadSpec s;
    s.ranks = std::uniform_int_distribution<int>(minRanks, maxRanks)(rng);
    s.layers = std::uniform_int_distribution<int>(2, 6)(rng);
    s.steps = std::uniform_int_distribution<int>(1, 3)(rng);
    s.mode = static_cast<synth::OverlapMode>(std::uniform_int_distribution<int>(0, 2)(rng));
    s.jitter = 0.2;
    s.seed = rng();
    s.interference = 1.1;
    for (int r = 0; r < s.ranks; ++r) {
        s.arrivalSkewNs.push_back(std::uniform_int_distribution<TimeNs>(0, 300'000)(rng));
        s.clockOffsetNs.push_back(std::uniform_int_distribution<TimeNs>(-200'000, 200'000)(rng));
    }
    return s;
}

void moveSessionStart(const std::string& file, int64_t byNs) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    const std::string sql =
        "UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = utcEpochNs + " + std::to_string(byNs);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
}

report::ReportOptions reportOptions(const std::vector<std::string>& inputs) {
    report::ReportOptions o;
    o.inputs = inputs;
    o.toolVersion = "test";
    o.steps = o.collectives = o.interference = true;
    o.topCollectives = 0;
    return o;
}

std::string jsonOf(const Analysis& a, const std::vector<std::string>& inputs) {
    std::ostringstream out;
    report::writeJsonReport(out, a, reportOptions(inputs));
    return out.str();
}

class PartialMerge : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("osc_partial_" + std::to_string(::getpid()) + "_" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::string path(const std::string& name) const { return (dir_ / name).string(); }

    // Our captures, one per rank, each with its own session start.
    std::vector<std::string> ourJob(const synth::WorkloadSpec& spec, const std::string& name, std::mt19937& rng) {
        auto files = synth::writeWorkload(spec, path(name), false);
        for (const auto& f : files) moveSessionStart(f, std::uniform_int_distribution<int64_t>(0, 400'000)(rng));
        return files;
    }

    // Nsight Systems exports of 1 to 3 processes each, some folding two ranks
    // into one process with two GPUs.
    std::vector<std::string> nsysJob(const synth::WorkloadSpec& spec, const std::string& name, std::mt19937& rng) {
        const Capture c = synth::synthesizeWorkload(spec);
        fs::create_directories(path(name));
        std::vector<std::string> files;
        for (size_t p = 0; p < c.processes.size();) {
            const size_t n = std::min<size_t>(c.processes.size() - p, std::uniform_int_distribution<size_t>(1, 3)(rng));
            std::vector<size_t> these;
            for (size_t k = 0; k < n; ++k) these.push_back(p + k);
            const std::string file = path(name + "/node" + std::to_string(files.size()) + ".sqlite");
            {
                test::NsysShapedWriter w(file);
                w.write(c, these, std::bernoulli_distribution(0.4)(rng),
                        std::uniform_int_distribution<TimeNs>(0, 300'000)(rng));
            }
            files.push_back(file);
            p += n;
        }
        return files;
    }

    // PyTorch profiler traces exported from our captures.
    std::vector<std::string> kinetoJob(const synth::WorkloadSpec& spec, const std::string& name, std::mt19937& rng) {
        const auto sqlite = ourJob(spec, name + "_sqlite", rng);
        fs::create_directories(path(name));
        std::vector<std::string> files;
        for (const auto& f : sqlite) {
            const std::string out = path(name + "/" + fs::path(f).stem().string() + ".json");
            std::ofstream o(out);
            writeChromeTrace(loadCapture(f), o);
            files.push_back(out);
        }
        return files;
    }

    std::string streamed(const std::vector<std::string>& files, const AnalysisSettings& s, int jobs,
                         size_t inMemory) {
        PipelineOptions po;
        po.jobs = jobs;
        const AnalyzedFiles analyzed(files, s, po);
        partial::PartSet set;
        analyzed.addTo(set, files);
        partial::MergeOptions mo;
        mo.instancesInMemory = inMemory;
        std::ostringstream out;
        partial::writeMergedJson(set, mo, reportOptions(files), out);
        return out.str();
    }

    // Writes each group as a partial file; returns them in order.
    std::vector<std::string> writePartials(const std::vector<std::vector<std::string>>& groups,
                                           const AnalysisSettings& s, int jobs) {
        std::vector<std::string> partials;
        for (const auto& g : groups) {
            PipelineOptions po;
            po.jobs = jobs;
            const AnalyzedFiles analyzed(g, s, po);
            const std::string file = path("part" + std::to_string(partialCount_++) + ".partial.json");
            std::ofstream out(file, std::ios::binary);
            analyzed.writePartial(out, g, "overlapscope test");
            partials.push_back(file);
        }
        return partials;
    }

    static partial::PartSet readPartials(const std::vector<std::string>& partials) {
        partial::PartSet set;
        for (const auto& p : partials) set.addPartialFile(p);
        return set;
    }

    // Every way of analysing `files` must give the reference's bytes.
    void expectSameAnswers(const std::vector<std::string>& files, std::mt19937& rng, const std::string& what) {
        for (bool align : {false, true}) {
            AnalysisSettings s;
            s.alignCollectives = align;
            const std::string label = what + (align ? " --align collectives" : "");
            // Partials cover random groups of files; the reference reads the
            // files in the order the partials list them.
            std::vector<std::string> shuffled = files;
            std::shuffle(shuffled.begin(), shuffled.end(), rng);
            std::vector<std::vector<std::string>> groups;
            for (size_t i = 0; i < shuffled.size();) {
                const size_t n = std::uniform_int_distribution<size_t>(1, 3)(rng);
                groups.emplace_back(shuffled.begin() + static_cast<std::ptrdiff_t>(i),
                                    shuffled.begin() + static_cast<std::ptrdiff_t>(std::min(i + n, shuffled.size())));
                i += n;
            }
            const Analysis reference = analyze(loadCaptures(shuffled), s);
            const std::string want = jsonOf(reference, shuffled);

            EXPECT_EQ(streamed(shuffled, s, 1, size_t{8} << 20), want) << label << ": streamed, 1 worker";
            EXPECT_EQ(streamed(shuffled, s, 3, 2), want) << label << ": streamed, 3 workers, instances on disk";

            const auto partials = writePartials(groups, s, 2);
            const partial::PartSet set = readPartials(partials);
            std::ostringstream merged;
            partial::MergeOptions mo;
            mo.instancesInMemory = std::uniform_int_distribution<size_t>(1, 64)(rng);
            partial::writeMergedJson(set, mo, reportOptions(shuffled), merged);
            EXPECT_EQ(merged.str(), want) << label << ": " << partials.size() << " partials merged";

            // Text and Markdown from the merged analysis.
            const Analysis a = partial::mergedAnalysis(set, {});
            const auto o = reportOptions(shuffled);
            EXPECT_EQ(report::formatTextReport(a, o), report::formatTextReport(reference, o)) << label;
            EXPECT_EQ(report::formatMarkdownReport(a, o), report::formatMarkdownReport(reference, o)) << label;
            // The light analysis check and diff use: the same totals and steps.
            const Analysis light = partial::mergedAnalysis(set, {}, false);
            ASSERT_EQ(light.devices.size(), reference.devices.size()) << label;
            for (size_t d = 0; d < light.devices.size(); ++d) {
                EXPECT_EQ(light.devices[d].totals.exposed_comm_ns, reference.devices[d].totals.exposed_comm_ns);
                EXPECT_EQ(light.devices[d].wait.has_value(), reference.devices[d].wait.has_value());
                if (light.devices[d].wait) {
                    EXPECT_EQ(light.devices[d].wait->exposed_wait_ns, reference.devices[d].wait->exposed_wait_ns);
                }
                EXPECT_EQ(light.devices[d].steps.size(), reference.devices[d].steps.size());
            }
        }
    }

    fs::path dir_;
    int partialCount_ = 0;
};

}  // namespace

TEST_F(PartialMerge, OurCapturesGiveTheSingleProcessAnswer) {
    std::mt19937 rng(1601);
    for (int round = 0; round < 6; ++round) {
        const auto files = ourJob(randomJob(rng), "ours" + std::to_string(round), rng);
        expectSameAnswers(files, rng, "round " + std::to_string(round));
    }
}

TEST_F(PartialMerge, NsysExportsGiveTheSingleProcessAnswer) {
    std::mt19937 rng(1602);
    size_t sharedFiles = 0, twoGpuProcesses = 0;
    for (int round = 0; round < 5; ++round) {
        const auto files = nsysJob(randomJob(rng, 2, 8), "nsys" + std::to_string(round), rng);
        for (const auto& f : files) {
            const Capture c = loadCapture(f);
            sharedFiles += c.processes.size() > 1;
            for (const auto& p : c.processes) twoGpuProcesses += p.devices.size() > 1;
        }
        expectSameAnswers(files, rng, "nsys round " + std::to_string(round));
    }
    // The exports really held several processes per file, some with two GPUs.
    EXPECT_GT(sharedFiles, 0u);
    EXPECT_GT(twoGpuProcesses, 0u);
}

TEST_F(PartialMerge, KinetoTracesGiveTheSingleProcessAnswer) {
    std::mt19937 rng(1603);
    for (int round = 0; round < 3; ++round) {
        const auto files = kinetoJob(randomJob(rng), "kineto" + std::to_string(round), rng);
        expectSameAnswers(files, rng, "kineto round " + std::to_string(round));
    }
}

TEST_F(PartialMerge, ManyRanksWithInstancesInManyBuckets) {
    std::mt19937 rng(1604);
    auto spec = randomJob(rng, 40, 40);
    spec.layers = 3;
    spec.steps = 2;
    const auto files = ourJob(spec, "many", rng);
    AnalysisSettings s;
    const std::string want = jsonOf(analyze(loadCaptures(files), s), files);
    // 40 devices per group, a bucket of 7 slots: groups straddle buckets.
    EXPECT_EQ(streamed(files, s, 2, 7), want);
}

TEST_F(PartialMerge, OneDeviceAndTheMatchedTablesAreConsistent) {
    synth::WorkloadSpec spec;
    spec.ranks = 1;
    const auto files = synth::writeWorkload(spec, path("one.sqlite"), false);
    AnalysisSettings s;
    const Analysis reference = analyze(loadCaptures(files), s);
    EXPECT_EQ(streamed(files, s, 1, 4), jsonOf(reference, files));
    const auto json = nlohmann::json::parse(streamed(files, s, 1, 4));
    EXPECT_TRUE(json["devices"][0]["totals"]["comm_wait_ns"].is_null());
    EXPECT_TRUE(json["spread"].is_null());
}

TEST_F(PartialMerge, FieldsTheMergeDoesNotKnowPassThroughAndTheirTimesMove) {
    // A device object as a later report version might write it: a new
    // per-device field with an interval, a float and a nested list.
    const std::string device = R"({"rank":0,"host":"h","pid":1,"device":0,)"
                               R"("totals":{"window_ns":10,"comm_wait_ns":null,"last_arrivals":null,"delay_caused_ns":null},)"
                               R"("steps":[{"name":"s","start_ns":5,"end_ns":9,"comm_wait_ns":null,"exposed_wait_ns":null}],)"
                               R"("bubbles":[{"start_ns":100,"end_ns":250,"share":0.125,"tags":["a",[]]}],"empty":{}})";
    partial::DeviceCrossRank cross;
    cross.shift = 1000;
    cross.wait = WaitTransferMetrics{7, 3, 4};
    cross.stepWait = {WaitTransferMetrics{2, 1, 0}};
    cross.lastArrivals = 2;
    cross.delayCaused = 55;
    cross.clockShift = -12;
    std::istringstream in(device);
    std::ostringstream out;
    partial::rewriteDeviceJson(in, out, 4, cross, "test");
    const auto j = nlohmann::json::parse(out.str());
    EXPECT_EQ(j["bubbles"][0]["start_ns"], 1100);
    EXPECT_EQ(j["bubbles"][0]["end_ns"], 1250);
    EXPECT_EQ(j["bubbles"][0]["share"], 0.125);
    EXPECT_EQ(j["bubbles"][0]["tags"], nlohmann::json::parse(R"(["a",[]])"));
    EXPECT_EQ(j["steps"][0]["start_ns"], 1005);
    EXPECT_EQ(j["steps"][0]["comm_wait_ns"], 2);
    EXPECT_EQ(j["steps"][0]["exposed_wait_ns"], 1);
    EXPECT_EQ(j["totals"]["window_ns"], 10);
    EXPECT_EQ(j["totals"]["comm_wait_ns"], 7);
    EXPECT_EQ(j["totals"]["last_arrivals"], 2);
    EXPECT_EQ(j["totals"]["delay_caused_ns"], 55);
    EXPECT_EQ(j["clock_shift_ns"], -12);
    EXPECT_TRUE(j["empty"].is_object() && j["empty"].empty());
    // The layout is dump(2)'s at the given indent, clock_shift_ns last.
    nlohmann::ordered_json expected = nlohmann::ordered_json::parse(out.str());
    std::string pretty = expected.dump(2);
    std::string indented;
    for (char c : pretty) {
        indented += c;
        if (c == '\n') indented += "    ";
    }
    EXPECT_EQ(out.str(), indented);
    EXPECT_EQ(expected.back(), -12);
}

TEST_F(PartialMerge, BadPartialsAreOneLineNamingTheFile) {
    synth::WorkloadSpec spec;
    spec.ranks = 2;
    const auto files = synth::writeWorkload(spec, path("job"), false);
    const auto partials = writePartials({{files[0]}, {files[1]}}, {}, 1);
    const std::string good = [&] {
        std::ifstream in(partials[0], std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }();
    const auto expectRefused = [&](const std::string& text, const std::string& what) {
        const std::string bad = path("bad.partial.json");
        std::ofstream(bad, std::ios::binary | std::ios::trunc) << text;
        try {
            readPartials({bad});
            ADD_FAILURE() << what << ": accepted";
        } catch (const CaptureError& e) {
            EXPECT_EQ(e.path(), bad) << what;
            EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
        }
    };
    expectRefused(good.substr(0, good.size() - 1), "cut off");
    expectRefused(good.substr(0, good.rfind("{\"end\"")), "cut off");
    expectRefused(good.substr(0, good.size() / 2), "cut off");
    expectRefused("", "empty");
    expectRefused("{\"format\":\"overlapscope-report\"}\n", "not a partial result");
    std::string newer = good;
    newer.replace(newer.find("\"version\":1"), 11, "\"version\":9");
    expectRefused(newer, "newer");
    std::string lying = good;
    lying.replace(lying.rfind("\"devices\":"), 11, "\"devices\":7");
    expectRefused(lying, "end line");

    // Partials made with other classification settings cannot be merged.
    AnalysisSettings other;
    other.commKernelPatterns = {"gemm"};
    const auto different = writePartials({{files[1]}}, other, 1);
    try {
        readPartials({partials[0], different[0]});
        ADD_FAILURE() << "different settings merged";
    } catch (const CaptureError& e) {
        EXPECT_EQ(e.path(), different[0]);
        EXPECT_NE(std::string(e.what()).find("different analysis settings"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(partial::looksLikePartial(partials[0]));
    EXPECT_FALSE(partial::looksLikePartial(files[0]));
}

TEST_F(PartialMerge, CaptureDirectoriesSkipPartialFiles) {
    // The agent writes partials next to its captures: a directory report
    // must not read them as PyTorch traces.
    synth::WorkloadSpec spec;
    spec.ranks = 2;
    const auto files = synth::writeWorkload(spec, path("job"), false);
    writePartials({{files[0]}}, {}, 1);
    fs::copy_file(path("part0.partial.json"), path("job/rank0.partial.json"));
    EXPECT_EQ(captureFiles({path("job")}).size(), 2u);
    try {
        loadCapture(path("job/rank0.partial.json"));
        ADD_FAILURE() << "a partial read as a capture";
    } catch (const CaptureError& e) {
        EXPECT_NE(std::string(e.what()).find("merge"), std::string::npos) << e.what();
    }
}

// Issue 14 item 4 through the merge: devices whose times lie near the +-2^62
// bound (windows and compute of almost 2^63 ns each). The summary saturates
// exactly as analyze()'s does.
TEST_F(PartialMerge, TimesNearTheBoundGiveTheSingleProcessAnswer) {
    const std::string corpus = std::string(OSC_SOURCE_DIR) + "/fuzz/corpus/capture_reader/";
    std::vector<std::string> files;
    for (int copy = 0; copy < 3; ++copy) {
        const std::string to = path(std::to_string(copy) + "wide_kernels.sqlite");
        fs::copy_file(corpus + "wide_kernels.sqlite", to);
        files.push_back(to);
    }
    AnalysisSettings s;
    const Analysis reference = analyze(loadCaptures(files), s);
    EXPECT_EQ(reference.summary.window_ns, INT64_MAX);
    EXPECT_EQ(streamed(files, s, 2, 3), jsonOf(reference, files));
}

// The partial holds each device's report object on one line: the same JSON
// as the report's, only without its whitespace.
TEST_F(PartialMerge, DeviceObjectsOnOneLineHoldTheReportsOnes) {
    std::mt19937 rng(1605);
    const auto files = ourJob(randomJob(rng), "compact", rng);
    const Analysis a = analyze(loadCaptures(files));
    for (const auto& d : a.devices) {
        std::ostringstream pretty, compact;
        report::writeDeviceJson(pretty, d, 4);
        report::writeDeviceJson(compact, d, -1);
        EXPECT_EQ(compact.str().find('\n'), std::string::npos);
        EXPECT_EQ(nlohmann::ordered_json::parse(compact.str()), nlohmann::ordered_json::parse(pretty.str()));
        EXPECT_EQ(nlohmann::ordered_json::parse(compact.str()).dump(), compact.str());
    }
}
