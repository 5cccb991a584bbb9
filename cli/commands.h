// Each `overlapscope` subcommand lives in its own cmd_*.cpp file and adds
// itself to the CLI11 app here. When its subcommand is the one parsed, the
// adder's callback stores what to run in `selected`; main() runs it and maps
// errors to exit codes (2 for bad input).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace osc::cli {

using CommandRunner = std::function<int()>;

void addReportCommand(CLI::App& app, CommandRunner& selected);
void addMergeCommand(CLI::App& app, CommandRunner& selected);
void addCheckCommand(CLI::App& app, CommandRunner& selected);
void addSynthCommand(CLI::App& app, CommandRunner& selected);
void addExportCommand(CLI::App& app, CommandRunner& selected);
void addDiffCommand(CLI::App& app, CommandRunner& selected);
void addWhatIfCommand(CLI::App& app, CommandRunner& selected);
void addHangCommand(CLI::App& app, CommandRunner& selected);
void addAgentCommands(CLI::App& app, CommandRunner& selected);    // run, and the next
void addControlCommands(CLI::App& app, CommandRunner& selected);  // attach, detach, ps, dump

}  // namespace osc::cli
