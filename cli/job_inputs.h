// The CLI's side of a job (analyzer/job/job.h does the work): the flags the
// analysis commands share, progress lines on a terminal, warnings on
// stderr, and the report written where the user asked.
#pragma once

#include "analyzer/job/job.h"
#include "analyzer/report/report_options.h"

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

namespace osc::cli {

// --jobs N: worker threads for several capture files.
struct JobsFlag {
    int jobs = 0;
    void addTo(CLI::App* cmd);
};

// What a report shows and in which form: the options `report` and `merge`
// share (--format, --steps, --collectives, --interference, --top).
struct ReportLayoutFlags {
    std::string format = "text";
    bool steps = false, collectives = false, interference = false;
    size_t top = 20;
    void addTo(CLI::App* cmd);
    // Whether any of them was given (report --partial refuses them).
    bool given(const CLI::App& cmd) const;
    void fill(report::ReportOptions& options) const;
};

// Progress lines on stderr while a job runs ("loading: kernels 40%",
// "analyzing: 12/1024 files, 8.3 files/s, about 2 min left", "merging: ..."),
// drawn only when stderr is a terminal, and the job's warnings on stderr.
// Keep it alive while the job runs.
class JobProgressLines {
public:
    JobProgressLines();
    ~JobProgressLines();
    const job::JobProgress& progress() const { return progress_; }

private:
    struct Lines;
    std::unique_ptr<Lines> lines_;
    job::JobProgress progress_;
};

// The job's analysis with progress lines and warnings.
Analysis analyzeJobWithProgress(const job::JobInputs& inputs, const job::JobRequest& request);

// The report as `format` says (text, markdown or json) into `output` (stdout
// when empty; an existing file only with `force`). JSON streams
// (job::writeJobJson); text and Markdown pass through printable(), since
// names come from the files and no control bytes or broken UTF-8 may reach a
// terminal.
void writeJobReport(const job::JobInputs& inputs, const job::JobRequest& request, const report::ReportOptions& options,
                    const std::string& format, const std::string& output, bool force);

}  // namespace osc::cli
