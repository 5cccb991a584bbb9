// `overlapscope-gui --screenshot`: render a capture, partial results or a
// saved report to a PNG without user interaction (works on the offscreen
// platform, for docs and CI artifacts).
#pragma once

#include "gui/model/time_scale.h"

#include <QSize>
#include <QString>

#include <optional>

namespace osc::gui {

struct ScreenshotRequest {
    QString capturePath, outputPath;
    QSize size{1600, 900};
    std::optional<ViewRange> range;  // default: fit the steps (everything without steps)
    QString find;                    // optional name pattern to highlight, as Find (Ctrl+F)
    // Select one kernel, as a click does (its partners, arrows and Details),
    // without outlining every hit: the first whose name contains `selectText`
    // starting at or after `selectFrom`.
    QString selectText;
    std::optional<TimeNs> selectFrom;
    QString panel;  // a bottom panel to raise: steps, collectives, statistics, heatmap, ranks, ...
    // Many ranks, as View > Group ranks by and One row per rank set them.
    QString groupRanks;  // none, host or communicator
    bool oneRow = false;
    QString heatMap;  // the heat map's colour: overlap, exposed or lateness ("": as the window starts)
    // Run B to compare the capture (run A) with, as File > Compare does: the
    // Steps and Collectives panels show both runs and the change.
    QString comparePath;
};

// Returns the process exit code: 0 written, 2 bad input (message on stderr).
int renderScreenshot(const ScreenshotRequest& request);

// `--export-csv PANEL:FILE`: the steps, collectives or collectives across
// ranks of a capture, partial results or saved report as CSV with the
// report's fields and raw values (gui/model/analysis_csv.h), or the
// statistics table as the window shows it. With `comparePath` (run B), the
// compare tables of steps or collectives in numbers (gui/model/compare_csv.h).
// Returns the exit code, as renderScreenshot does.
int exportCsv(const QString& capturePath, const QString& panelAndFile, const QString& comparePath = {});

}  // namespace osc::gui
