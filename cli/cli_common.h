// Option handling and I/O shared by the analysis commands (report, check,
// export, diff): the classification flags every command takes, loading with
// a progress line on a terminal, and writing an output file safely.
#pragma once

#include "analyzer/capture/model.h"
#include "analyzer/metrics/analysis.h"
#include "analyzer/report/step_regression.h"

#include <CLI/CLI.hpp>

#include <chrono>

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace osc::cli {

// --comm-kernel REGEX (repeatable), --comm-copies, --step-pattern REGEX, --align MODE,
// --microbatch-pattern REGEX, --pipeline-stages S, --peak-busbw-gbps G.
struct AnalysisFlags {
    std::vector<std::string> commKernels;
    bool commCopies = false;
    std::string stepPattern;  // empty = the default pattern
    std::string align = "session-start";
    std::string microbatchPattern;  // empty = the default pattern
    int pipelineStages = 0;
    double peakBusBwGbps = 0;  // 0 = the GPU model's

    void addTo(CLI::App* cmd);
    AnalysisSettings settings() const;
};

// --confidence C, --min-effect P%, --min-steps N: the per-step comparison
// against step-to-step noise (check --baseline, diff; docs/metrics.md 10).
struct NoiseFlags {
    std::optional<double> confidence, minEffectPercent;
    std::optional<size_t> minSteps;

    void addTo(CLI::App* cmd);
    bool given() const { return confidence || minEffectPercent || minSteps; }
    report::NoiseOptions options() const;  // the defaults where not given
};

// "5", "5%" or "5.5 %" -> 5.5; anything else (or below 0) is a usage error naming `option`.
double parsePercent(std::string text, const std::string& option);

// --peak-busbw-gbps G (docs/design.md 4d), for commands without the other flags (merge).
void addPeakBusBwOption(CLI::App* cmd, double& gbps);

bool stderrIsTerminal();

// For every option that names a file or directory: an empty name is an
// option error ("-o ''" must not quietly mean standard output).
const CLI::Validator& nonEmptyFileName();

// Loads every input as one capture (directories are multi-rank captures).
// Shows progress on stderr when stderr is a terminal; prints the capture's
// warnings on stderr. Throws CaptureError for bad input. Commands that only
// compute metrics pass launchDetails = false: the grid/block/register columns
// are then not read, which saves time and about 44 bytes per kernel.
Capture loadInputs(const std::vector<std::string>& paths, bool launchDetails = true);

// Runs the analysis, saying so on a terminal, and prints its warnings on stderr.
Analysis analyzeWithStatus(const Capture& capture, const AnalysisSettings& settings);

void printWarnings(const std::vector<std::string>& warnings);

// Writes `text` to `path`, or to stdout when path is empty or "-". Refuses
// to replace an existing file unless `overwrite`. Throws CaptureError. Files
// are written by output::writeFileSafely (analyzer/output/safe_output.h): under a private
// temporary name renamed at the end, through symlinks, FIFOs and devices.
void writeOutput(const std::string& path, const std::string& text, bool overwrite);
// The same for output produced piece by piece (large JSON reports).
void writeOutput(const std::string& path, const std::function<void(std::ostream&)>& write, bool overwrite);

// A single progress line on stderr, redrawn in place; silent unless stderr
// is a terminal. Cleared by done() or the destructor.
class ProgressLine {
public:
    ProgressLine();
    ~ProgressLine();
    void show(const std::string& label, double fraction);
    void status(const std::string& label);  // no percentage: work of unknown length
    void text(const std::string& line);     // the line as it is
    void done();

private:
    bool enabled_;
    int lastPermille_ = -1;
    std::string lastLabel_;
    bool shown_ = false;
};

// Progress over a known number of items (files, devices) for long
// multi-rank runs: "analyzing: 120/1024 files, 14.2 files/s, about 1 min 4 s
// left", redrawn at most ten times a second. Silent unless stderr is a
// terminal. Thread-compatible: callers serialise update().
class RateProgress {
public:
    RateProgress(std::string verb, std::string unit);
    void update(size_t done, size_t total);
    void done() { line_.done(); }

    // The line for `done` of `total` after `seconds` (tested apart).
    static std::string describe(const std::string& verb, const std::string& unit, size_t done, size_t total,
                                double seconds);

private:
    ProgressLine line_;
    std::string verb_, unit_;
    std::chrono::steady_clock::time_point start_, lastDraw_;
    bool drawn_ = false;
};

}  // namespace osc::cli
