// A job's analysis, whatever the user has: one capture (analysed in memory),
// several captures or a directory of them (analysed file by file on worker
// threads and merged), partial results (merged), or a saved report (read
// back). The CLI, the GUI and the tests call these; the CLI keeps only its
// flags, progress lines and printing.
#pragma once

#include "analyzer/job/capture_file.h"
#include "analyzer/job/file_workers.h"
#include "analyzer/metrics/analysis.h"
#include "analyzer/partial/merge.h"
#include "analyzer/report/report_options.h"

#include <atomic>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace osc::job {

// FileParts: capture files' parts in analyzer/partial/device_codec.h's
// bytes, one part per file (encodeFilePart), made by this build elsewhere
// (overlapscope.distributed's workers): merged as the parts of this
// process's own threads are, no JSON on the way. Never found by
// classifyJob: only their maker names them.
enum class JobKind { Captures, Partials, SavedReport, FileParts };

struct JobInputs {
    JobKind kind = JobKind::Captures;
    // Partials: the partial files, directories expanded; FileParts: the part
    // files in the job's file order; otherwise as given.
    std::vector<std::string> paths;
};

// By content (analyzer/load/input_kind.h): partial results (files, or
// directories holding only partials), one saved report, or captures
// (anything else, checked when read). Throws std::invalid_argument for a
// mix, CaptureError for an input that cannot be opened.
JobInputs classifyJob(const std::vector<std::string>& paths);
// Files and directories of partial results; throws CaptureError for a
// directory without any.
std::vector<std::string> partialFiles(const std::vector<std::string>& paths);
// What the partial files were made from (their "inputs", in order): the
// inputs a merged report names.
std::vector<std::string> partialInputs(const std::vector<std::string>& partialFiles);

struct JobRequest {
    AnalysisSettings settings;
    int jobs = 0;               // worker threads for several captures; 0 = every core
    std::optional<bool> align;  // partials: --align for the merge; unset: what they were made with
    bool collectives = true;    // false: totals and steps only (check, diff)
    // false: no kernel launch columns at all (the kernel signatures then lose
    // grid and block); the job reads only the shape (LoadOptions::launchShapeOnly).
    bool launchDetails = true;
};

// What a job tells its caller while it runs; every member may be empty.
struct JobProgress {
    // One capture being read: the fraction of the file and its stage.
    std::function<void(double fraction, std::string_view stage)> loading;
    // Work of unknown length begins ("analyzing"), or (empty stage) ends.
    std::function<void(std::string_view stage)> status;
    // Counted work: "analyzing" files, "reading" partial results,
    // "merging" devices; done of total.
    std::function<void(std::string_view verb, size_t done, size_t total)> counted;
    // While several capture files are analysed: the share of them read so
    // far, within files too (for a line that advances while a big file is read).
    std::function<void(double fraction)> reading;
    // Warnings of the readers and of the analysis, as they become known.
    std::function<void(const std::vector<std::string>& warnings)> warnings;
    // Set from another thread to abandon the job (LoadCancelled).
    const std::atomic<bool>* cancel = nullptr;
};

// The merge's options for a request: its threads, --align and link peak;
// "merging" progress and cancel (LoadCancelled) from `progress`.
partial::MergeOptions mergeOptions(const JobRequest& request, const JobProgress& progress);

// True when the job is analysed file by file and merged (several capture
// files, or partials), rather than in memory.
bool streamed(const JobInputs& inputs);

// The job's analysis. Devices read back from partial files (or a saved
// report) come without exposed_wait_intervals and their operations without
// kernelIndex: the report JSON does not carry them. `madeFrom`,
// when given, gets what the analysis was made from: the inputs recorded in
// partials or a saved report, else the paths themselves.
Analysis analyzeJob(const JobInputs& inputs, const JobRequest& request, const JobProgress& progress = {},
                    std::vector<std::string>* madeFrom = nullptr);

// The report JSON, streamed: for several captures or partials the devices
// never sit in memory together.
void writeJobJson(const JobInputs& inputs, const JobRequest& request, const report::ReportOptions& options,
                  std::ostream& out, const JobProgress& progress = {});

// The text or Markdown report (`markdown` false: text).
std::string jobReport(const JobInputs& inputs, const JobRequest& request, const report::ReportOptions& options,
                      bool markdown, const JobProgress& progress = {});

// `report --partial`: the captures analysed file by file on worker threads;
// AnalyzedFiles::writePartial then writes them as one partial result.
std::unique_ptr<AnalyzedFiles> analyzeFiles(const std::vector<std::string>& captures, const JobRequest& request,
                                            const JobProgress& progress = {});

}  // namespace osc::job
