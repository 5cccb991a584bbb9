// `overlapscope hang` on Flight Recorder dumps as large jobs leave them, run
// as users run it (a child process measured by wait4: wall, CPU, peak RSS),
// medians of --runs:
//
//  A. one rank's dump of 1,000,000 entries as PyTorch's JSON writer leaves
//     it (about 546 MB: sorted keys, compact); target: at most 3 s and
//     500 MB. The same entries as the watchdog's pickle, for reference.
//  B. 10,000 ranks' dumps of one job (64 entries each, the world group's
//     ten thousand ranks listed in every dump, as PyTorch lists them), rank
//     4321 stalled; target: at most 10 s.
//
// Peer in the same run: reading the same bytes (cat to /dev/null), the
// floor any reader has; the ratio says how far above it hang is.
//
//   bench_hang_dumps [--runs R] [--dir DIR] [--only A|B]
//
// The dumps are generated once into DIR (default: the build's bench folder).
#include "bench/child_run.h"
#include "tests/analyzer/flight_recorder_fixture.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

using osc::bench::ChildRun;
using osc::bench::medianOf;
using osc::bench::runProgram;

constexpr int64_t kT0 = 1'760'000'000'000'000'000;

// One entry as nlohmann::json writes a std::map: keys sorted, no spaces.
void appendEntry(std::string& out, int64_t record, int64_t seq, int64_t pgId, const std::string& pg,
                 const std::string& desc, const std::string& op, int64_t in, int64_t outSize, bool done) {
    const int64_t created = kT0 + record * 1'000'000;
    out += "{\"collective_seq_id\":" + std::to_string(seq);
    if (done) out += ",\"duration_ms\":0.8125";
    out += ",\"input_dtypes\":[\"BFloat16\"],\"input_sizes\":[[" + std::to_string(in) +
           ",1024]],\"is_p2p\":false,\"op_id\":" + std::to_string(record + 1) +
           ",\"output_dtypes\":[\"BFloat16\"],\"output_sizes\":[[" + std::to_string(outSize) +
           ",1024]],\"p2p_seq_id\":0,\"pg_id\":" + std::to_string(pgId) + ",\"process_group\":[\"" + pg + "\",\"" +
           desc + "\"],\"profiling_name\":\"nccl:" + op + "\",\"record_id\":" + std::to_string(record) +
           ",\"retired\":" + (done ? "true" : "false") + ",\"state\":\"" + (done ? "completed" : "started") +
           "\",\"thread_id\":\"140702181012224\",\"thread_name\":\"pt_main_thread\",\"time_created_ns\":" +
           std::to_string(created) +
           ",\"time_discovered_completed_ns\":" + std::to_string(done ? created + 900'000 : 0) +
           ",\"time_discovered_started_ns\":" + std::to_string(created + 20'000) + ",\"timeout_ms\":600000}";
}

std::string ranksText(int from, int to, int step = 1) {
    std::string s = "[";
    for (int r = from; r < to; r += step) s += (r == from ? "" : ", ") + std::to_string(r);
    return s + "]";
}

// A: one rank (0 of 8) of a data-, tensor- and expert-parallel job; its last
// all-reduce started and never finished.
void writeBigDump(const std::string& json, const std::string& pickle, int64_t entries) {
    std::printf("  generating a %lld-entry dump in %s...\n", static_cast<long long>(entries), json.c_str());
    std::fflush(stdout);
    std::ofstream out(json, std::ios::binary);
    out << "{\"comm_lib_version\":\"2.21.5\",\"entries\":[";
    osc::test::FrDumpSpec spec;
    spec.groups = {{"0", {"default_pg", {0, 1, 2, 3, 4, 5, 6, 7}}}, {"1", {"tp", {0, 1}}}, {"2", {"ep", {0, 2, 4, 6}}}};
    int64_t seq[3] = {0, 0, 0};
    std::string chunk;
    for (int64_t i = 0; i < entries; ++i) {
        const int g = i % 4 == 3 ? 2 : i % 4 == 2 ? 1 : 0;  // an all-to-all in four, uneven: a mixture of experts
        const std::string op = g == 2 ? "all_to_all" : g == 1 ? "_allgather_base" : "all_reduce";
        const int64_t in = g == 2 ? 64 + (i * 37) % 512 : 4096, outSize = g == 2 ? 64 + (i * 53) % 512 : in;
        const bool done = i + 1 < entries;
        ++seq[g];
        if (i) chunk += ',';
        appendEntry(chunk, i, seq[g], g, std::to_string(g),
                    g == 0   ? "default_pg"
                    : g == 1 ? "tp"
                             : "ep",
                    op, in, outSize, done);
        osc::test::FrEntrySpec e;
        e.pg = std::to_string(g);
        e.desc = g == 0 ? "default_pg" : g == 1 ? "tp" : "ep";
        e.pgId = g;
        e.seq = seq[g];
        e.op = op;
        e.sizes = {{in, 1024}};
        e.outSizes = std::vector<std::vector<int64_t>>{{outSize, 1024}};
        e.dtype = "BFloat16";
        e.state = done ? "completed" : "started";
        e.createdNs = kT0 + i * 1'000'000;
        e.startedNs = e.createdNs + 20'000;
        if (done) e.completedNs = e.createdNs + 900'000;
        e.frames = {{"all_reduce", "/venv/lib/python3.12/site-packages/torch/distributed/distributed_c10d.py", 3068},
                    {"forward", "/work/model.py", 100 + g}};
        spec.entries.push_back(std::move(e));
        if (chunk.size() > (1u << 20)) {
            out << chunk;
            chunk.clear();
        }
    }
    out << chunk << "],\"pg_config\":{\"0\":{\"desc\":\"default_pg\",\"name\":\"0\",\"ranks\":\"" << ranksText(0, 8)
        << "\"},\"1\":{\"desc\":\"tp\",\"name\":\"1\",\"ranks\":\"[0, 1]\"},\"2\":{\"desc\":\"ep\",\"name\":\"2\","
           "\"ranks\":\"[0, 2, 4, 6]\"}},\"pg_status\":{";
    for (int g = 0; g < 3; ++g)
        out << (g ? "," : "") << "\"" << g << "\":{\"last_completed_collective\":\"" << seq[g] - (g == 0 ? 1 : 0)
            << "\",\"last_enqueued_collective\":\"" << seq[g] << "\",\"last_started_collective\":\"-1\"}";
    out << "},\"version\":\"2.10\"}";
    out.close();
    spec.status = std::map<int64_t, osc::test::FrStatusSpec>{
        {0, {seq[0], -1, seq[0] - 1}}, {1, {seq[1], -1, seq[1]}}, {2, {seq[2], -1, seq[2]}}};
    osc::test::writeText(pickle, osc::test::frPickle(spec));
}

// B: `ranks` dumps; world group, tensor-parallel groups of 8, data-parallel
// groups across them; rank `stall` never entered the world's last all-reduce.
void writeManyDumps(const std::string& dir, int ranks, int entries, int stall) {
    std::printf("  generating %d rank dumps in %s...\n", ranks, dir.c_str());
    std::fflush(stdout);
    fs::create_directories(dir);
    const std::string world = ranksText(0, ranks);
    for (int r = 0; r < ranks; ++r) {
        const int tp = r / 8, dp = r % 8;
        const std::string tpName = std::to_string(1 + tp), dpName = std::to_string(1 + ranks / 8 + dp);
        std::string out = "{\"comm_lib_version\":\"2.21.5\",\"entries\":[";
        int64_t seq[3] = {0, 0, 0};
        const int mine = r == stall ? entries - 1 : entries;
        for (int i = 0; i < mine; ++i) {
            const int g = i % 3;
            ++seq[g];
            if (i) out += ',';
            appendEntry(out, i, seq[g], g,
                        g == 0   ? "0"
                        : g == 1 ? tpName
                                 : dpName,
                        g == 0   ? "default_pg"
                        : g == 1 ? "tp"
                                 : "dp",
                        g == 1 ? "_allgather_base" : "all_reduce", 4096, 4096, i + 1 < entries);
        }
        out += "],\"pg_config\":{\"0\":{\"desc\":\"default_pg\",\"name\":\"0\",\"ranks\":\"" + world + "\"},\"" +
               dpName + "\":{\"desc\":\"dp\",\"name\":\"" + dpName + "\",\"ranks\":\"" + ranksText(dp, ranks, 8) +
               "\"},\"" + tpName + "\":{\"desc\":\"tp\",\"name\":\"" + tpName + "\",\"ranks\":\"" +
               ranksText(tp * 8, tp * 8 + 8) + "\"}},\"pg_status\":{";
        for (int g = 0; g < 3; ++g) {
            const bool last = (mine - 1) % 3 == g && mine == entries;
            out += (g ? "," : "") + std::string("\"") + std::to_string(g) + "\":{\"last_completed_collective\":\"" +
                   std::to_string(seq[g] - (last ? 1 : 0)) + "\",\"last_enqueued_collective\":\"" +
                   std::to_string(seq[g]) + "\",\"last_started_collective\":\"-1\"}";
        }
        out += "},\"version\":\"2.10\"}";
        osc::test::writeText(dir + "/nccl_trace_rank_" + std::to_string(r), out);
    }
}

void report(const char* what, const ChildRun& r, const ChildRun& floor, double wallTarget, double mbTarget) {
    std::printf("  %-44s %7.2f s wall %7.2f s CPU %8.0f MB peak", what, r.wall, r.cpu, r.peakMb);
    if (wallTarget > 0)
        std::printf("   target <= %.0f s%s: %s", wallTarget,
                    mbTarget > 0 ? (" and <= " + std::to_string(static_cast<int>(mbTarget)) + " MB").c_str() : "",
                    r.ok && r.wall <= wallTarget && (mbTarget <= 0 || r.peakMb <= mbTarget) ? "PASS" : "FAIL");
    std::printf("\n  %-44s %7.2f s wall (hang: %.1fx the bytes' read)\n", "  reading the same bytes (cat)", floor.wall,
                floor.wall > 0 ? r.wall / floor.wall : 0.0);
}

}  // namespace

int main(int argc, char** argv) {
    int runs = 3;
    std::string dir = OSC_BENCH_DIR, only;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--runs" && i + 1 < argc)
            runs = std::atoi(argv[++i]);
        else if (a == "--dir" && i + 1 < argc)
            dir = argv[++i];
        else if (a == "--only" && i + 1 < argc)
            only = argv[++i];
        else {
            std::fprintf(stderr, "usage: bench_hang_dumps [--runs R] [--dir DIR] [--only A|B]\n");
            return 2;
        }
    }
    const std::string cli = OSC_CLI_PATH;
    std::printf("bench_hang_dumps: overlapscope hang on large Flight Recorder dumps, medians of %d runs\n", runs);
    if (only.empty() || only == "A") {
        const std::string json = dir + "/hang_dump_1m/nccl_trace_rank_0",
                          pickle = dir + "/hang_dump_1m_pickle/nccl_trace_rank_0";
        if (!fs::exists(json) || !fs::exists(pickle)) {
            fs::create_directories(fs::path(json).parent_path());
            fs::create_directories(fs::path(pickle).parent_path());
            writeBigDump(json, pickle, 1'000'000);
        }
        std::printf("A. one rank's dump of 1,000,000 entries (JSON %.0f MB, pickle %.0f MB)\n",
                    static_cast<double>(fs::file_size(json)) / 1e6, static_cast<double>(fs::file_size(pickle)) / 1e6);
        const ChildRun j = medianOf(runs, [&] { return runProgram({cli, "hang", json}); });
        const ChildRun jFloor = medianOf(runs, [&] { return runProgram({"/bin/cat", json}); });
        report("hang, the JSON dump", j, jFloor, 3, 500);
        const ChildRun p = medianOf(runs, [&] { return runProgram({cli, "hang", pickle}); });
        const ChildRun pFloor = medianOf(runs, [&] { return runProgram({"/bin/cat", pickle}); });
        report("hang, the same entries as a pickle", p, pFloor, 0, 0);
    }
    if (only.empty() || only == "B") {
        const std::string many = dir + "/hang_dumps_10k";
        if (!fs::exists(many + "/nccl_trace_rank_9999")) writeManyDumps(many, 10'000, 64, 4321);
        uint64_t bytes = 0;
        for (const auto& f : fs::directory_iterator(many)) bytes += f.file_size();
        std::printf("B. 10,000 rank dumps of one job, 64 entries each (%.0f MB in all)\n",
                    static_cast<double>(bytes) / 1e6);
        // hang exits 1: it found the hang it should.
        const ChildRun m = medianOf(runs, [&] {
            ChildRun r = runProgram({cli, "hang", many});
            r.ok = WIFEXITED(r.status) && WEXITSTATUS(r.status) == 1;
            return r;
        });
        const ChildRun mFloor = medianOf(runs, [&] {
            return runProgram({"/usr/bin/find", many, "-type", "f", "-exec", "cat", "{}", "+"});
        });
        report("hang, the 10,000 dumps", m, mFloor, 10, 0);
    }
    return 0;
}
