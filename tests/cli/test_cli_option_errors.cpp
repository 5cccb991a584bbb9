// Issue 29 item 12: option errors are one line like every other bad input,
// and an empty file name is one of them, not standard output.
#include "cli_fixture.h"

// Item 12: an empty output name is an option error, not standard output.
TEST_F(Cli, AnEmptyOutputNameIsAnError) {
    const auto f = bucketed(1);
    for (const std::string& args : std::vector<std::string>{
             "report -o '' " + quote(f), "report --partial -o '' " + quote(f), "check --junit '' " + quote(f),
             "diff -o '' " + quote(f) + " " + quote(f), "export -o '' " + quote(f), "whatif -o '' " + quote(f),
             "synth -o ''", "merge -o '' " + quote(f), "check --baseline '' " + quote(f)}) {
        const auto r = run(args);
        EXPECT_EQ(r.code, 2) << args;
        EXPECT_TRUE(r.out.empty()) << args << ": " << r.out.substr(0, 200);
        EXPECT_EQ(r.err.rfind("overlapscope: ", 0), 0u) << args << ": " << r.err;
        EXPECT_NE(r.err.find("an empty file name"), std::string::npos) << args << ": " << r.err;
        EXPECT_EQ(lineCount(r.err), 1u) << args << ": " << r.err;
    }
}

// Item 12: option errors are one line with the program's prefix, exit 2.
TEST_F(Cli, OptionErrorsAreOneLine) {
    const auto f = bucketed(1);
    for (const std::string& args : std::vector<std::string>{
             "report --no-such-option " + quote(f), "report", "check --min-overlap-ratio x " + quote(f),
             "no-such-command", "", "report --format yaml " + quote(f)}) {
        const auto r = run(args);
        EXPECT_EQ(r.code, 2) << args;
        EXPECT_EQ(lineCount(r.err), 1u) << args << ": " << r.err;
        EXPECT_EQ(r.err.rfind("overlapscope: ", 0), 0u) << args << ": " << r.err;
        EXPECT_NE(r.err.find("--help"), std::string::npos) << args << ": " << r.err;
    }
    const auto help = run("report --help");
    EXPECT_EQ(help.code, 0);
    EXPECT_NE(help.out.find("--output"), std::string::npos);
}
