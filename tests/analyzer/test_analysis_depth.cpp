// AnalysisDepth::StepFigures (the live agent's per-step analysis) leaves
// out the per-device findings, interference and lead-ups, and must give exactly the
// figures the full analysis gives for what it keeps: each step's window,
// overlap metrics and waiting, the operations (their step, bytes, times) and
// the matching across devices. Random synthetic jobs (data parallel with
// arrival skew, pipelines, all-to-all), both --align settings, compared with
// the full analysis of the same capture.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/synth/pattern_synth.h"
#include "analyzer/synth/workload_synth.h"
#include "tests/analyzer/random_job.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <tuple>

namespace osc {
namespace {

auto tied(const OverlapMetrics& m) {
    return std::tie(m.window_ns, m.compute_ns, m.comm_ns, m.overlap_ns, m.exposed_comm_ns, m.busy_ns, m.idle_ns,
                    m.overlap_ratio, m.achieved_speedup, m.ideal_speedup);
}

std::optional<std::tuple<TimeNs, TimeNs, TimeNs, int>> tied(const std::optional<WaitTransferMetrics>& w) {
    if (!w) return std::nullopt;
    return std::tuple(w->comm_wait_ns, w->exposed_wait_ns, w->exposed_transfer_ns, w->kernels_without_peer);
}

// Returns how many steps had a wait figure, so the test knows it compared some.
int expectSameStepFigures(const Capture& capture, const AnalysisSettings& settings, const std::string& what) {
    const Analysis full = analyze(capture, settings, AnalysisDepth::Full);
    const Analysis live = analyze(capture, settings, AnalysisDepth::StepFigures);
    int waits = 0;
    EXPECT_EQ(live.devices.size(), full.devices.size()) << what;
    if (live.devices.size() != full.devices.size()) return 0;
    for (size_t d = 0; d < full.devices.size(); ++d) {
        const DeviceAnalysis &f = full.devices[d], &l = live.devices[d];
        const std::string at = what + " device " + std::to_string(d);
        EXPECT_EQ(l.steps.size(), f.steps.size()) << at;
        EXPECT_EQ(l.collectives.size(), f.collectives.size()) << at;
        if (l.steps.size() != f.steps.size() || l.collectives.size() != f.collectives.size()) continue;
        for (size_t s = 0; s < f.steps.size(); ++s) {
            EXPECT_EQ(l.steps[s].name, f.steps[s].name) << at;
            EXPECT_EQ(l.steps[s].start_ns, f.steps[s].start_ns) << at;
            EXPECT_EQ(l.steps[s].end_ns, f.steps[s].end_ns) << at;
            EXPECT_EQ(tied(l.steps[s].metrics), tied(f.steps[s].metrics)) << at << " step " << s;
            EXPECT_EQ(tied(l.steps[s].wait), tied(f.steps[s].wait)) << at << " step " << s;
            waits += f.steps[s].wait.has_value();
        }
        for (size_t c = 0; c < f.collectives.size(); ++c) {
            const CollectiveInstance &x = l.collectives[c], &y = f.collectives[c];
            EXPECT_EQ(std::tie(x.step, x.bytes, x.start_ns, x.end_ns, x.collective, x.commSize),
                      std::tie(y.step, y.bytes, y.start_ns, y.end_ns, y.collective, y.commSize))
                << at << " operation " << c;
        }
    }
    EXPECT_EQ(live.matched.size(), full.matched.size()) << what;
    for (size_t m = 0; m < std::min(live.matched.size(), full.matched.size()); ++m)
        EXPECT_EQ(live.matched[m].instances, full.matched[m].instances) << what << " match " << m;
    // What it leaves out, it leaves out: the interference table.
    for (const DeviceAnalysis& d : live.devices) EXPECT_TRUE(d.signatures.empty()) << what;
    return waits;
}

TEST(AnalysisDepth, StepFiguresAreTheFullAnalysisFigures) {
    std::mt19937 rng(41);
    int waits = 0;
    for (int round = 0; round < 6; ++round) {
        AnalysisSettings settings;
        settings.alignCollectives = round % 2 == 1;
        const std::string r = " round " + std::to_string(round);
        waits +=
            expectSameStepFigures(synth::synthesizeWorkload(test::randomJob(rng, 1, 5)), settings, "data parallel" + r);
        waits += expectSameStepFigures(synth::synthesizePipeline(test::randomPipeline(rng)), settings, "pipeline" + r);
        waits +=
            expectSameStepFigures(synth::synthesizeAllToAll(test::randomAllToAll(rng)), settings, "all-to-all" + r);
    }
    EXPECT_GT(waits, 0);
}

}  // namespace
}  // namespace osc
