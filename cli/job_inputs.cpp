#include "cli/job_inputs.h"

#include "analyzer/capture/printable_text.h"
#include "cli/cli_common.h"

#include <optional>

namespace osc::cli {

void JobsFlag::addTo(CLI::App* cmd) {
    cmd->add_option("-j,--jobs", jobs,
                    "Analyse several capture files on N threads (default: every core; 1 = one at a time)")
        ->type_name("N")
        ->check(CLI::Range(0, 4096));
}

void ReportLayoutFlags::addTo(CLI::App* cmd) {
    cmd->add_option("--format", format, "text (default), json (docs/design.md section 5) or markdown")
        ->check(CLI::IsMember({"text", "json", "markdown"}));
    cmd->add_flag("--steps", steps, "Add a per-step table (text, markdown; JSON always has steps)");
    cmd->add_flag("--collectives", collectives,
                  "Add the most exposed collectives (and, for several ranks, the largest skews)");
    cmd->add_flag("--interference", interference,
                  "Add a per kernel signature table: compute kernels that ran under communication "
                  "against the same kernel (name, grid, block) alone (text, markdown; JSON always has it)");
    cmd->add_option("--top", top, "Rows in each --collectives table (default 20, 0 = all)");
}

bool ReportLayoutFlags::given(const CLI::App& cmd) const {
    return cmd.count("--format") || steps || collectives || interference || cmd.count("--top");
}

void ReportLayoutFlags::fill(report::ReportOptions& options) const {
    options.steps = steps;
    options.collectives = collectives;
    options.interference = interference;
    options.topCollectives = top;
}

struct JobProgressLines::Lines {
    std::optional<ProgressLine> line;
    std::optional<RateProgress> rate;
    std::string verb;
    void clear() {
        line.reset();
        rate.reset();
        verb.clear();
    }
};

JobProgressLines::JobProgressLines() : lines_(std::make_unique<Lines>()) {
    Lines& l = *lines_;
    progress_.loading = [&l](double fraction, std::string_view stage) {
        if (!l.line) l.line.emplace();
        l.line->show("loading: " + std::string(stage), fraction);
    };
    progress_.status = [&l](std::string_view stage) {
        l.clear();
        if (stage.empty()) return;
        l.line.emplace();
        l.line->status(std::string(stage));
    };
    progress_.counted = [&l](std::string_view verb, size_t done, size_t total) {
        if (verb == "reading") {  // partial files: a fraction, they vary in size
            if (!l.line) l.line.emplace();
            l.line->show("reading partial results", static_cast<double>(done) / static_cast<double>(total));
            return;
        }
        if (!l.rate || l.verb != verb) {
            l.clear();
            l.verb = verb;
            l.rate.emplace(std::string(verb), verb == "merging" ? "devices" : "files");
        }
        l.rate->update(done, total);
    };
    progress_.warnings = [&l](const std::vector<std::string>& warnings) {
        if (!warnings.empty()) l.clear();
        printWarnings(warnings);
    };
}

JobProgressLines::~JobProgressLines() = default;

Analysis analyzeJobWithProgress(const job::JobInputs& inputs, const job::JobRequest& request) {
    JobProgressLines lines;
    return job::analyzeJob(inputs, request, lines.progress());
}

void writeJobReport(const job::JobInputs& inputs, const job::JobRequest& request, const report::ReportOptions& options,
                    const std::string& format, const std::string& output, bool force) {
    JobProgressLines lines;
    if (format == "json") {
        // Streamed: a JSON report lists every collective, millions on big captures.
        writeOutput(
            output, [&](std::ostream& out) { job::writeJobJson(inputs, request, options, out, lines.progress()); },
            force);
        return;
    }
    const std::string text = job::jobReport(inputs, request, options, format == "markdown", lines.progress());
    writeOutput(output, printable(text, /*keepLineBreaks=*/true), force);
}

}  // namespace osc::cli
