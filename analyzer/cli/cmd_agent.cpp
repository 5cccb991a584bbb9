// Placeholder until the agent control commands land.
#include "analyzer/cli/commands.h"

#include <cstdio>

namespace osc::cli {

void addAgentCommands(CLI::App& app, CommandRunner& selected) {
    for (const char* name : {"run", "attach", "detach", "ps"}) {
        auto* cmd = app.add_subcommand(name, "(not implemented yet)");
        cmd->allow_extras();
        cmd->callback([&selected] {
            selected = [] {
                std::fprintf(stderr, "overlapscope: agent control is not implemented yet\n");
                return 2;
            };
        });
    }
}

}  // namespace osc::cli
