// `--help` layout: the command list of `overlapscope --help` names each
// subcommand with one line (the first line of its description), and a
// subcommand's own help opens with an example before its description.
// describe() sets both, one place per command.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace osc::cli {

class HelpFormatter : public CLI::Formatter {
public:
    // `example`: a whole command line ("overlapscope report runs/"); empty
    // for the top-level app.
    explicit HelpFormatter(std::string example = {}) : example_(std::move(example)) {}
    std::string make_subcommand(const CLI::App* sub) const override;
    std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override;

private:
    std::string example_;
};

// The command's description: `summary` (one line, for the parent's list),
// then `details` (its whole story: inputs, behaviour, "Exit codes: ..."), and
// `example` for the top of its own help. Subcommands added to `cmd` later
// inherit its formatter; give them a describe() of their own.
void describe(CLI::App* cmd, const std::string& summary, const std::string& example, const std::string& details = {});

}  // namespace osc::cli
