#include "cli/cli_common.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/printable_text.h"
#include "analyzer/crossrank/analyze.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/output/safe_output.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace osc::cli {

void AnalysisFlags::addTo(CLI::App* cmd) {
    cmd->add_option("--comm-kernel", commKernels,
                    "Also count kernels whose demangled name matches REGEX as communication "
                    "(ECMAScript, searched anywhere in the name; repeatable). Kernels whose name "
                    "starts with 'nccl' always count.")
        ->type_name("REGEX");
    cmd->add_flag("--comm-copies", commCopies,
                  "Count host<->device copies as communication (offload workloads); peer-to-peer "
                  "copies always count");
    cmd->add_option("--step-pattern", stepPattern,
                    "Regex for step range names (NVTX / annotations); default matches "
                    "'ProfilerStep#N', 'step N', 'iteration N'")
        ->type_name("REGEX");
    cmd->add_option("--align", align,
                    "How processes' clocks are lined up: 'session-start' (wall-clock session "
                    "start; default) or 'collectives' (shift each process so the ends of its "
                    "matched collectives meet the lowest rank's in the median; for captures "
                    "from several hosts, whose clocks differ by hundreds of microseconds)")
        ->check(CLI::IsMember({"session-start", "collectives"}))
        ->type_name("MODE");
    cmd->add_option("--microbatch-pattern", microbatchPattern,
                    "Regex for pipeline micro-batch range names; group 1 is the phase (starting with f "
                    "= forward, b = backward), group 2 the micro-batch number. The default matches "
                    "'fwd mb 3', 'bwd mb 3', 'forward microbatch 3'")
        ->type_name("REGEX");
    cmd->add_option("--pipeline-stages", pipelineStages,
                    "Pipeline stages S for the theoretical bubble (S-1)/(M+S-1); default: the number "
                    "of devices that ran micro-batches (set it when tensor or data parallelism puts "
                    "several devices on one stage)")
        ->check(CLI::Range(0, 65536))
        ->type_name("S");
    addPeakBusBwOption(cmd, peakBusBwGbps);
}

void addPeakBusBwOption(CLI::App* cmd, double& gbps) {
    cmd->add_option("--peak-busbw-gbps", gbps,
                    "Peak bus bandwidth of every GPU's link in GB/s, against which collectives' bus bandwidth is "
                    "measured (busbw_fraction); default: from the GPU model (NVLink generation or PCIe). Give it "
                    "for collectives that cross nodes, which the network limits")
        // CLI::PositiveNumber would print the whole range up to DBL_MAX.
        ->check(CLI::Validator(
            [](const std::string& text) {
                double v = 0;
                return CLI::detail::lexical_cast(text, v) && std::isfinite(v) && v > 0
                           ? std::string()
                           : "expected a positive number of GB/s, got '" + text + "'";
            },
            "G > 0"))
        ->type_name("G");
}

void NoiseFlags::addTo(CLI::App* cmd) {
    const report::NoiseOptions defaults;
    cmd->add_option("--confidence", confidence,
                    "Per-step comparison: confidence of the whole comparison (default " +
                        std::to_string(static_cast<int>(defaults.confidence * 100)) +
                        "% as 0.95); each of its T intervals is at 1-(1-C)/T, so a run without a change "
                        "fails with probability below 1-C")
        ->type_name("C");
    cmd->add_option_function<std::string>(
           "--min-effect", [this](const std::string& v) { minEffectPercent = parsePercent(v, "--min-effect"); },
           "Per-step comparison: a shift smaller than P% of the baseline's median step value is no regression, "
           "however certain (default 1%; never less than 1 us per step)")
        ->type_name("P%");
    cmd->add_option("--min-steps", minSteps,
                    "Per-step comparison: fewer steps than N on either side are too few to tell a change from "
                    "noise (default 10)")
        ->type_name("N");
}

report::NoiseOptions NoiseFlags::options() const {
    report::NoiseOptions o;
    if (confidence) o.confidence = *confidence;
    if (minEffectPercent) o.minEffectPercent = *minEffectPercent;
    if (minSteps) o.minSteps = *minSteps;
    report::validateNoiseOptions(o);
    return o;
}

double parsePercent(std::string text, const std::string& option) {
    const std::string given = text;
    while (!text.empty() && (text.back() == '%' || text.back() == ' ')) text.pop_back();
    size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text.size() || !std::isfinite(v) || !(v >= 0))
        throw CLI::ValidationError(option, "expected a percentage such as 5 or 5%, got '" + given + "'");
    return v;
}

AnalysisSettings AnalysisFlags::settings() const {
    AnalysisSettings s;
    s.commKernelPatterns = commKernels;
    s.commCopies = commCopies;
    if (!stepPattern.empty()) s.stepPattern = stepPattern;
    s.alignCollectives = align == "collectives";
    if (!microbatchPattern.empty()) s.microbatchPattern = microbatchPattern;
    s.pipelineStages = pipelineStages;
    if (peakBusBwGbps > 0) s.peakBusBwGbps = peakBusBwGbps;
    return s;
}

bool stderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

const CLI::Validator& nonEmptyFileName() {
    static const CLI::Validator validator(
        [](const std::string& name) { return name.empty() ? std::string("an empty file name") : std::string(); }, "");
    return validator;
}

ProgressLine::ProgressLine() : enabled_(stderrIsTerminal()) {}
ProgressLine::~ProgressLine() { done(); }

void ProgressLine::show(const std::string& label, double fraction) {
    if (!enabled_) return;
    const int permille = static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 1000.0);
    // Redraw only when something visible changed: terminals are slow too.
    if (permille == lastPermille_ && label == lastLabel_) return;
    lastPermille_ = permille;
    lastLabel_ = label;
    std::fprintf(stderr, "\r\033[K%s %5.1f%%", label.c_str(), permille / 10.0);
    std::fflush(stderr);
    shown_ = true;
}

void ProgressLine::status(const std::string& label) {
    if (!enabled_) return;
    std::fprintf(stderr, "\r\033[K%s...", label.c_str());
    std::fflush(stderr);
    lastLabel_ = label;
    lastPermille_ = -1;
    shown_ = true;
}

void ProgressLine::text(const std::string& line) {
    if (!enabled_) return;
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    std::fflush(stderr);
    lastLabel_ = line;
    lastPermille_ = -1;
    shown_ = true;
}

void ProgressLine::done() {
    if (enabled_ && shown_) {
        std::fprintf(stderr, "\r\033[K");
        std::fflush(stderr);
    }
    shown_ = false;
    lastPermille_ = -1;
}

RateProgress::RateProgress(std::string verb, std::string unit)
    : verb_(std::move(verb)), unit_(std::move(unit)), start_(std::chrono::steady_clock::now()) {}

void RateProgress::update(size_t done, size_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (drawn_ && done < total && now - lastDraw_ < std::chrono::milliseconds(100)) return;
    drawn_ = true;
    lastDraw_ = now;
    line_.text(describe(verb_, unit_, done, total, std::chrono::duration<double>(now - start_).count()));
}

std::string RateProgress::describe(const std::string& verb, const std::string& unit, size_t done, size_t total,
                                   double seconds) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s: %zu/%zu %s", verb.c_str(), done, total, unit.c_str());
    std::string out = buf;
    if (done == 0 || seconds <= 0) return out;
    const double rate = static_cast<double>(done) / seconds;
    std::snprintf(buf, sizeof buf, ", %.1f %s/s", rate, unit.c_str());
    out += buf;
    if (done >= total) return out;
    const auto left = static_cast<long long>(static_cast<double>(total - done) / rate + 0.5);
    if (left >= 3600)
        std::snprintf(buf, sizeof buf, ", about %lld h %lld min left", left / 3600, left % 3600 / 60);
    else if (left >= 60)
        std::snprintf(buf, sizeof buf, ", about %lld min %lld s left", left / 60, left % 60);
    else
        std::snprintf(buf, sizeof buf, ", about %lld s left", left);
    return out + buf;
}

void printWarnings(const std::vector<std::string>& warnings) {
    for (const auto& w : warnings) std::fprintf(stderr, "overlapscope: warning: %s\n", printableLine(w).c_str());
}

Capture loadInputs(const std::vector<std::string>& paths, bool launchDetails) {
    ProgressLine progress;
    LoadOptions options;
    options.launchDetails = launchDetails;
    options.progress = [&progress](double fraction, std::string_view stage) {
        progress.show("loading: " + std::string(stage), fraction);
    };
    Capture capture = loadCaptures(paths, options);
    progress.done();
    printWarnings(capture.warnings);
    return capture;
}

Analysis analyzeWithStatus(const Capture& capture, const AnalysisSettings& settings) {
    ProgressLine progress;
    progress.status("analyzing");
    Analysis analysis = analyze(capture, settings);
    progress.done();
    printWarnings(analysis.warnings);
    return analysis;
}

void writeOutput(const std::string& path, const std::function<void(std::ostream&)>& write, bool overwrite) {
    if (path.empty() || path == "-") {
        write(std::cout);
        std::cout.flush();
        return;
    }
    output::writeFileSafely(path, write, overwrite);
}

void writeOutput(const std::string& path, const std::string& text, bool overwrite) {
    writeOutput(
        path, [&](std::ostream& out) { out.write(text.data(), static_cast<std::streamsize>(text.size())); }, overwrite);
}

}  // namespace osc::cli
