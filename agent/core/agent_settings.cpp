#include "agent/core/agent_settings.h"

#include "analyzer/metrics/microbatches.h"
#include "control/control_protocol.h"
#include "control/process_facts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <regex>
#include <stdexcept>
#include <string_view>

namespace osc::agent {
namespace {

const char* env(const char* name) {
    const char* v = std::getenv(name);
    return (v && *v) ? v : nullptr;
}

// A number from `lo` to `hi`; anything else (text, inf, nan, out of range)
// keeps the default and adds a note to `warnings`.
bool readNumber(const char* name, double lo, double hi, const char* unit, double& out, std::string& warnings) {
    const char* text = env(name);
    if (!text) return false;
    char* end = nullptr;
    const double v = std::strtod(text, &end);
    if (end == text || *end != '\0' || !std::isfinite(v) || v < lo || v > hi) {
        char range[96];
        std::snprintf(range, sizeof range, "%.15g to %.15g", lo, hi);
        warnings += std::string(name) + "=" + text + " is not a number of " + unit + " from " + range + "; ignored. ";
        return false;
    }
    out = v;
    return true;
}

bool truthy(std::string_view v) { return v == "1" || v == "true" || v == "yes" || v == "on"; }

void readAnalysis(AgentSettings& s, std::string& warnings) {
    AnalysisSettings& a = s.analysis;
    if (const char* v = env("OVERLAPSCOPE_COMM_KERNEL")) {
        std::string_view rest = v;
        while (!rest.empty()) {
            const size_t end = rest.find('\n');
            if (end != 0) a.commKernelPatterns.emplace_back(rest.substr(0, end));
            if (end == std::string_view::npos) break;
            rest.remove_prefix(end + 1);
        }
    }
    if (const char* v = env("OVERLAPSCOPE_COMM_COPIES")) a.commCopies = truthy(v);
    if (const char* v = env("OVERLAPSCOPE_STEP_PATTERN")) a.stepPattern = v;
    if (const char* v = env("OVERLAPSCOPE_MICROBATCH_PATTERN")) a.microbatchPattern = v;
    double stages = 0;
    if (readNumber("OVERLAPSCOPE_PIPELINE_STAGES", 0, 65536, "stages", stages, warnings)) {
        if (stages == std::floor(stages))
            a.pipelineStages = static_cast<int>(stages);
        else
            warnings += "OVERLAPSCOPE_PIPELINE_STAGES=" + std::string(env("OVERLAPSCOPE_PIPELINE_STAGES")) +
                        " is not a whole number; ignored. ";
    }
    const char* consequence = "; no partial results or live metrics. ";
    try {
        compileMicrobatchPattern(a.microbatchPattern);
    } catch (const std::invalid_argument& e) {
        warnings += "OVERLAPSCOPE_MICROBATCH_PATTERN: " + std::string(e.what()) + consequence;
        s.analysisValid = false;
    }
    // A bad regex would fail every partial and every step: said once, now.
    std::vector<std::string> patterns = a.commKernelPatterns;
    patterns.push_back(a.stepPattern);
    for (const auto& p : patterns) {
        try {
            std::regex check(p, std::regex::ECMAScript);
        } catch (const std::regex_error&) {
            warnings += "OVERLAPSCOPE_COMM_KERNEL/OVERLAPSCOPE_STEP_PATTERN: '" + p + "' is not a regular expression" +
                        consequence;
            s.analysisValid = false;
        }
    }
    if (!s.analysisValid) s.partial = false;
}

void readLive(AgentSettings& s, std::string& warnings) {
    if (const char* v = env("OVERLAPSCOPE_METRICS_FILE")) s.metricsFile = v;
    double x = 0;
    if (readNumber("OVERLAPSCOPE_METRICS_PORT", 0, 65535, "ports", x, warnings)) s.metricsPort = static_cast<int>(x);
    if (const char* v = env("OVERLAPSCOPE_METRICS_ADDRESS")) s.metricsAddress = v;
    if (readNumber("OVERLAPSCOPE_METRICS_PERIOD_MS", 10, 3600000, "milliseconds", x, warnings))
        s.metricsPeriodMs = static_cast<int>(x);
    s.job = control::firstText(control::kJobVariables, std::size(control::kJobVariables), env);
    if (const char* v = env("OVERLAPSCOPE_CAPTURE_WHEN")) s.captureWhen = v;
    if (readNumber("OVERLAPSCOPE_CAPTURE_STEPS", 1, 1e6, "steps", x, warnings)) s.captureSteps = static_cast<int>(x);
    readNumber("OVERLAPSCOPE_CAPTURE_COOLDOWN", 0, control::kMaxSeconds, "seconds", s.captureCooldownS, warnings);
    if (const char* v = env("OVERLAPSCOPE_STEP_LOG")) s.stepLog = v;
    if (readNumber("OVERLAPSCOPE_LIVE_MAX_ROWS", 1000, 1e9, "rows", x, warnings))
        s.liveMaxRows = static_cast<size_t>(x);
    if (readNumber("OVERLAPSCOPE_LOOKBACK_STEPS", 0, control::kMaxLookbackSteps, "steps", x, warnings))
        s.lookbackSteps = static_cast<int>(x);
    if (readNumber("OVERLAPSCOPE_LOOKBACK_MAX_ROWS", 1000, 1e9, "rows", x, warnings))
        s.lookbackMaxRows = static_cast<size_t>(x);
    if (const char* v = env("OVERLAPSCOPE_TRIGGER_DIR")) s.triggerDir = v;
    if (const char* v = env("OVERLAPSCOPE_RUN_ID")) s.runId = v;
}

}  // namespace

AgentSettings settingsFromEnvironment(std::string& warnings) {
    AgentSettings s;
    if (const char* v = env("OVERLAPSCOPE_OUTPUT_DIR")) s.outputDir = v;
    readNumber("OVERLAPSCOPE_DELAY", 0, control::kMaxSeconds, "seconds", s.delayS, warnings);
    readNumber("OVERLAPSCOPE_DURATION", 0, control::kMaxSeconds, "seconds", s.durationS, warnings);
    if (const char* v = env("OVERLAPSCOPE_DORMANT")) s.dormant = truthy(v);
    if (const char* v = env("OVERLAPSCOPE_CONTROL")) s.control = !(std::string_view(v) == "0");
    double mb = 0;
    if (readNumber("OVERLAPSCOPE_BUFFER_MB", control::kMinBufferMb, control::kMaxBufferMb, "MB", mb, warnings))
        s.bufferBytes = static_cast<size_t>(mb * 1024.0 * 1024.0);
    double ms = 0;
    if (readNumber("OVERLAPSCOPE_COMMIT_MS", 10, 60000, "milliseconds", ms, warnings))
        s.commitIntervalMs = static_cast<int>(ms);
    if (readNumber("OVERLAPSCOPE_STOP_GRACE_MS", 0, 60000, "milliseconds", ms, warnings))
        s.stopGraceMs = static_cast<int>(ms);
    s.socketDir = control::socketDirectory();
    if (const char* v = env("OVERLAPSCOPE_PARTIAL")) s.partial = truthy(v);
    readAnalysis(s, warnings);
    readLive(s, warnings);
    return s;
}

size_t activityBufferBytes(size_t boundBytes) {
    constexpr size_t kPreferred = 4u << 20;
    size_t size = std::min(kPreferred, boundBytes / 2);
    size = std::max<size_t>(size, 4096);
    return size & ~size_t{7};
}

}  // namespace osc::agent
