#include "gui/widgets/screenshot.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/output/safe_output.h"
#include "gui/model/analysis_csv.h"
#include "gui/model/compare_csv.h"
#include "gui/model/kernel_find.h"
#include "gui/model/time_ticks.h"
#include "gui/widgets/heat_map_widget.h"
#include "gui/widgets/main_window.h"
#include "gui/widgets/rank_menu.h"
#include "gui/widgets/rank_panel.h"
#include "gui/widgets/timeline_widget.h"

#include <QApplication>
#include <QBuffer>
#include <QFileInfo>
#include <QImage>

#include <cstdio>
#include <optional>

namespace osc::gui {

int renderScreenshot(const ScreenshotRequest& request) {
    const std::string outputPath = request.outputPath.toStdString();
    try {
        // Before the load: a refused output (a planted link, a directory) wastes no time.
        output::checkOutputPath(outputPath, /*overwrite=*/true);
    } catch (const CaptureError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 2;
    }
    LoadedCapture loaded;
    try {
        loaded = loadForViewing(request.capturePath, {}, nullptr, [](double f, const QString& stage) {
            std::fprintf(stderr, "\rloading %3.0f%% %-24s", f * 100, stage.toLocal8Bit().constData());
        });
        std::fprintf(stderr, "\n");
    } catch (const CaptureError& e) {
        std::fprintf(stderr, "\n%s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "\n%s: %s\n", request.capturePath.toLocal8Bit().constData(), e.what());
        return 2;
    }
    // A file without a trace has no time axis and no kernels to find or select.
    if (!loaded.model && (request.range || !request.find.isEmpty() || request.selectFrom)) {
        std::fprintf(stderr, "%s: %s, with no timeline: --range, --find and --select need a capture\n",
                     request.capturePath.toLocal8Bit().constData(),
                     openedKindTitle(loaded.kind, loaded.partialFiles).toLocal8Bit().constData());
        return 2;
    }
    LoadedCapture candidate;
    if (!request.comparePath.isEmpty()) {
        try {
            candidate = loadForViewing(request.comparePath, {}, nullptr, {});
        } catch (const CaptureError& e) {
            std::fprintf(stderr, "%s\n", e.what());
            return 2;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "%s: %s\n", request.comparePath.toLocal8Bit().constData(), e.what());
            return 2;
        }
    }
    MainWindow window;
    window.resize(request.size);
    window.show();
    window.showLoaded(loaded);
    window.waitForHangAnalysis();  // a hang frames the view and raises its panel before --range and --panel
    if (candidate.analysis) window.showComparison(candidate);
    if (!applyRankView(&window, request.groupRanks, request.oneRow)) {
        std::fprintf(stderr, "--group-ranks: expected none, host or communicator\n");
        return 2;
    }
    if (!request.heatMap.isEmpty()) {
        const QString& m = request.heatMap;
        if (m != "overlap" && m != "exposed" && m != "lateness") {
            std::fprintf(stderr, "--heat-map: expected overlap, exposed or lateness\n");
            return 2;
        }
        window.heatMap()->setMetric(m == "lateness"  ? HeatMetric::Lateness
                                    : m == "exposed" ? HeatMetric::ExposedShare
                                                     : HeatMetric::OverlapRatio);
    }
    QApplication::processEvents();
    if (request.range) window.timeline()->setViewRange(*request.range);
    if (!request.find.isEmpty()) window.find(request.find);
    if (request.selectFrom) {
        const TimelineModel& model = *window.timeline()->model();
        const FindResult hits =
            findKernels(model, {request.selectText.toStdString(), ViewRange{*request.selectFrom, model.end() + 1}});
        if (hits.hits.empty()) {
            std::fprintf(stderr, "--select: no kernel named like '%s' starts at or after %s\n",
                         request.selectText.toLocal8Bit().constData(), formatDuration(*request.selectFrom, 4).c_str());
            return 2;
        }
        window.timeline()->selectEvent(hits.hits.front().ref(), true);  // also scrolls its lane into view
    }
    if (request.range) window.timeline()->setViewRange(*request.range);
    if (!request.panel.isEmpty() && !window.raisePanel(request.panel)) {
        std::fprintf(stderr,
                     "--panel: no panel named '%s' (steps, collectives, statistics, heatmap, whatif, hang, ranks)\n",
                     request.panel.toLocal8Bit().constData());
        return 2;
    }
    // Panels that compute on a worker (statistics) finish before the picture.
    window.waitForPanels();
    if (auto* ranks = window.findChild<RanksPanel*>()) ranks->model()->waitForSort();
    QApplication::processEvents();
    const QImage image = window.grab().toImage();
    QByteArray png;
    QBuffer buffer(&png);
    buffer.open(QIODevice::WriteOnly);
    if (!image.save(&buffer, "PNG")) {
        std::fprintf(stderr, "%s: cannot encode the PNG\n", request.outputPath.toLocal8Bit().constData());
        return 2;
    }
    // Written as the command line writes its outputs (analyzer/output/safe_output.h): an
    // existing PNG is replaced, a link someone else planted is not followed.
    try {
        output::writeFileSafely(
            outputPath, [&](std::ostream& out) { out.write(png.constData(), png.size()); }, /*overwrite=*/true);
    } catch (const CaptureError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 2;
    }
    std::fprintf(stderr, "wrote %s (%dx%d)\n", request.outputPath.toLocal8Bit().constData(), image.width(),
                 image.height());
    return 0;
}

namespace {

// Loads a file to export; nullopt (after one line on stderr) when it cannot be read.
std::optional<LoadedCapture> loadToExport(const QString& path) {
    try {
        return loadForViewing(path, {}, nullptr, {});
    } catch (const CaptureError& e) {
        std::fprintf(stderr, "%s\n", e.what());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", path.toLocal8Bit().constData(), e.what());
    }
    return std::nullopt;
}

// As the screenshot is written: an existing file replaced, a planted link refused.
int writeCsv(const QString& out, const std::string& text) {
    try {
        output::writeFileSafely(
            out.toStdString(), [&](std::ostream& file) { file << text; }, /*overwrite=*/true);
    } catch (const CaptureError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 2;
    }
    return 0;
}

}  // namespace

int exportCsv(const QString& capturePath, const QString& panelAndFile, const QString& comparePath) {
    const qsizetype colon = panelAndFile.indexOf(':');
    const QString panel = colon > 0 ? panelAndFile.left(colon) : QString();
    const QString out = colon > 0 ? panelAndFile.mid(colon + 1) : QString();
    if ((panel != "steps" && panel != "collectives" && panel != "statistics" && panel != "ranks") || out.isEmpty()) {
        std::fprintf(stderr,
                     "overlapscope-gui: --export-csv: expected PANEL:FILE, PANEL one of steps, collectives, "
                     "statistics, ranks (got '%s')\n",
                     panelAndFile.toLocal8Bit().constData());
        return 2;
    }
    if (!comparePath.isEmpty() && panel != "steps" && panel != "collectives") {
        std::fprintf(stderr,
                     "overlapscope-gui: --export-csv with --compare: the compare tables are steps and collectives "
                     "(got '%s')\n",
                     panel.toLocal8Bit().constData());
        return 2;
    }
    const std::optional<LoadedCapture> opened = loadToExport(capturePath);
    if (!opened) return 2;
    const LoadedCapture& loaded = *opened;
    if (!loaded.analysis) {
        std::fprintf(stderr, "%s: nothing analysed to export\n", capturePath.toLocal8Bit().constData());
        return 2;
    }
    if (!comparePath.isEmpty()) {
        const std::optional<LoadedCapture> candidate = loadToExport(comparePath);
        if (!candidate) return 2;
        if (!candidate->analysis) {
            std::fprintf(stderr, "%s: nothing analysed to compare\n", comparePath.toLocal8Bit().constData());
            return 2;
        }
        const RunComparison c = compareRuns(*loaded.analysis, *candidate->analysis);
        return writeCsv(out, panel == "steps" ? compareStepsCsv(*loaded.analysis, *candidate->analysis, c)
                                              : compareCollectivesCsv(*loaded.analysis, *candidate->analysis, c));
    }
    if (panel == "statistics") {
        if (!loaded.model) {
            std::fprintf(stderr, "%s: %s, with no timeline: the statistics need the captures' kernels\n",
                         capturePath.toLocal8Bit().constData(),
                         openedKindTitle(loaded.kind, loaded.partialFiles).toLocal8Bit().constData());
            return 2;
        }
        MainWindow window;
        window.showLoaded(loaded);
        window.waitForPanels();
        if (const QString error = window.exportTableCsv(panel, out); !error.isEmpty()) {
            std::fprintf(stderr, "%s\n", error.toLocal8Bit().constData());
            return 2;
        }
        return 0;
    }
    return writeCsv(out, panel == "steps"         ? stepsCsv(*loaded.analysis)
                         : panel == "collectives" ? collectivesCsv(*loaded.analysis)
                                                  : rankCollectivesCsv(*loaded.analysis));
}

}  // namespace osc::gui
