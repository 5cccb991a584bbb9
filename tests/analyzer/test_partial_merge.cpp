// Issue 16: a job analysed file by file on several threads (streaming), and
// as partial results merged later (map-reduce), must give exactly the report
// of analyze(loadCaptures(files)): the same JSON bytes, the same text and
// Markdown, the same `check` outcomes and `diff` rows. Random multi-rank jobs
// in our capture format, as Nsight Systems exports (several processes per
// file, some with two GPUs, no NCCL plugin rows) and as PyTorch profiler
// traces; with and without --align collectives; split into partials at
// random; with the matched instances forced out of memory. Besides data
// parallel jobs, 1F1B pipelines and all-to-all jobs (issue 18: point-to-point
// pairs and their waiting, the pipeline bubble over all stages, all-to-all
// balance and the findings of both) in the three formats.
#include "analyzer/capture/capture_error.h"
#include "analyzer/crossrank/analyze.h"
#include "analyzer/export/chrome_export.h"
#include "analyzer/job/file_workers.h"
#include "analyzer/load/input_kind.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/partial/device_json.h"
#include "analyzer/partial/merge.h"
#include "analyzer/partial/partial_format.h"
#include "analyzer/report/check.h"
#include "analyzer/report/diff.h"
#include "analyzer/report/report_json.h"
#include "analyzer/report/report_markdown.h"
#include "analyzer/report/report_text.h"
#include "analyzer/synth/pattern_synth.h"
#include "analyzer/synth/workload_synth.h"
#include "tests/analyzer/nsys_shaped.h"
#include "tests/analyzer/random_job.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

using namespace osc;
using osc::test::randomAllToAll;
using osc::test::randomJob;
using osc::test::randomPipeline;
namespace fs = std::filesystem;

namespace {

// All-to-all kernels named as such (ncclDevKernel_AllToAll) instead of
// grouped SendRecv ones: matched by order like any collective.
void renameSendRecvToAllToAll(const std::string& file) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db,
                           "UPDATE StringIds SET value = replace(value, 'ncclDevKernel_SendRecv', "
                           "'ncclDevKernel_AllToAll')",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
}

void moveSessionStart(const std::string& file, int64_t byNs) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    const std::string sql =
        "UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = utcEpochNs + " + std::to_string(byNs);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
}

// Every GPU of the file reports the UUID `uuid`: files given the same one
// are ranks sharing one GPU.
void setGpuUuid(const std::string& file, const std::string& uuid) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    const std::string sql = "UPDATE TARGET_INFO_GPU SET uuid = '" + uuid + "'";
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
    std::string path(const std::string& name) const { return dir_ / name; }

    // Our captures, one per rank, each with its own session start.
    std::vector<std::string> ourJob(const synth::WorkloadSpec& spec, const std::string& name, std::mt19937& rng) {
        return shiftedStarts(synth::writeWorkload(spec, path(name), false), rng);
    }
    std::vector<std::string> ourJob(const synth::PipelineSpec& spec, const std::string& name, std::mt19937& rng) {
        return shiftedStarts(synth::writePipeline(spec, path(name), false), rng);
    }
    std::vector<std::string> ourJob(const synth::AllToAllSpec& spec, const std::string& name, std::mt19937& rng) {
        return shiftedStarts(synth::writeAllToAll(spec, path(name), false), rng);
    }
    static std::vector<std::string> shiftedStarts(std::vector<std::string> files, std::mt19937& rng) {
        for (const auto& f : files) moveSessionStart(f, std::uniform_int_distribution<int64_t>(0, 400'000)(rng));
        return files;
    }

    // Nsight Systems exports of 1 to 3 processes each, some folding two ranks
    // into one process with two GPUs.
    std::vector<std::string> nsysJob(const synth::WorkloadSpec& spec, const std::string& name, std::mt19937& rng) {
        return nsysFiles(synth::synthesizeWorkload(spec), name, rng);
    }
    std::vector<std::string> nsysFiles(const Capture& c, const std::string& name, std::mt19937& rng) {
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
    template <typename Spec>
    std::vector<std::string> kinetoJob(const Spec& spec, const std::string& name, std::mt19937& rng) {
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

    // PyTorch profiler traces, one per rank, cut from one export of the
    // whole job: like torch.profiler's own per-rank files, each names the
    // global ranks of its process groups, which the export of one rank's
    // capture alone cannot (it leaves the peers out, as kinetoJob's do).
    template <typename Spec>
    std::vector<std::string> kinetoRankTraces(const Spec& spec, const std::string& name, std::mt19937& rng) {
        std::ostringstream whole;
        writeChromeTrace(loadCaptures(ourJob(spec, name + "_sqlite", rng)), whole);
        const auto trace = nlohmann::ordered_json::parse(whole.str());
        fs::create_directories(path(name));
        std::vector<std::string> files;
        for (const auto& process : trace.at("overlapscopeProcesses")) {
            nlohmann::ordered_json one = nlohmann::ordered_json::object();
            for (const auto& [key, value] : trace.items()) {
                if (key == "traceEvents") {
                    one[key] = nlohmann::ordered_json::array();
                    for (const auto& e : value)
                        if (e.at("pid") == process.at("tracePid")) one[key].push_back(e);
                } else if (key == "overlapscopeProcesses") {
                    one[key] = nlohmann::ordered_json::array({process});
                } else {
                    one[key] = value;
                }
            }
            const std::string out = path(name + "/rank" + process.at("rank").dump() + ".json");
            std::ofstream(out) << one.dump();
            files.push_back(out);
        }
        return files;
    }

    std::string streamed(const std::vector<std::string>& files, const AnalysisSettings& s, int jobs, size_t inMemory) {
        job::FileWorkerOptions po;
        po.jobs = jobs;
        const job::AnalyzedFiles analyzed(files, s, po);
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
            job::FileWorkerOptions po;
            po.jobs = jobs;
            const job::AnalyzedFiles analyzed(g, s, po);
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
    void expectSameAnswers(const std::vector<std::string>& files, std::mt19937& rng, const std::string& what,
                           const AnalysisSettings& settings = {}) {
        for (bool align : {false, true}) {
            AnalysisSettings s = settings;
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
            seen_.add(reference);

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
                    EXPECT_EQ(light.devices[d].wait->kernels_without_peer,
                              reference.devices[d].wait->kernels_without_peer);
                    // Unknown waiting has no value to compare (docs/design.md section 5).
                    if (reference.devices[d].wait->known()) {
                        EXPECT_EQ(light.devices[d].wait->exposed_wait_ns, reference.devices[d].wait->exposed_wait_ns);
                    }
                }
                EXPECT_EQ(light.devices[d].steps.size(), reference.devices[d].steps.size());
            }
            // `check` and `diff` on partials read the light analysis.
            for (const Analysis* fromParts : {&a, &light}) {
                EXPECT_EQ(checksOf(*fromParts), checksOf(reference)) << label;
                EXPECT_EQ(report::formatDiffText(report::diffAnalyses(reference, *fromParts), 0.0),
                          report::formatDiffText(report::diffAnalyses(reference, reference), 0.0))
                    << label;
            }
        }
    }

    // Every threshold, at values some devices pass and others fail.
    static std::string checksOf(const Analysis& a) {
        report::Thresholds t;
        t.minOverlapRatio = 0.3;
        t.maxExposedCommShare = 0.2;
        t.maxComputeSlowdown = 1.05;
        t.maxExposedTransferMs = 0.1;
        t.maxDelayCausedMs = 0.05;
        t.maxBubbleShare = 0.3;
        t.maxAllToAllImbalance = 1.5;
        t.minBusBwFraction = 0.05;
        t.maxStragglerDelayMs = 0.2;
        std::string out;
        for (const auto& o : report::runChecks(a, t))
            out += o.scope + " | " + o.name + " | " + (o.passed ? "pass" : "FAIL") + " | " + o.message + "\n";
        return out;
    }

    // What the reference jobs held, so that a test knows its rounds exercised the patterns.
    struct Seen {
        size_t p2p = 0, exchanges = 0, pipelineSteps = 0, alltoallSteps = 0, bubbleFindings = 0, alltoallFindings = 0,
               withoutPeers = 0, keyedAllToAll = 0, lastArrivals = 0, stragglers = 0, hostBound = 0, linkFindings = 0,
               busbwMeasured = 0, sharedGpuFindings = 0;
        void add(const Analysis& a) {
            p2p += a.p2p.size();
            pipelineSteps += a.pipeline.size();
            alltoallSteps += a.alltoall.size();
            for (const auto& m : a.matched) {
                exchanges += m.pointToPoint;
                keyedAllToAll += !m.pointToPoint && m.collective == "AllToAll";
            }
            for (const auto& w : a.warnings) withoutPeers += w.find("carry no peer") != std::string::npos;
            const auto count = [&](const std::vector<Finding>& findings) {
                for (const auto& f : findings) {
                    bubbleFindings += f.kind == FindingKind::PipelineBubble;
                    alltoallFindings += f.kind == FindingKind::AllToAllImbalance;
                    linkFindings += f.kind == FindingKind::ScheduleLimit || f.kind == FindingKind::BandwidthLimit;
                    sharedGpuFindings += f.kind == FindingKind::SharedGpu;
                }
            };
            for (const auto& d : a.devices) {
                count(d.findings);
                for (const auto& st : d.steps) count(st.bottleneck.findings);
                lastArrivals += static_cast<size_t>(d.last_arrivals.value_or(0));
                stragglers += d.straggler.has_value();
                hostBound += d.straggler && !d.straggler->worst.host.empty() &&
                             d.straggler->worst.host[0].name == "DataLoader.__next__";
                busbwMeasured += d.busbw && d.busbw->median_busbw_fraction;
            }
        }
    };

    const testsupport::TempDir dir_;
    int partialCount_ = 0;
    Seen seen_;
};

}  // namespace

TEST_F(PartialMerge, OurCapturesGiveTheSingleProcessAnswer) {
    std::mt19937 rng(1601);
    for (int round = 0; round < 6; ++round) {
        const auto files = ourJob(randomJob(rng), "ours" + std::to_string(round), rng);
        // Some rounds run their first two ranks on one GPU (docs/design.md 4d).
        if (round % 2 == 1 && files.size() >= 2)
            for (size_t f = 0; f < 2; ++f) setGpuUuid(files[f], "GPU-shared-" + std::to_string(round));
        expectSameAnswers(files, rng, "round " + std::to_string(round));
    }
    // docs/design.md 4d's fields really took values.
    EXPECT_GT(seen_.stragglers, 0u);
    EXPECT_GT(seen_.hostBound, 0u);
    EXPECT_GT(seen_.linkFindings, 0u);
    EXPECT_GT(seen_.busbwMeasured, 0u);
    EXPECT_GT(seen_.sharedGpuFindings, 0u);
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

// Issue 18's cross-rank metrics through the merge: pipelines (sends paired
// with receives and their waiting, the bubble over all stages, its
// findings) and all-to-all jobs (exchanges of grouped sends and receives,
// bytes per rank pair, imbalance, the overloaded rank), in our format.
TEST_F(PartialMerge, PipelinesAndAllToAllGiveTheSingleProcessAnswer) {
    std::mt19937 rng(1606);
    for (int round = 0; round < 4; ++round) {
        const auto spec = randomPipeline(rng);
        AnalysisSettings s;
        if (round == 3) s.pipelineStages = spec.stages + 1;  // the theory from --pipeline-stages
        expectSameAnswers(ourJob(spec, "pp" + std::to_string(round), rng), rng,
                          "pipeline round " + std::to_string(round), s);
    }
    for (int round = 0; round < 4; ++round) {
        auto spec = randomAllToAll(rng);
        if (round < 2) spec.imbalance = 3.0;  // well past the finding's 1.25x
        const auto files = ourJob(spec, "a2a" + std::to_string(round), rng);
        // Every other round, kernels named AllToAll (keyed groups, with the rows' bytes).
        if (round % 2)
            for (const auto& f : files) renameSendRecvToAllToAll(f);
        expectSameAnswers(files, rng, "alltoall round " + std::to_string(round));
    }
    // The rounds held what they are meant to test.
    EXPECT_GT(seen_.p2p, 0u);
    EXPECT_GT(seen_.exchanges, 0u);
    EXPECT_GT(seen_.keyedAllToAll, 0u);
    EXPECT_GT(seen_.pipelineSteps, 0u);
    EXPECT_GT(seen_.alltoallSteps, 0u);
    EXPECT_GT(seen_.bubbleFindings, 0u);
    EXPECT_GT(seen_.alltoallFindings, 0u);
    EXPECT_GT(seen_.lastArrivals, 0u);
}

// The same jobs as Nsight Systems exports (no plugin rows: SendRecv kernels
// without peers and their warning, the bubble from the NVTX micro-batches,
// AllToAll kernels matched by order) and as PyTorch traces: per-rank traces
// with the collective arguments (peers and bytes), and exports of single
// ranks' captures, whose sends and receives name no peer.
TEST_F(PartialMerge, PatternsInNsysExportsAndKinetoTracesGiveTheSingleProcessAnswer) {
    std::mt19937 rng(1607);
    for (int round = 0; round < 2; ++round) {
        const std::string r = std::to_string(round);
        expectSameAnswers(nsysFiles(synth::synthesizePipeline(randomPipeline(rng)), "nsys_pp" + r, rng), rng,
                          "nsys pipeline round " + r);
        auto a2a = nsysFiles(synth::synthesizeAllToAll(randomAllToAll(rng)), "nsys_a2a" + r, rng);
        for (const auto& f : a2a) renameSendRecvToAllToAll(f);
        expectSameAnswers(a2a, rng, "nsys alltoall round " + r);
        expectSameAnswers(kinetoRankTraces(randomPipeline(rng), "kineto_pp" + r, rng), rng,
                          "kineto pipeline round " + r);
        auto spec = randomAllToAll(rng);
        spec.imbalance = 3.0;  // its finding, from the traces' split sizes
        expectSameAnswers(kinetoRankTraces(spec, "kineto_a2a" + r, rng), rng, "kineto alltoall round " + r);
    }
    const Seen ranked = seen_;
    expectSameAnswers(kinetoJob(randomPipeline(rng), "kineto_pp_alone", rng), rng, "kineto pipeline, ranks alone");
    EXPECT_GT(seen_.withoutPeers, ranked.withoutPeers);
    EXPECT_GT(ranked.withoutPeers, 0u);
    EXPECT_GT(ranked.keyedAllToAll, 0u);
    EXPECT_GT(ranked.p2p, 0u);
    EXPECT_GT(ranked.exchanges, 0u);
    EXPECT_GT(ranked.pipelineSteps, 0u);
    EXPECT_GT(ranked.alltoallSteps, 0u);
    EXPECT_GT(ranked.alltoallFindings, 0u);
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
    const std::string device =
        R"({"rank":0,"host":"h","pid":1,"device":0,)"
        R"("totals":{"window_ns":10,"comm_wait_ns":null,"last_arrivals":null,"delay_caused_ns":null},)"
        R"("steps":[{"name":"s","start_ns":5,"end_ns":9,"comm_wait_ns":null,"exposed_wait_ns":null}],)"
        R"("bubbles":[{"start_ns":100,"end_ns":250,"share":0.125,"tags":["a",[]]}],"empty":{}})";
    crossrank::DeviceCrossRank cross;
    cross.shift = 1000;
    cross.wait = WaitTransferMetrics{7, 3, 4};
    cross.stepWait = {WaitTransferMetrics{2, 1, 0}};
    cross.lastArrivals = 2;
    cross.delayCaused = 55;
    cross.clockShift = -12;
    std::istringstream in(device);
    std::ostringstream out;
    partial::rewriteDeviceJson(in, out, 4, cross, {}, "test");
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
    const std::string version = "\"version\":" + std::to_string(partial::kPartialVersion);
    ASSERT_NE(good.find(version), std::string::npos);
    std::string newer = good;
    newer.replace(newer.find(version), version.size(), "\"version\":" + std::to_string(partial::kPartialVersion + 1));
    expectRefused(newer, "newer");
    std::string older = good;
    older.replace(older.find(version), version.size(), "\"version\":" + std::to_string(partial::kPartialVersion - 1));
    expectRefused(older, "older");
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
    EXPECT_TRUE(sniff(partials[0]) == InputKind::PartialResult);
    EXPECT_FALSE(sniff(files[0]) == InputKind::PartialResult);
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
        // Three hosts: the same process three times is refused (issue 29).
        sqlite3* db = nullptr;
        ASSERT_EQ(sqlite3_open(to.c_str(), &db), SQLITE_OK);
        const std::string rename =
            "UPDATE OVERLAPSCOPE_META SET value = 'host-" + std::to_string(copy) + "' WHERE name = 'host'";
        EXPECT_EQ(sqlite3_exec(db, rename.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
        sqlite3_close(db);
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
