// `overlapscope`: how much of a GPU job's communication hides behind compute.
#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/printable_text.h"
#include "cli/cluster_parts.h"
#include "cli/commands.h"
#include "cli/help_format.h"

#include <cstdio>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>

namespace {

// An option given an empty value (`--steps ''`, `--metrics-port ""`) is a
// mistake, never a choice: left alone it reads as "not given" and does the
// default, which may be a whole capture where none was meant. Named options
// only: a command's own arguments after `run --` may well be empty.
std::string emptyOptionValue(const CLI::App& app, const std::string& command) {
    for (const CLI::App* sub : app.get_subcommands()) {
        const std::string name = command + " " + sub->get_name();
        for (const CLI::Option* o : sub->get_options()) {
            if (!o->nonpositional() || o->get_type_size_max() == 0 || o->count() == 0) continue;
            for (const std::string& value : o->results())
                if (value.empty()) return name + ": " + o->get_name() + " takes a value; it was given an empty one";
        }
        if (std::string inner = emptyOptionValue(*sub, name); !inner.empty()) return inner;
    }
    return {};
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "overlapscope: how much of your GPU communication is hidden behind computation, where it\n"
        "is not, and why. Reads overlapscope captures, Nsight Systems SQLite exports and PyTorch\n"
        "profiler traces.",
        "overlapscope"};
    app.require_subcommand(1);
    // Before the subcommands: the list names each with one line.
    app.formatter(std::make_shared<osc::cli::HelpFormatter>());
    app.footer("Run `overlapscope COMMAND --help` for an example, the details and every option of a command.");
    app.set_version_flag("--version", std::string("overlapscope ") + OSC_VERSION);

    osc::cli::CommandRunner selected;
    osc::cli::addReportCommand(app, selected);
    osc::cli::addMergeCommand(app, selected);
    osc::cli::addCheckCommand(app, selected);
    osc::cli::addDiffCommand(app, selected);
    osc::cli::addExportCommand(app, selected);
    osc::cli::addWhatIfCommand(app, selected);
    osc::cli::addHangCommand(app, selected);
    osc::cli::addSynthCommand(app, selected);
    osc::cli::addAgentCommands(app, selected);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
        // Usage errors are bad input: one line and exit 2 like every other
        // bad input, naming the subcommand whose --help explains it.
        std::string command = "overlapscope";
        for (const CLI::App* sub = &app; !sub->get_subcommands().empty();) {
            sub = sub->get_subcommands().front();
            command += " " + sub->get_name();
        }
        std::fprintf(stderr, "overlapscope: %s (see %s --help)\n", osc::printableLine(e.what()).c_str(),
                     command.c_str());
        return 2;
    }
    if (const std::string empty = emptyOptionValue(app, "overlapscope"); !empty.empty()) {
        std::fprintf(stderr, "%s\n", osc::printableLine(empty).c_str());
        return 2;
    }
    try {
        return selected ? selected() : 0;
    } catch (const osc::cli::ExitWith& e) {
        return e.status;  // said already
    } catch (const osc::CaptureError& e) {
        std::fprintf(stderr, "overlapscope: %s\n", osc::printableLine(e.what()).c_str());
        return 2;
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "overlapscope: %s\n", osc::printableLine(e.what()).c_str());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "overlapscope: %s\n", osc::printableLine(e.what()).c_str());
        return 3;
    }
}
