// The agent's settings, read once from the environment that
// `overlapscope run` prepares (docs/agent.md lists every variable).
#pragma once

#include "analyzer/metrics/analysis.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace osc::agent {

struct AgentSettings {
    std::string outputDir = ".";     // OVERLAPSCOPE_OUTPUT_DIR
    double delayS = 0;               // OVERLAPSCOPE_DELAY: start this long after injection
    double durationS = 0;            // OVERLAPSCOPE_DURATION: 0 = until stopped or exit
    bool dormant = false;            // OVERLAPSCOPE_DORMANT=1: capture only on `attach`
    size_t bufferBytes = 64u << 20;  // OVERLAPSCOPE_BUFFER_MB: bound on in-flight records
    bool control = true;             // OVERLAPSCOPE_CONTROL=0 disables the control socket
    std::string socketDir;           // OVERLAPSCOPE_SOCKET_DIR (else the per-user default)
    int commitIntervalMs = 1000;     // OVERLAPSCOPE_COMMIT_MS: the most a killed process loses
    // OVERLAPSCOPE_STOP_GRACE_MS: how long a capture stopped by request waits
    // for the GPU records of work launched before the stop (0 = not at all).
    int stopGraceMs = 200;
    // OVERLAPSCOPE_PARTIAL=1: write each closed capture's partial result
    // (partial_writer.h).
    bool partial = false;
    // How partials and the live metrics analyse: OVERLAPSCOPE_COMM_KERNEL
    // (regexes, one per line), OVERLAPSCOPE_COMM_COPIES=1 and
    // OVERLAPSCOPE_STEP_PATTERN, with OVERLAPSCOPE_MICROBATCH_PATTERN and
    // OVERLAPSCOPE_PIPELINE_STAGES for pipelines (`run`'s options of the same
    // names). A pattern that is not a regular expression turns off partials
    // and live metrics (analysisValid false).
    AnalysisSettings analysis;
    bool analysisValid = true;

    // Live telemetry (agent/live, docs/agent.md "Live metrics"):
    // OVERLAPSCOPE_METRICS_FILE (a file, a directory, or a path with
    // {rank}...), OVERLAPSCOPE_METRICS_PORT (HTTP /metrics on PORT + local
    // rank; -1 = none) on OVERLAPSCOPE_METRICS_ADDRESS, the `job` label
    // OVERLAPSCOPE_JOB (default: SLURM_JOB_ID); the file rewritten every
    // OVERLAPSCOPE_METRICS_PERIOD_MS.
    std::string metricsFile;
    int metricsPort = -1;
    std::string metricsAddress = "127.0.0.1";
    int metricsPeriodMs = 1000;
    std::string job;
    // OVERLAPSCOPE_CAPTURE_WHEN (a condition, capture_condition.h),
    // OVERLAPSCOPE_CAPTURE_STEPS, OVERLAPSCOPE_CAPTURE_COOLDOWN (seconds).
    std::string captureWhen;
    int captureSteps = 10;
    double captureCooldownS = 600;
    // OVERLAPSCOPE_STEP_LOG: one JSON line per closed step and GPU (tests, debugging).
    std::string stepLog;
    // OVERLAPSCOPE_LIVE_MAX_ROWS: rows held for steps not closed yet.
    size_t liveMaxRows = 1'000'000;
    // The look-back ring (docs/agent.md "Look-back"): OVERLAPSCOPE_LOOKBACK_STEPS
    // (-1: 5 when live metrics or a condition run, else none) and
    // OVERLAPSCOPE_LOOKBACK_MAX_ROWS; OVERLAPSCOPE_TRIGGER_DIR, where the job's
    // ranks on every node share --capture-when triggers; OVERLAPSCOPE_RUN_ID,
    // the `overlapscope run` that started the job (who its other ranks are
    // when no job name says).
    int lookbackSteps = -1;
    size_t lookbackMaxRows = 200'000;
    std::string triggerDir;
    std::string runId;

    // The look-back ring's steps, the default applied.
    size_t lookback() const {
        if (lookbackSteps >= 0) return static_cast<size_t>(lookbackSteps);
        return (!metricsFile.empty() || metricsPort >= 0 || !captureWhen.empty()) ? 5 : 0;
    }
    // The record stream runs from boot, without a capture file.
    bool alwaysOn() const {
        return !metricsFile.empty() || metricsPort >= 0 || !captureWhen.empty() || lookbackSteps > 0;
    }
};

// Reads the OVERLAPSCOPE_* variables. Malformed values keep the default and
// append a one-line note to `warnings` (the agent must not stop the job).
AgentSettings settingsFromEnvironment(std::string& warnings);

// Size of one activity buffer for a given bound: CUPTI recommends 1-10 MB;
// small bounds get smaller buffers so at least two fit.
size_t activityBufferBytes(size_t boundBytes);

}  // namespace osc::agent
