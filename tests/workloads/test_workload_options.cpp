// Argument parsing of the three programs: defaults, accepted spellings and
// the one-line errors for bad input.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "reference_workloads/support/workload_error.h"
#include "reference_workloads/support/workload_options.h"

namespace oscwl {
namespace {

// argv with a program name in front.
struct Argv {
    explicit Argv(std::initializer_list<const char*> args) {
        items.push_back("prog");
        items.insert(items.end(), args.begin(), args.end());
    }
    int argc() const { return static_cast<int>(items.size()); }
    const char* const* argv() const { return items.data(); }
    std::vector<const char*> items;
};

template <typename F>
std::string usage_error(F&& f) {
    try {
        f();
    } catch (const UsageError& e) {
        return e.what();
    }
    return "<no UsageError>";
}

TEST(DdpOptions, Defaults) {
    Argv a{};
    DdpOptions o = parse_ddp_options(a.argc(), a.argv());
    EXPECT_EQ(o.hidden, 1024);
    EXPECT_EQ(o.batch, 1024);
    EXPECT_EQ(o.layers, 16);
    EXPECT_EQ(o.mode, DdpMode::bucketed);
    EXPECT_DOUBLE_EQ(o.bucket_mb, 25.0);
    EXPECT_EQ(o.common.steps, 20);
    EXPECT_EQ(o.common.warmup, 5);
    EXPECT_EQ(o.common.dtype, DType::fp32);
    EXPECT_EQ(o.common.comm, CommBackend::nccl);
    EXPECT_EQ(o.common.gpus, 0);
    EXPECT_EQ(o.common.ranks, 0);
    EXPECT_FALSE(o.cuda_graph);
    EXPECT_TRUE(o.common.check);
}

TEST(DdpOptions, RanksAndCudaGraphKeepTheCommandLine) {
    Argv a{"--ranks", "2", "--cuda-graph", "--mode", "sequential"};
    DdpOptions o = parse_ddp_options(a.argc(), a.argv());
    EXPECT_EQ(o.common.ranks, 2);
    EXPECT_TRUE(o.cuda_graph);
    // --ranks starts the ranks with this very command line.
    EXPECT_EQ(o.common.argv,
              (std::vector<std::string>{"prog", "--ranks", "2", "--cuda-graph", "--mode", "sequential"}));
}

TEST(DdpOptions, ValuesInBothSpellings) {
    Argv a{"--mode",
           "per-param",
           "--hidden=1024",
           "--batch",
           "32",
           "--layers=3",
           "--dtype",
           "bf16",
           "--steps",
           "7",
           "--warmup=0",
           "--comm",
           "copies",
           "--no-check",
           "--verbose",
           "--rendezvous",
           "tcp://10.0.0.1:29500"};
    DdpOptions o = parse_ddp_options(a.argc(), a.argv());
    EXPECT_EQ(o.mode, DdpMode::per_param);
    EXPECT_EQ(o.hidden, 1024);
    EXPECT_EQ(o.batch, 32);
    EXPECT_EQ(o.layers, 3);
    EXPECT_EQ(o.common.dtype, DType::bf16);
    EXPECT_EQ(o.common.steps, 7);
    EXPECT_EQ(o.common.warmup, 0);
    EXPECT_EQ(o.common.comm, CommBackend::copies);
    EXPECT_FALSE(o.common.check);
    EXPECT_TRUE(o.common.verbose);
    EXPECT_EQ(o.common.rendezvous, "tcp://10.0.0.1:29500");
}

TEST(DdpOptions, BucketMbOnlyWithBucketed) {
    Argv ok{"--mode", "bucketed", "--bucket-mb", "4.5"};
    EXPECT_DOUBLE_EQ(parse_ddp_options(ok.argc(), ok.argv()).bucket_mb, 4.5);
    Argv bad{"--mode", "sequential", "--bucket-mb", "4"};
    EXPECT_NE(usage_error([&] { parse_ddp_options(bad.argc(), bad.argv()); }).find("--bucket-mb"), std::string::npos);
}

TEST(DdpOptions, Zero1TakesBucketsAndNeedsShardableLayers) {
    Argv a{"--mode", "zero1", "--bucket-mb", "8", "--hidden", "6"};
    DdpOptions o = parse_ddp_options(a.argc(), a.argv());
    EXPECT_EQ(o.mode, DdpMode::zero1);
    EXPECT_DOUBLE_EQ(o.bucket_mb, 8.0);
    EXPECT_STREQ(to_string(o.mode), "zero1");
    EXPECT_NO_THROW(validate_for_world(o, 4));  // 36 % 4 == 0
    EXPECT_NE(usage_error([&] { validate_for_world(o, 5); }).find("to shard the buckets"), std::string::npos);
    o.mode = DdpMode::bucketed;  // only zero1 shards
    EXPECT_NO_THROW(validate_for_world(o, 5));
    Argv graph{"--mode", "zero1", "--cuda-graph"};
    EXPECT_NE(usage_error([&] { parse_ddp_options(graph.argc(), graph.argv()); }).find("--cuda-graph"),
              std::string::npos);
}

TEST(DdpOptions, RejectsBadInputWithOneLineNamingTheOption) {
    struct Case {
        std::vector<const char*> args;
        std::string expect;
    };
    const std::vector<Case> cases = {
        {{"--mode", "fast"}, "--mode must be one of none|sequential|per-param|bucketed|zero1"},
        {{"--hidden", "abc"}, "--hidden expects an integer"},
        {{"--hidden", "0"}, "--hidden must be between 1"},
        {{"--steps", "-3"}, "--steps must be between 1"},
        {{"--steps"}, "--steps needs a value"},
        {{"--steps="}, "--steps needs a value"},
        {{"--bogus"}, "unknown option --bogus"},
        {{"stray"}, "unexpected argument 'stray'"},
        {{"--dtype", "fp16"}, "--dtype must be one of fp32|bf16"},
        {{"--verbose=1"}, "--verbose takes no value"},
        {{"--lr", "x"}, "--lr expects a number"},
        {{"--rendezvous", "http://x"}, "--rendezvous must start with file: or tcp://"},
        {{"--comm", "copies", "--gpus", "2"}, "cannot be combined with --gpus"},
        {{"--batch", "99999999999999999999"}, "--batch expects an integer"},
        {{"--ranks", "2", "--comm", "copies"}, "cannot be combined with --ranks 2"},
        {{"--ranks", "2", "--gpus", "2"}, "--ranks starts one process per rank"},
        {{"--ranks", "65"}, "--ranks must be between 0"},
        {{"--cuda-graph=1"}, "--cuda-graph takes no value"},
    };
    for (const Case& c : cases) {
        std::vector<const char*> argv{"prog"};
        argv.insert(argv.end(), c.args.begin(), c.args.end());
        std::string msg = usage_error([&] { parse_ddp_options(static_cast<int>(argv.size()), argv.data()); });
        EXPECT_NE(msg.find(c.expect), std::string::npos) << "got: " << msg << "\nwanted: " << c.expect;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
}

TEST(DdpOptions, HelpListsEveryOption) {
    Argv a{"--hidden", "12", "--help"};
    try {
        parse_ddp_options(a.argc(), a.argv());
        FAIL() << "no HelpRequested";
    } catch (const HelpRequested& h) {
        std::string text = h.what();
        for (const char* opt : {"--steps", "--warmup", "--dtype", "--comm", "--gpus", "--ranks", "--rendezvous",
                                "--hidden", "--batch", "--layers", "--mode", "--bucket-mb", "--cuda-graph", "--help"})
            EXPECT_NE(text.find(opt), std::string::npos) << opt;
    }
}

TEST(TpOptions, DefaultsAndSerialForcesOneChunk) {
    Argv a{"--hidden", "256"};
    TpOptions o = parse_tp_options(a.argc(), a.argv());
    EXPECT_EQ(o.ffn, 1024);  // 4 x hidden
    EXPECT_EQ(o.mode, TpMode::pipelined);
    EXPECT_EQ(o.chunks, 4);
    Argv s{"--mode", "serial"};
    EXPECT_EQ(parse_tp_options(s.argc(), s.argv()).chunks, 1);
    Argv bad{"--mode", "serial", "--chunks", "2"};
    EXPECT_NE(usage_error([&] { parse_tp_options(bad.argc(), bad.argv()); }).find("--chunks"), std::string::npos);
}

TEST(TpOptions, WorldSizeDivisibility) {
    Argv a{"--hidden", "64", "--ffn", "96", "--tokens", "48", "--chunks", "3"};
    TpOptions o = parse_tp_options(a.argc(), a.argv());
    EXPECT_NO_THROW(validate_for_world(o, 1));
    EXPECT_NO_THROW(validate_for_world(o, 2));  // 96 % 2, 48 % 6
    EXPECT_NE(usage_error([&] { validate_for_world(o, 5); }).find("--ffn 96"), std::string::npos);
    EXPECT_NE(usage_error([&] { validate_for_world(o, 32); }).find("--tokens 48"), std::string::npos);
    EXPECT_NO_THROW(validate_for_world(o, 16));  // 3 tokens per rank, 3 chunks of 1
    EXPECT_NE(usage_error([&] { validate_for_world(o, 24); }).find("2 tokens per rank cannot form 3 chunks"),
              std::string::npos);
}

TEST(TpOptions, RingTakesChunksOnlyForOneRank) {
    Argv a{"--mode", "ring", "--hidden", "64", "--ffn", "96", "--tokens", "48", "--chunks", "6"};
    TpOptions o = parse_tp_options(a.argc(), a.argv());
    EXPECT_EQ(o.mode, TpMode::ring);
    EXPECT_STREQ(to_string(o.mode), "ring");
    EXPECT_EQ(o.chunks, 6);
    EXPECT_NO_THROW(validate_for_world(o, 1));   // 48 tokens in 6 loopback positions
    EXPECT_NO_THROW(validate_for_world(o, 16));  // 3 tokens per rank: a ring has one position per rank
    Argv few{"--mode", "ring", "--tokens", "5", "--chunks", "6"};
    TpOptions f = parse_tp_options(few.argc(), few.argv());
    EXPECT_NE(usage_error([&] { validate_for_world(f, 1); }).find("5 tokens per rank cannot form 6 chunks"),
              std::string::npos);
}

TEST(PpOptions, DefaultsAndChoices) {
    Argv a{};
    PpOptions o = parse_pp_options(a.argc(), a.argv());
    EXPECT_EQ(o.schedule, PipeSchedule::one_f_one_b);
    EXPECT_FALSE(o.overlap);
    EXPECT_EQ(o.microbatches, 8);
    EXPECT_EQ(o.layers, 4);
    EXPECT_EQ(o.mb_tokens, 256);
    Argv b{"--schedule", "gpipe", "--overlap", "--microbatches", "3", "--mb-size=64", "--layers", "2"};
    PpOptions p = parse_pp_options(b.argc(), b.argv());
    EXPECT_EQ(p.schedule, PipeSchedule::gpipe);
    EXPECT_TRUE(p.overlap);
    EXPECT_EQ(p.microbatches, 3);
    EXPECT_EQ(p.mb_tokens, 64);
    EXPECT_EQ(p.layers, 2);
    Argv bad{"--schedule", "interleaved"};
    EXPECT_NE(
        usage_error([&] { parse_pp_options(bad.argc(), bad.argv()); }).find("--schedule must be one of gpipe|1f1b"),
        std::string::npos);
    Argv zero{"--microbatches", "0"};
    EXPECT_NE(usage_error([&] { parse_pp_options(zero.argc(), zero.argv()); }).find("--microbatches must be between 1"),
              std::string::npos);
}

TEST(MoeOptions, ChunksOnlyWithOverlapAndEnoughTokens) {
    Argv a{"--imbalance", "4", "--tokens", "64"};
    MoeOptions o = parse_moe_options(a.argc(), a.argv());
    EXPECT_DOUBLE_EQ(o.imbalance, 4.0);
    EXPECT_FALSE(o.overlap);
    EXPECT_EQ(o.chunks, 1);  // serial
    Argv b{"--overlap", "--chunks", "8", "--tokens", "64"};
    MoeOptions p = parse_moe_options(b.argc(), b.argv());
    EXPECT_TRUE(p.overlap);
    EXPECT_EQ(p.chunks, 8);
    EXPECT_NO_THROW(validate_for_world(p, 8));  // 64 tokens >= 8 ranks x 8 chunks
    EXPECT_NE(usage_error([&] { validate_for_world(p, 9); }).find("--tokens 64 must be at least"), std::string::npos);
    Argv c{"--chunks", "2"};
    EXPECT_NE(usage_error([&] { parse_moe_options(c.argc(), c.argv()); }).find("--chunks applies only with --overlap"),
              std::string::npos);
    Argv d{"--imbalance", "0.5"};
    EXPECT_NE(usage_error([&] { parse_moe_options(d.argc(), d.argv()); }).find("--imbalance must be between 1"),
              std::string::npos);
}

TEST(FsdpOptions, PrefetchRangeAndDivisibility) {
    Argv a{"--prefetch", "2", "--hidden", "6"};
    FsdpOptions o = parse_fsdp_options(a.argc(), a.argv());
    EXPECT_EQ(o.prefetch, 2);
    EXPECT_NO_THROW(validate_for_world(o, 4));  // 36 % 4 == 0
    EXPECT_NE(usage_error([&] { validate_for_world(o, 5); }).find("divisible"), std::string::npos);
    Argv bad{"--prefetch", "3"};
    EXPECT_NE(
        usage_error([&] { parse_fsdp_options(bad.argc(), bad.argv()); }).find("--prefetch must be between 0 and 2"),
        std::string::npos);
}

}  // namespace
}  // namespace oscwl
