// Placeholder until the command lands.
#include "analyzer/cli/commands.h"

#include <cstdio>

namespace osc::cli {

void addReportCommand(CLI::App& app, CommandRunner& selected) {
    auto* cmd = app.add_subcommand("report", "(not implemented yet)");
    cmd->allow_extras();
    cmd->callback([&selected] {
        selected = [] {
            std::fprintf(stderr, "overlapscope report: not implemented yet\n");
            return 2;
        };
    });
}

}  // namespace osc::cli
