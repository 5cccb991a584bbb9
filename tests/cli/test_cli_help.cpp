// Issue 49 item 4: `overlapscope --help` names each subcommand with one
// line, and each subcommand's help opens with an example that runs.
#include "cli_fixture.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

namespace {

// Every subcommand, written here rather than read from the help under test.
const std::vector<std::string> kCommands = {"report", "merge", "check",  "diff",   "export", "whatif", "hang",
                                            "synth",  "run",   "attach", "detach", "dump",   "ps"};
// Those that talk to agents or start a job: their examples need a job to
// do their work, so only their parsing is checked.
const std::set<std::string> kAgentCommands = {"run", "attach", "detach", "dump", "ps"};

std::vector<std::string> linesOf(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// The lines of the "Subcommands:" section of the top-level help.
std::vector<std::string> commandList(const std::string& help) {
    std::vector<std::string> list;
    bool in = false;
    for (const auto& line : linesOf(help)) {
        if (line == "Subcommands:") {
            in = true;
        } else if (in) {
            if (line.empty()) break;
            list.push_back(line);
        }
    }
    return list;
}

std::string firstWord(const std::string& line) {
    const size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos) return {};
    return line.substr(start, line.find(' ', start) - start);
}

// "  report      Print how..." -> "Print how..."
std::string summaryOf(const std::string& line) {
    const size_t name = line.find_first_not_of(' ');
    const size_t gap = line.find(' ', name);
    const size_t text = line.find_first_not_of(' ', gap);
    return text == std::string::npos ? std::string() : line.substr(text);
}

}  // namespace

TEST_F(Cli, TopLevelHelpNamesEachSubcommandWithOneLine) {
    const auto r = run("--help");
    ASSERT_EQ(r.code, 0) << r.err;
    const auto list = commandList(r.out);
    ASSERT_EQ(list.size(), kCommands.size()) << r.out;
    std::map<std::string, int> named;
    for (const auto& line : list) {
        ++named[firstWord(line)];
        EXPECT_LE(line.size(), 100u) << line;
        EXPECT_FALSE(summaryOf(line).empty()) << line;
    }
    for (const auto& c : kCommands) EXPECT_EQ(named[c], 1) << c << " in\n" << r.out;
    // The way to the details is said.
    EXPECT_NE(r.out.find("overlapscope COMMAND --help"), std::string::npos) << r.out;
}

// Each subcommand's help: the example first, then the one-line summary the
// top-level list shows, then the rest of the description; the whole
// description stays (its exit codes above all).
TEST_F(Cli, EachSubcommandsHelpStartsWithAnExampleThenItsDescription) {
    std::map<std::string, std::string> summaries;
    for (const auto& line : commandList(run("--help").out)) summaries[firstWord(line)] = summaryOf(line);
    for (const auto& c : kCommands) {
        const auto r = run(c + " --help");
        ASSERT_EQ(r.code, 0) << c << ": " << r.err;
        auto lines = linesOf(r.out);
        std::erase(lines, std::string());
        ASSERT_GE(lines.size(), 3u) << r.out;
        EXPECT_EQ(lines[0].rfind("Example: overlapscope " + c + " ", 0), 0u) << c << ": " << lines[0];
        EXPECT_EQ(lines[1], summaries[c]) << c;
        EXPECT_NE(r.out.find("Usage: overlapscope " + c), std::string::npos) << r.out;
    }
    for (const auto& c : {"report", "merge", "check", "diff", "export", "whatif", "hang", "synth"})
        EXPECT_NE(run(std::string(c) + " --help").out.find("Exit codes: 0 "), std::string::npos) << c;
}

// The examples run: the analysis commands' on synthetic captures under the
// names the examples use (exit 0), the agents' with no agent about (no
// usage error: the options they name exist and fit together).
TEST_F(Cli, EverySubcommandsExampleRuns) {
    const auto work = path("work"), empty = path("empty"), sockets = path("sockets");
    fs::create_directories(work);
    fs::create_directories(empty);
    fs::create_directories(sockets);
    fs::permissions(sockets, fs::perms::owner_all);  // as the agents' own directory must be
    ASSERT_EQ(runIn(work, "", "synth --ranks 2 -o runs").code, 0);
    ASSERT_EQ(runIn(work, "", "report --format json -o baseline.json runs").code, 0);
    fs::create_directories(fs::path(work) / "partials");
    ASSERT_EQ(runIn(work, "", "report --partial -o partials/job.partial.json runs").code, 0);
    // No agent of this user is reached, and no job named in an example is started.
    const std::string env = "OVERLAPSCOPE_SOCKET_DIR=" + quote(sockets) + " PATH=/usr/bin:/bin";

    for (const auto& c : kCommands) {
        const auto help = run(c + " --help").out;
        const std::string prefix = "Example: overlapscope ";
        const size_t at = help.find(prefix);
        ASSERT_NE(at, std::string::npos) << help;
        const size_t start = at + prefix.size();
        const std::string args = help.substr(start, help.find('\n', start) - start);
        // synth writes runs/ itself: in a directory of its own.
        const auto r = runIn(c == "synth" ? empty : work, env, args, 60);
        EXPECT_EQ(r.err.find("--help)"), std::string::npos) << args << ": a usage error: " << r.err;
        if (c == "attach" || c == "detach" || c == "dump") {  // parsed, then looked for agents
            EXPECT_NE(r.err.find("no running agents"), std::string::npos) << args << ": " << r.err;
        } else if (!kAgentCommands.count(c)) {
            EXPECT_EQ(r.code, 0) << args << ": " << r.err;
            EXPECT_TRUE(c == "export" || !r.out.empty()) << args;
        }
    }
    EXPECT_TRUE(fs::exists(fs::path(work) / "trace.json"));
    EXPECT_TRUE(fs::exists(fs::path(work) / "check.xml"));
    EXPECT_TRUE(fs::is_directory(fs::path(empty) / "runs"));
}
