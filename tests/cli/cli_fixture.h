// The end-to-end test fixture: runs the built `overlapscope` binary in a
// fresh private temporary directory per test and captures exit code, stdout,
// stderr.
#pragma once

#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

struct CliResult {
    int code = -1;
    std::string out, err;
};

inline std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

inline std::string quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

class Cli : public ::testing::Test {
protected:
    // Runs `overlapscope ARGS` (ARGS already shell-quoted where needed).
    // With timeoutSeconds > 0 the command is killed after that long (exit
    // code 137): a test of "never hangs" fails instead of hanging.
    CliResult run(const std::string& args, int timeoutSeconds = 0) { return runIn("", "", args, timeoutSeconds); }
    // The same in directory `cwd` (this process's when empty), with `env`
    // ("NAME=value ...", shell-quoted) added to the environment.
    CliResult runIn(const std::string& cwd, const std::string& env, const std::string& args, int timeoutSeconds = 0) {
        const auto out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
        const std::string limit = timeoutSeconds > 0 ? "timeout -s KILL " + std::to_string(timeoutSeconds) + " " : "";
        const std::string cmd = (cwd.empty() ? "" : "cd " + quote(cwd) + " && ") +
                                (env.empty() ? "" : "env " + env + " ") + limit + std::string(OSC_CLI_PATH) + " " +
                                args + " >" + quote(out.string()) + " 2>" + quote(err.string()) + " </dev/null";
        const int status = std::system(cmd.c_str());
        CliResult r;
        r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        r.out = slurp(out);
        r.err = slurp(err);
        return r;
    }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    // A one-rank bucketed capture with the default model: per step 3 buckets of
    // 1.362177 ms, 2 hidden: overlap ratio 2/3, exposed 1.362177 ms per step.
    std::string bucketed(int steps = 2) {
        const auto f = path("bucketed.sqlite");
        if (!fs::exists(f)) {
            const auto r = run("synth -o " + quote(f) + " --steps " + std::to_string(steps));
            EXPECT_EQ(r.code, 0) << r.err;
        }
        return f;
    }

    const osc::testsupport::TempDir scratch_;
    const fs::path dir_{scratch_.path()};
};

inline size_t lineCount(const std::string& s) {
    size_t n = 0;
    for (char c : s)
        if (c == '\n') ++n;
    return n;
}
