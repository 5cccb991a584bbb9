// The built programs' command line: --help, bad options and bad launch
// environments all end before any GPU is touched, so they run in CI.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

struct Result {
    int code = -1;
    std::string output;
};

Result run(const std::string& command) {
    Result r;
    FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
    if (!pipe) return r;
    std::array<char, 4096> buf{};
    while (std::fgets(buf.data(), buf.size(), pipe)) r.output += buf.data();
    int status = ::pclose(pipe);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

const char* const kPrograms[] = {OSC_DDP_OVERLAP, OSC_TP_OVERLAP, OSC_FSDP_PREFETCH, OSC_PP_OVERLAP, OSC_MOE_ALLTOALL};

int lines(const std::string& s) {
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
}

TEST(WorkloadPrograms, HelpExitsZeroAndListsCommonOptions) {
    for (const char* p : kPrograms) {
        Result r = run(std::string(p) + " --help");
        EXPECT_EQ(r.code, 0) << p;
        for (const char* opt : {"--steps", "--warmup", "--dtype", "--comm", "--gpus", "--ranks", "--rendezvous"})
            EXPECT_NE(r.output.find(opt), std::string::npos) << p << " " << opt;
    }
    EXPECT_NE(run(std::string(OSC_DDP_OVERLAP) + " --help").output.find("--bucket-mb"), std::string::npos);
    EXPECT_NE(run(std::string(OSC_DDP_OVERLAP) + " --help").output.find("--cuda-graph"), std::string::npos);
    EXPECT_NE(run(std::string(OSC_TP_OVERLAP) + " --help").output.find("--chunks"), std::string::npos);
    EXPECT_NE(run(std::string(OSC_TP_OVERLAP) + " --help").output.find("serial|pipelined|ring"), std::string::npos);
    EXPECT_NE(run(std::string(OSC_DDP_OVERLAP) + " --help").output.find("zero1"), std::string::npos);
    EXPECT_NE(run(std::string(OSC_FSDP_PREFETCH) + " --help").output.find("--prefetch"), std::string::npos);
    for (const char* opt : {"--schedule", "--overlap", "--microbatches", "--mb-size"})
        EXPECT_NE(run(std::string(OSC_PP_OVERLAP) + " --help").output.find(opt), std::string::npos) << opt;
    for (const char* opt : {"--imbalance", "--overlap", "--chunks", "--ffn"})
        EXPECT_NE(run(std::string(OSC_MOE_ALLTOALL) + " --help").output.find(opt), std::string::npos) << opt;
}

TEST(WorkloadPrograms, BadOptionIsOneLineAndExitTwo) {
    for (const char* p : kPrograms) {
        Result r = run(std::string(p) + " --no-such-option");
        EXPECT_EQ(r.code, 2) << p;
        EXPECT_EQ(lines(r.output), 1) << r.output;
        EXPECT_NE(r.output.find("unknown option --no-such-option"), std::string::npos) << r.output;
    }
    Result r = run(std::string(OSC_DDP_OVERLAP) + " --mode overlapped");
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.output,
              "ddp_overlap: --mode must be one of none|sequential|per-param|bucketed|zero1, got 'overlapped'\n");
}

TEST(WorkloadPrograms, BadLaunchEnvironmentIsExitTwo) {
    Result r = run("env RANK=2 WORLD_SIZE=2 " + std::string(OSC_TP_OVERLAP));
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.output, "tp_overlap: RANK=2 is not below WORLD_SIZE=2\n");
    r = run("env RANK=0 WORLD_SIZE=4 " + std::string(OSC_FSDP_PREFETCH) + " --comm copies");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.output.find("--comm copies runs a single rank"), std::string::npos) << r.output;
    r = run("env RANK=0 WORLD_SIZE=2 " + std::string(OSC_DDP_OVERLAP) + " --gpus 2");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.output.find("--gpus drives every GPU from one process"), std::string::npos) << r.output;
    // --ranks under another launcher's ranks: refused before any rank starts.
    r = run("env -u OSC_SPAWNED_RANK RANK=0 WORLD_SIZE=4 " + std::string(OSC_TP_OVERLAP) + " --ranks 2");
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.output, "tp_overlap: --ranks starts its own 2 ranks; do not combine it with torchrun starting 4\n");
}

TEST(WorkloadPrograms, RanksStartsTheProgramOncePerRank) {
    // Without a GPU each rank fails at its first CUDA call; the launcher must
    // start both, report the failure and exit non-zero, not hang.
    Result r = run("env -u RANK -u WORLD_SIZE -u OSC_SPAWNED_RANK " + std::string(OSC_DDP_OVERLAP) +
                   " --ranks 2 --steps 1 --warmup 0");
    EXPECT_NE(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("ddp_overlap: launch: starting 2 rank processes on this host (--ranks)"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("ddp_overlap: rank "), std::string::npos) << r.output;
}

}  // namespace
