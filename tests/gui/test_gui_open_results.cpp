// Opening files that hold results but no trace (QT_QPA_PLATFORM=offscreen):
// partial results and saved reports made from examples/ddp_4ranks open
// through MainWindow::openCapture, as the command line, File > Open and drag
// and drop do, and their panels must read exactly as the capture's own, with
// no timeline and its actions disabled; bad files give one message naming
// them; --screenshot writes both kinds.
#include "analyzer/capture/capture_error.h"
#include "analyzer/crossrank/analyze.h"
#include "analyzer/job/file_workers.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/report/report_json.h"
#include "gui/widgets/analysis_loader.h"
#include "gui/widgets/analysis_only_view.h"
#include "gui/widgets/device_table.h"
#include "gui/widgets/heat_map_widget.h"
#include "gui/widgets/main_window.h"
#include "gui/widgets/metric_tables.h"
#include "gui/widgets/screenshot.h"
#include "gui/widgets/statistics_panel.h"
#include "gui/widgets/timeline_widget.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <QAction>
#include <QApplication>
#include <QImage>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

using namespace osc;
using namespace osc::gui;

namespace {

const std::string kJob = std::string(OSC_TEST_EXAMPLES) + "/ddp_4ranks";

std::vector<std::string> rankFiles() { return captureFiles({kJob}); }

std::string readAll(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeAll(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// `overlapscope report --format json -o PATH` of the whole job.
std::string writeReport(const testsupport::TempDir& dir, const std::string& name = "job.report.json") {
    const auto files = rankFiles();
    report::ReportOptions options;
    options.inputs = files;
    const std::string path = dir / name;
    std::ofstream out(path, std::ios::binary);
    report::writeJsonReport(out, analyze(loadCaptures(files)), options);
    return path;
}

// `overlapscope report --partial -o PATH FILES...`.
std::string writePartial(const std::string& path, const std::vector<std::string>& files) {
    const job::AnalyzedFiles analyzed(files, {});
    std::ofstream out(path, std::ios::binary);
    analyzed.writePartial(out, files, "overlapscope test");
    return path;
}

// Two partials of two ranks each in a directory of their own: one job.
std::string writePartialDirectory(const testsupport::TempDir& dir) {
    const auto files = rankFiles();
    const std::string parts = dir / "parts";
    std::filesystem::create_directory(parts);
    writePartial(parts + "/a.partial.json", {files[0], files[1]});
    writePartial(parts + "/b.partial.json", {files[2], files[3]});
    return parts;
}

// Opens `path` as the app does and waits for it to be shown.
void open(MainWindow& win, const std::string& path) {
    QSignalSpy loaded(win.loader(), &CaptureLoader::loaded);
    QSignalSpy failed(win.loader(), &CaptureLoader::failed);
    win.openCapture(QString::fromStdString(path));
    ASSERT_TRUE(loaded.wait(60000)) << path << ": "
                                    << (failed.isEmpty() ? "" : failed.at(0).at(0).toString().toStdString());
    win.waitForPanels();
}

// Every row of a table as its cells' text, in the order shown.
std::vector<std::string> rowsOf(AsyncSortedTableModel& model) {
    model.waitForSort();
    std::vector<std::string> rows;
    for (int r = 0; r < model.rowCount(); ++r) {
        std::string row;
        for (int c = 0; c < model.columnCount(); ++c) row += model.index(r, c).data().toString().toStdString() + " | ";
        rows.push_back(row);
    }
    return rows;
}

// The failure message of opening `path`.
QString failureOf(MainWindow& win, const std::string& path) {
    QSignalSpy failed(win.loader(), &CaptureLoader::failed);
    win.openCapture(QString::fromStdString(path));
    if (!failed.wait(30000) && failed.isEmpty()) return {};
    return failed.at(0).at(0).toString();
}

struct CaptureWindow {
    MainWindow win;
    CaptureWindow() { open(win, kJob); }
};

// The capture's own window, opened once for every comparison.
CaptureWindow& captureWindow() {
    static CaptureWindow* w = new CaptureWindow;  // lives until exit, as the QApplication does
    return *w;
}

void expectSamePanelsAsTheCapture(MainWindow& win, const std::string& what) {
    MainWindow& ref = captureWindow().win;
    ASSERT_TRUE(ref.hasTimeline());
    const auto wantSteps = rowsOf(*ref.stepModel()), gotSteps = rowsOf(*win.stepModel());
    ASSERT_EQ(gotSteps.size(), 20u) << what;  // 4 ranks × 5 steps
    EXPECT_EQ(gotSteps, wantSteps) << what;
    // Spelled out for one row: the overlap ratio is the analyzer's.
    const auto stepOf = [](MainWindow& w, int row) {
        return w.stepModel()->index(row, StepTableModel::OverlapRatio).data().toString().toStdString();
    };
    EXPECT_EQ(stepOf(win, 0), stepOf(ref, 0)) << what;
    EXPECT_NE(stepOf(win, 0), "–") << what;
    const auto wantColls = rowsOf(*ref.collectiveModel()), gotColls = rowsOf(*win.collectiveModel());
    ASSERT_EQ(gotColls.size(), 60u) << what;  // 4 ranks × 5 steps × 3 buckets
    EXPECT_EQ(gotColls, wantColls) << what;
    // The bottleneck buckets are flagged alike.
    for (int r = 0; r < win.collectiveModel()->rowCount(); ++r)
        EXPECT_EQ(win.collectiveModel()->isBottleneck(r), ref.collectiveModel()->isBottleneck(r))
            << what << " row " << r;
    // The device table against the capture's own analysis.
    DeviceTableModel wantDevices;
    wantDevices.setAnalysis(std::shared_ptr<const Analysis>(ref.timeline()->analysis(), [](const Analysis*) {}));
    const auto gotDevices = rowsOf(*win.analysisOnlyView()->deviceModel());
    ASSERT_EQ(gotDevices.size(), 4u) << what;
    EXPECT_EQ(gotDevices, rowsOf(wantDevices)) << what;
}

void expectNoTimeline(MainWindow& win, const std::string& what) {
    EXPECT_FALSE(win.hasTimeline()) << what;
    EXPECT_EQ(win.timeline()->model(), nullptr) << what;
    EXPECT_FALSE(win.timeline()->isVisibleTo(&win)) << what;
    EXPECT_TRUE(win.analysisOnlyView()->isVisibleTo(&win)) << what;
    QStringList names;
    for (QAction* a : win.timelineActions()) {
        names << a->text();
        EXPECT_FALSE(a->isEnabled()) << what << ": " << a->text().toStdString();
    }
    for (const char* needed : {"Fit &all", "&Back", "&Find…", "&Follow live capture", "Collapse all devices",
                               "CPU &lanes (API calls, operators)"})
        EXPECT_TRUE(names.contains(needed)) << what << ": " << needed << " is not among the timeline actions";
    // What those actions would reach must not crash without a model either.
    win.find("AllReduce");
    EXPECT_EQ(win.findResult().count, 0u) << what;
    win.jumpToRow(win.stepModel()->index(0, StepTableModel::Step));
    win.jumpToRow(win.collectiveModel()->index(0, CollectiveTableModel::Name));
    win.timeline()->fitAll();
    EXPECT_EQ(win.detailsText(), "") << what;
    EXPECT_TRUE(win.statistics()->status().contains("holds none"))
        << what << ": " << win.statistics()->status().toStdString();
    // The heat map has the job's steps, which need no timeline.
    EXPECT_EQ(win.heatMap()->view()->heatMap().rows(), 4) << what;
    EXPECT_EQ(win.heatMap()->view()->heatMap().columns, 5) << what;
}

}  // namespace

TEST(OpenResults, TheKindOfAFileIsReadFromItsContent) {
    const testsupport::TempDir dir;
    const auto files = rankFiles();
    const std::string report = writeReport(dir);
    const std::string parts = writePartialDirectory(dir);
    // A report saved under any name, a partial without its suffix.
    std::filesystem::copy_file(report, dir / "renamed.txt");
    std::filesystem::copy_file(parts + "/a.partial.json", dir / "partial-renamed.json");
    writeAll(dir / "kineto.json", R"({"traceEvents": [], "format": "overlapscope-report"})");
    writeAll(dir / "other.json", R"({"format": "something-else"})");
    // Captures with partials beside them (as an agent leaves them) stay a capture directory.
    const std::string mixed = dir / "mixed";
    std::filesystem::create_directory(mixed);
    std::filesystem::copy_file(files[0], mixed + "/rank0.sqlite");
    std::filesystem::copy_file(parts + "/a.partial.json", mixed + "/rank0.partial.json");
    const auto kind = [](const std::string& p) { return openedKind(QString::fromStdString(p)); };
    EXPECT_EQ(kind(report), OpenedKind::SavedReport);
    EXPECT_EQ(kind(dir / "renamed.txt"), OpenedKind::SavedReport);
    EXPECT_EQ(kind(parts), OpenedKind::PartialResults);
    EXPECT_EQ(kind(parts + "/a.partial.json"), OpenedKind::PartialResults);
    EXPECT_EQ(kind(dir / "partial-renamed.json"), OpenedKind::PartialResults);
    EXPECT_EQ(kind(files[0]), OpenedKind::Capture);
    EXPECT_EQ(kind(kJob), OpenedKind::Capture);
    EXPECT_EQ(kind(mixed), OpenedKind::Capture);
    EXPECT_EQ(kind(dir / "kineto.json"), OpenedKind::Capture);
    EXPECT_EQ(kind(dir / "other.json"), OpenedKind::Capture);
    EXPECT_EQ(kind(dir / "missing.json"), OpenedKind::Capture);  // the capture reader names the problem
}

TEST(OpenResults, ASavedReportShowsTheCapturesNumbersWithoutATimeline) {
    const testsupport::TempDir dir;
    const std::string report = writeReport(dir);
    MainWindow win;
    win.resize(1400, 900);
    win.show();
    open(win, report);
    expectNoTimeline(win, "report");
    expectSamePanelsAsTheCapture(win, "report");
    EXPECT_EQ(win.analysisOnlyView()->notice().toStdString(),
              "Saved report (overlapscope-report JSON): per-step and per-collective results only; open the "
              "captures for a timeline");
    EXPECT_TRUE(win.analysisOnlyView()->madeFrom().contains("made from 4 captures in"))
        << win.analysisOnlyView()->madeFrom().toStdString();
    EXPECT_TRUE(win.analysisOnlyView()->summary().startsWith("all 4 devices: "))
        << win.analysisOnlyView()->summary().toStdString();
    EXPECT_TRUE(win.analysisOnlyView()->findingsText().startsWith("rank 0 gpu 0: "))
        << win.analysisOnlyView()->findingsText().toStdString();
    EXPECT_TRUE(win.statusText().contains("no timeline")) << win.statusText().toStdString();
    // A saved report keeps the alignment it was made with.
    EXPECT_FALSE(win.alignAction()->isEnabled());
    // Opening the capture afterwards brings the timeline and its actions back.
    open(win, kJob);
    EXPECT_TRUE(win.hasTimeline());
    EXPECT_TRUE(win.timeline()->isVisibleTo(&win));
    for (QAction* a : win.timelineActions()) EXPECT_TRUE(a->isEnabled()) << a->text().toStdString();
    EXPECT_TRUE(win.alignAction()->isEnabled());
}

TEST(OpenResults, ADirectoryOfPartialsIsMergedIntoTheCapturesNumbers) {
    const testsupport::TempDir dir;
    const std::string parts = writePartialDirectory(dir);
    MainWindow win;
    win.resize(1400, 900);
    win.show();
    open(win, parts);
    expectNoTimeline(win, "partial directory");
    expectSamePanelsAsTheCapture(win, "partial directory");
    EXPECT_EQ(win.analysisOnlyView()->notice().toStdString(),
              "Partial results (overlapscope-partial, 2 files merged): per-step and per-collective results only; "
              "open the captures for a timeline");
    EXPECT_TRUE(win.analysisOnlyView()->madeFrom().contains("synth-host-4003-rank3.sqlite"));
    // Partials are merged again with or without --align collectives, as the View menu says.
    ASSERT_TRUE(win.alignAction()->isEnabled());
    EXPECT_FALSE(win.shown().analysis->settings.alignCollectives);
    QSignalSpy loaded(win.loader(), &CaptureLoader::loaded);
    win.alignAction()->trigger();
    ASSERT_TRUE(loaded.wait(60000));
    EXPECT_TRUE(win.shown().analysis->settings.alignCollectives);
    EXPECT_FALSE(win.hasTimeline());
    EXPECT_EQ(win.stepModel()->rowCount(), 20);
    win.alignAction()->trigger();
    ASSERT_TRUE(loaded.wait(60000));
    EXPECT_FALSE(win.shown().analysis->settings.alignCollectives);
}

TEST(OpenResults, OnePartialFileOfTheWholeJobReadsAsTheCapture) {
    const testsupport::TempDir dir;
    const std::string part = writePartial(dir / "job.partial.json", rankFiles());
    MainWindow win;
    open(win, part);
    expectNoTimeline(win, "partial file");
    expectSamePanelsAsTheCapture(win, "partial file");
    EXPECT_TRUE(win.analysisOnlyView()->notice().startsWith("Partial result (overlapscope-partial): "));
}

TEST(OpenResults, ADamagedPartialOrANewerReportIsOneMessageNamingTheFile) {
    const testsupport::TempDir dir;
    const std::string parts = writePartialDirectory(dir);
    // A partial cut short inside a device line, in a directory of two.
    const std::string damaged = parts + "/b.partial.json";
    const std::string text = readAll(damaged);
    writeAll(damaged, text.substr(0, text.size() / 2));
    const std::string report = writeReport(dir);
    std::string newer = readAll(report);
    const auto at = newer.find("\"version\": 1");
    ASSERT_NE(at, std::string::npos);
    newer.replace(at, 12, "\"version\": 99");
    writeAll(dir / "newer.json", newer);
    MainWindow win;
    const QString partialError = failureOf(win, parts);
    EXPECT_TRUE(partialError.startsWith(QString::fromStdString(damaged) + ": ")) << partialError.toStdString();
    const QString reportError = failureOf(win, dir / "newer.json");
    EXPECT_TRUE(reportError.startsWith(QString::fromStdString(dir / "newer.json") + ": ")) << reportError.toStdString();
    EXPECT_TRUE(reportError.contains("newer")) << reportError.toStdString();
    EXPECT_EQ(reportError.count('\n'), 0) << reportError.toStdString();
    // Shown in one message box too, as for captures; nothing was opened.
    QCoreApplication::processEvents();
    bool shown = false;
    for (auto* box : win.findChildren<QMessageBox*>()) shown |= box->text() == reportError;
    EXPECT_TRUE(shown);
    EXPECT_FALSE(win.hasTimeline());
    EXPECT_EQ(win.stepModel()->rowCount(), 0);
}

TEST(OpenResults, LoadingResultsCanBeCancelled) {
    const testsupport::TempDir dir;
    const std::string parts = writePartialDirectory(dir);
    const std::string report = writeReport(dir);
    const std::atomic<bool> cancelled{true};
    for (const std::string& path : {parts, report}) {
        const QString p = QString::fromStdString(path);
        EXPECT_THROW(loadAnalysisOnly(p, openedKind(p), false, &cancelled, {}), LoadCancelled) << path;
    }
    // In the window: cancelled at once, whatever the worker got to, nothing is shown.
    MainWindow win;
    win.openCapture(QString::fromStdString(parts));
    auto* cancel = win.findChild<QPushButton*>("cancelLoad");
    ASSERT_NE(cancel, nullptr);
    cancel->click();
    win.loader()->waitForIdle();
    QTest::qWait(50);
    QCoreApplication::processEvents();
    EXPECT_EQ(win.statusText(), "Loading cancelled.");
    EXPECT_EQ(win.stepModel()->rowCount(), 0);
}

TEST(OpenResults, ScreenshotsRenderBothKindsAndRefuseTimelineOptions) {
    const testsupport::TempDir dir;
    const std::string report = writeReport(dir);
    const std::string parts = writePartialDirectory(dir);
    for (const std::string& input : {report, parts}) {
        for (const char* panel : {"", "collectives"}) {
            ScreenshotRequest request;
            request.capturePath = QString::fromStdString(input);
            request.outputPath = QString::fromStdString(dir / "shot.png");
            request.size = QSize(1200, 800);
            request.panel = panel;
            std::filesystem::remove(dir / "shot.png");
            ASSERT_EQ(renderScreenshot(request), 0) << input << " " << panel;
            const QImage image(request.outputPath);
            ASSERT_FALSE(image.isNull()) << input;
            EXPECT_EQ(image.size(), QSize(1200, 800)) << input;
        }
        // --find, --range and --select need a timeline: refused, nothing written.
        ScreenshotRequest find;
        find.capturePath = QString::fromStdString(input);
        find.outputPath = QString::fromStdString(dir / "find.png");
        find.find = "AllReduce";
        EXPECT_EQ(renderScreenshot(find), 2) << input;
        EXPECT_FALSE(std::filesystem::exists(dir / "find.png")) << input;
    }
}
