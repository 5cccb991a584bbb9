// overlapscope-gui [FILE] [--compare CANDIDATE] [--screenshot OUT.png [--size WxH] [--range START:END]]
#include "gui/model/time_ticks.h"
#include "gui/widgets/main_window.h"
#include "gui/widgets/process_memory.h"
#include "gui/widgets/screenshot.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

// --help, --version and --screenshot need no window. Without a display (ssh,
// CI) Qt would abort before parsing them, so they get the offscreen platform
// unless the user chose one.
void useOffscreenWhenNoWindowIsNeeded(int argc, char** argv) {
    if (std::getenv("QT_QPA_PLATFORM") || std::getenv("DISPLAY") || std::getenv("WAYLAND_DISPLAY")) return;
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        if (!std::strcmp(a, "--help") || !std::strcmp(a, "-h") || !std::strcmp(a, "--version") ||
            !std::strcmp(a, "-v") || !std::strncmp(a, "--screenshot", 12) || !std::strncmp(a, "--export-csv", 12)) {
            setenv("QT_QPA_PLATFORM", "offscreen", 0);
            return;
        }
    }
}

int usageError(const QString& message) {
    std::fprintf(stderr, "overlapscope-gui: %s\n", message.toLocal8Bit().constData());
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    osc::gui::limitAllocatorArenas();
    useOffscreenWhenNoWindowIsNeeded(argc, argv);
    QApplication app(argc, argv);
    QApplication::setOrganizationName("overlapscope");
    QApplication::setApplicationName("overlapscope-gui");
    QApplication::setApplicationVersion(OSC_VERSION);

    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Timeline viewer for overlapscope captures: compute and communication lanes per GPU,\n"
        "an overlap lane (hidden vs exposed communication), per-step and per-collective panels.\n"
        "Opens our SQLite captures, Nsight Systems SQLite exports, Kineto JSON traces,\n"
        "or a directory of per-rank files; and, without a timeline, partial results\n"
        "(report --partial; a directory of them is merged as one job)\n"
        "and saved reports (report --format json).");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(
        "file", "Capture, partial result or saved report, or a directory of captures or partials.", "[FILE]");
    QCommandLineOption shot("screenshot", "Render FILE to a PNG and exit (works with QT_QPA_PLATFORM=offscreen).",
                            "out.png");
    QCommandLineOption size("size", "Window size for --screenshot (default 1600x900).", "WxH", "1600x900");
    QCommandLineOption range("range", "Visible time range for --screenshot, e.g. 10ms:25ms or 1000000:2000000 (ns).",
                             "START:END");
    QCommandLineOption find("find",
                            "Highlight what Find (Ctrl+F) finds: kernels, NVTX ranges, operators and API calls whose "
                            "name contains TEXT (with --screenshot).",
                            "TEXT");
    QCommandLineOption panel(
        "panel",
        "Bottom panel to show (with --screenshot): steps, collectives, statistics, heatmap, whatif, hang, ranks "
        "(collectives across ranks).",
        "NAME");
    QCommandLineOption groupRanks("group-ranks",
                                  "Group the ranks under a header per host or per NCCL communicator, as View > Group "
                                  "ranks by does (with --screenshot): none, host or communicator.",
                                  "BY");
    QCommandLineOption oneRow("one-row",
                              "One thin row per rank (compute, hidden and exposed communication, waiting), as View > "
                              "One row per rank does (with --screenshot).");
    QCommandLineOption select("select",
                              "Select the first kernel whose name contains TEXT starting at or after TIME, as a click "
                              "does (with --screenshot), e.g. SendRecv@12ms.",
                              "TEXT@TIME");
    QCommandLineOption exportCsv("export-csv",
                                 "Write a panel of FILE as CSV and exit: steps or collectives (one row per device "
                                 "and step / collective, the fields and values of report --format json), ranks "
                                 "(one row per collective matched across ranks: the report's skew_ns and "
                                 "transfer_ns, the last rank, waiting_ns, in ns), or statistics (as the window "
                                 "shows it). With --compare: steps or collectives of both runs, paired, with each "
                                 "value of A and B, the change and the relative change in columns of their own.",
                                 "PANEL:OUT.csv");
    QCommandLineOption compare("compare",
                               "Compare FILE (run A, the base, on the timeline) with CANDIDATE (run B): the Steps and "
                               "Collectives panels show both runs step by step (step N of each) and the change. "
                               "Works with --screenshot and --export-csv.",
                               "CANDIDATE");
    QCommandLineOption heatMap("heat-map",
                               "Colour the heat map (with --screenshot) by overlap (ratio), exposed (communication "
                               "share) or lateness (arrival after the median rank).",
                               "COLOUR");
    parser.addOptions({shot, size, range, find, panel, groupRanks, oneRow, select, exportCsv, compare, heatMap});
    parser.process(app);

    const QStringList args = parser.positionalArguments();
    if (args.size() > 1) return usageError("expected at most one file or directory");
    if (parser.isSet(compare) && args.isEmpty()) return usageError("--compare needs a FILE to compare with it");
    if (parser.isSet(exportCsv)) {
        if (args.isEmpty()) return usageError("--export-csv needs a FILE");
        return osc::gui::exportCsv(args.front(), parser.value(exportCsv), parser.value(compare));
    }
    if (parser.isSet(shot)) {
        if (args.isEmpty()) return usageError("--screenshot needs a FILE");
        osc::gui::ScreenshotRequest req;
        req.capturePath = args.front();
        req.outputPath = parser.value(shot);
        if (QFileInfo::exists(req.outputPath) && QFileInfo(req.outputPath).isDir()) {
            return usageError(req.outputPath + ": is a directory");
        }
        const QStringList wh = parser.value(size).split('x');
        bool okW = false, okH = false;
        if (wh.size() == 2) req.size = QSize(wh[0].toInt(&okW), wh[1].toInt(&okH));
        if (!okW || !okH || req.size.width() < 200 || req.size.height() < 150) {
            return usageError("--size: expected WxH, at least 200x150, e.g. 1920x1080");
        }
        if (parser.isSet(range)) {
            const QStringList se = parser.value(range).split(':');
            std::optional<osc::TimeNs> s, e;
            if (se.size() == 2) {
                s = osc::gui::parseDuration(se[0].trimmed().toStdString());
                e = osc::gui::parseDuration(se[1].trimmed().toStdString());
            }
            if (!s || !e || *e <= *s) return usageError("--range: expected START:END with END > START, e.g. 10ms:25ms");
            req.range = osc::gui::ViewRange{*s, *e};
        }
        if (parser.isSet(select)) {
            const QString v = parser.value(select);
            const qsizetype at = v.lastIndexOf('@');
            const std::optional<osc::TimeNs> t =
                at > 0 ? osc::gui::parseDuration(v.mid(at + 1).trimmed().toStdString()) : std::nullopt;
            if (!t) return usageError("--select: expected TEXT@TIME, e.g. SendRecv@12ms");
            req.selectText = v.left(at);
            req.selectFrom = t;
        }
        req.find = parser.value(find);
        req.panel = parser.value(panel);
        req.groupRanks = parser.value(groupRanks);
        req.oneRow = parser.isSet(oneRow);
        req.heatMap = parser.value(heatMap);
        req.comparePath = parser.value(compare);
        return osc::gui::renderScreenshot(req);
    }

    osc::gui::MainWindow window;
    window.resize(1600, 950);
    window.show();
    if (!args.isEmpty()) window.openCapture(args.front());
    if (parser.isSet(compare)) window.compareWith(parser.value(compare));
    return app.exec();
}
