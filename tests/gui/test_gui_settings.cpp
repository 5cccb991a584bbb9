// Analysis settings in the window (issue 40 item 6): the options as JSON
// kept with a file's layout, the analyzer's own refusal of a bad regex, what
// each setting found (and why a feature found nothing), and the window
// re-analysing a capture on Apply, keeping the view, and restoring the
// settings when the file opens again. OSC_GUI_TEST_SAVE=DIR keeps the window
// and the dialog as PNGs there.
//
// The synthetic pipeline (analyzer/synth/README.md, "The 1F1B pipeline"): 4
// stages, 8 micro-batches, 3 steps, micro-batch ranges named "fwd mb N" /
// "bwd mb N" on every stage: with the default pattern every step is a
// pipeline step of 4 stages and 8 micro-batches.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/synth/pattern_synth.h"
#include "gui/model/analysis_options.h"
#include "gui/widgets/analysis_settings_dialog.h"
#include "gui/widgets/main_window.h"
#include "gui/widgets/metric_tables.h"
#include "gui/widgets/timeline_widget.h"

#include <gtest/gtest.h>
#include <QApplication>
#include <QFileInfo>
#include <QSettings>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <cstdlib>
#include <set>

using namespace osc;
using namespace osc::gui;

namespace {

constexpr const char* kNoMatch = R"(^nothing (f)(\d+)$)";

synth::PipelineSpec pipeline() { return {}; }

}  // namespace

TEST(AnalysisOptions, JsonKeepsWhatDiffersFromTheDefaults) {
    AnalysisSettings s;
    EXPECT_EQ(analysisOptionsJson(s), "{}");
    s.stepPattern = R"(^iter \d+$)";
    s.commKernelPatterns = {"my_allreduce", "deep_ep"};
    s.pipelineStages = 4;
    s.peakBusBwGbps = 100;
    s.commCopies = true;
    s.alignCollectives = true;  // the View menu's, not a file's
    const std::string json = analysisOptionsJson(s);
    EXPECT_EQ(json.find("align"), std::string::npos) << json;
    AnalysisSettings back;
    ASSERT_TRUE(applyAnalysisOptionsJson(json, back));
    EXPECT_EQ(back.stepPattern, s.stepPattern);
    EXPECT_EQ(back.microbatchPattern, AnalysisSettings().microbatchPattern);
    EXPECT_EQ(back.commKernelPatterns, s.commKernelPatterns);
    EXPECT_EQ(back.pipelineStages, 4);
    EXPECT_EQ(back.peakBusBwGbps, 100.0);
    EXPECT_TRUE(back.commCopies);
    EXPECT_FALSE(back.alignCollectives);
    // A damaged setting changes nothing.
    for (const char* bad : {"not json", "[]", R"({"pipeline_stages": "four"})", R"({"peak_busbw_gbps": -5})"}) {
        AnalysisSettings untouched;
        EXPECT_FALSE(applyAnalysisOptionsJson(bad, untouched)) << bad;
        EXPECT_EQ(analysisOptionsJson(untouched), "{}") << bad;
    }
}

TEST(AnalysisOptions, ABadPatternIsRefusedAsTheCommandLineRefusesIt) {
    AnalysisSettings s;
    EXPECT_FALSE(analysisOptionsError(s).has_value());
    s.stepPattern = "(";
    ASSERT_TRUE(analysisOptionsError(s));
    EXPECT_EQ(analysisOptionsError(s)->rfind("invalid --step-pattern pattern '('", 0), 0u) << *analysisOptionsError(s);
    s = {};
    s.commKernelPatterns = {"ok", "["};
    ASSERT_TRUE(analysisOptionsError(s));
    EXPECT_NE(analysisOptionsError(s)->find("--comm-kernel"), std::string::npos) << *analysisOptionsError(s);
    s = {};
    s.microbatchPattern = "fwd";  // no groups: no phase, no number
    EXPECT_TRUE(analysisOptionsError(s));
    s = {};
    s.peakBusBwGbps = 0;
    EXPECT_TRUE(analysisOptionsError(s));
}

TEST(AnalysisOptions, WhatThePipelineFoundAndWhyNot) {
    const Capture c = synth::synthesizePipeline(pipeline());
    const AnalysisFindings found = analysisFindings(&c, analyze(c));
    EXPECT_EQ(found.microbatches, "pipeline bubbles in 3 steps (the first: 4 stages, 8 micro-batches)");
    EXPECT_EQ(found.stages, "from the capture: 4 stages");
    EXPECT_EQ(found.steps, "12 steps on 4 devices");
    EXPECT_TRUE(found.stepsNote.empty());

    AnalysisSettings s;
    s.microbatchPattern = kNoMatch;
    const AnalysisFindings none = analysisFindings(&c, analyze(c, s));
    EXPECT_EQ(none.microbatches.rfind("no pipeline bubbles: no NVTX or profiler range matches the micro-batch "
                                      "pattern",
                                      0),
              0u)
        << none.microbatches;
    // The user changed the pattern: the Steps panel says why there are no bubbles.
    EXPECT_EQ(none.stepsNote.rfind("No pipeline bubbles: no NVTX or profiler range matches", 0), 0u) << none.stepsNote;

    // No step: said, and said again under the Steps table.
    s = {};
    s.stepPattern = "^nothing$";
    const AnalysisFindings noSteps = analysisFindings(&c, analyze(c, s));
    EXPECT_EQ(noSteps.steps.rfind("no NVTX or profiler range matches the step pattern", 0), 0u) << noSteps.steps;
    EXPECT_EQ(noSteps.stepsNote.rfind("No steps: ", 0), 0u) << noSteps.stepsNote;
}

TEST(AnalysisOptions, ExtraCommunicationKernelsSayWhatTheyMatched) {
    const Capture c = synth::synthesizePipeline(pipeline());
    AnalysisSettings s;
    s.commKernelPatterns = {"no_such_kernel"};
    EXPECT_EQ(analysisFindings(&c, analyze(c, s)).commKernels, "'no_such_kernel' matches no kernel");
    // Every kernel name the capture has, counted by hand.
    std::set<uint32_t> names;
    size_t kernels = 0;
    for (const Process& p : c.processes)
        for (const Device& d : p.devices) {
            names.insert(d.kernels.name.begin(), d.kernels.name.end());
            kernels += d.kernels.size();
        }
    s.commKernelPatterns = {"."};
    EXPECT_EQ(
        analysisFindings(&c, analyze(c, s)).commKernels,
        "'.' matches " + std::to_string(names.size()) + " kernel names (" + std::to_string(kernels) + " kernels)");
}

TEST(SettingsWindow, ApplyReanalysesKeepsTheViewAndTheFileKeepsTheSettings) {
    QTemporaryDir dir;
    const QString path = dir.filePath("pp");
    synth::writePipeline(pipeline(), path.toStdString(), false);
    {
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        w.openCapture(path);
        QTRY_VERIFY_WITH_TIMEOUT(w.hasTimeline() && w.shown().analysis, 20000);
        EXPECT_FALSE(w.shown().analysis->pipeline.empty());
        EXPECT_TRUE(w.panelTable("steps")->isVisible());  // under it, the line that says what was not found
        EXPECT_TRUE(w.stepsNote().isEmpty());
        const ViewRange view{2'000'000, 3'000'000};
        w.timeline()->setViewRange(view);

        AnalysisSettingsDialog* dialog = w.showAnalysisSettings();
        AnalysisSettings s = dialog->edited();
        EXPECT_EQ(s.microbatchPattern, AnalysisSettings().microbatchPattern);
        // A bad pattern: refused, nothing re-analysed.
        dialog->showFor(
            [] {
                AnalysisSettings bad;
                bad.stepPattern = "(";
                return bad;
            }(),
            std::nullopt);
        EXPECT_FALSE(dialog->error().isEmpty());
        EXPECT_FALSE(dialog->apply());

        s.microbatchPattern = kNoMatch;
        w.applyAnalysisSettings(s);
        QTRY_VERIFY_WITH_TIMEOUT(w.shown().analysis && w.shown().analysis->settings.microbatchPattern == kNoMatch,
                                 20000);
        EXPECT_TRUE(w.shown().analysis->pipeline.empty());
        EXPECT_TRUE(w.stepsNote().startsWith("No pipeline bubbles: no NVTX or profiler range matches"))
            << w.stepsNote().toStdString();
        EXPECT_EQ(w.timeline()->viewRange(), view);
        EXPECT_TRUE(w.panelTable("steps")->isColumnHidden(StepTableModel::Bubble));
        if (const char* out = std::getenv("OSC_GUI_TEST_SAVE")) {
            w.grab().save(QString(out) + "/settings-window.png");
            w.showAnalysisSettings()->grab().save(QString(out) + "/settings-dialog.png");
        }
    }
    // Opened again: the file's settings come back; another file starts from the defaults.
    MainWindow again;
    again.openCapture(path);
    QTRY_VERIFY_WITH_TIMEOUT(again.hasTimeline() && again.shown().analysis, 20000);
    EXPECT_EQ(again.analysisSettings().microbatchPattern, kNoMatch);
    EXPECT_TRUE(again.shown().analysis->pipeline.empty());
    const QString other = dir.filePath("pp2");
    synth::writePipeline(pipeline(), other.toStdString(), false);
    again.openCapture(other);
    QTRY_VERIFY_WITH_TIMEOUT(again.shown().path == QFileInfo(other).absoluteFilePath(), 20000);
    EXPECT_EQ(again.analysisSettings().microbatchPattern, AnalysisSettings().microbatchPattern);
    EXPECT_FALSE(again.shown().analysis->pipeline.empty());
}
