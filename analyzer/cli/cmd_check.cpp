// Placeholder until the command lands.
#include "analyzer/cli/commands.h"

#include <cstdio>

namespace osc::cli {

void addCheckCommand(CLI::App& app, CommandRunner& selected) {
    auto* cmd = app.add_subcommand("check", "(not implemented yet)");
    cmd->allow_extras();
    cmd->callback([&selected] {
        selected = [] {
            std::fprintf(stderr, "overlapscope check: not implemented yet\n");
            return 2;
        };
    });
}

}  // namespace osc::cli
