// A job of many small files, as users run it: `overlapscope report DIR`,
// each run a child process measured by wait4 (wall, CPU, peak RSS), medians
// of --runs. Two questions:
//
//  A. memory: the text report over N ranks of 100 steps each; target: peak
//     RSS at 256 ranks at most 1.5x that at 64 ranks (per-device headers and
//     step windows streamed like everything else);
//  B. per-file cost: 256 small files (about 2,700 kernels each) in one
//     `report --jobs 1` against 256 processes reading one file each (what a
//     script looping over ranks does); target: the one process in at most
//     half the time of the 256.
//  C. every core: 8 big files (20,000 steps, about 63 MB each) in one
//     `report DIR` with the default workers; target: wall clock at most 0.6x
//     the CPU time on 2 cores, and (with --baseline) peak memory at most the
//     baseline's, round by round against it (issue 46).
//
//   bench_job_scale [--runs R] [--dir DIR] [--baseline PATH_TO_OLD_OVERLAPSCOPE] [--only A|B|C]
//
// Jobs are generated once under DIR (default: $TMPDIR/osc-bench-job-scale).
//
// With --baseline the same figures are measured for another build in the
// same run (before/after on the same machine, under the same load).
#include "bench/child_run.h"
#include "bench/paired.h"

#include <stdlib.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

using osc::bench::ChildRun;
using osc::bench::medianOf;
using osc::bench::runProgram;

// Several programs in a row as one run (256 processes, one file each).
ChildRun runAll(const std::vector<std::vector<std::string>>& commands) {
    ChildRun total;
    for (const auto& c : commands) {
        const ChildRun r = runProgram(c);
        total.wall += r.wall;
        total.cpu += r.cpu;
        total.peakMb = std::max(total.peakMb, r.peakMb);
        total.ok &= r.ok;
    }
    return total;
}

std::string jobDir(const std::string& dir, const std::string& cli, int ranks, int steps = 100) {
    const std::string job = dir + "/r" + std::to_string(ranks) + (steps == 100 ? "" : "s" + std::to_string(steps));
    if (!fs::exists(job)) {
        std::printf("  generating %d ranks x %d steps in %s...\n", ranks, steps, job.c_str());
        std::fflush(stdout);
        runProgram({cli, "synth", "--ranks", std::to_string(ranks), "--steps", std::to_string(steps), "-o", job});
    }
    return job;
}

std::vector<std::string> filesOf(const std::string& job) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(job))
        if (e.path().extension() == ".sqlite") out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

bool measure(const std::string& label, const std::string& cli, const std::string& dir, int runs,
             const std::string& only) {
    std::printf("\n%s: %s\n", label.c_str(), cli.c_str());
    bool pass = true;
    if (!only.empty() && only != "A" && only != "B") return pass;
    // A. memory of the text report.
    ChildRun at[2];
    const int sizes[2] = {64, 256};
    for (int k = 0; k < 2; ++k) {
        const std::string job = jobDir(dir, cli, sizes[k]);
        at[k] = medianOf(runs, [&] { return runProgram({cli, "report", "--jobs", "1", job}); });
        std::printf("  A. report (text) over %4d ranks x 100 steps: %6.2f s wall, %6.2f s CPU, peak %6.1f MB%s\n",
                    sizes[k], at[k].wall, at[k].cpu, at[k].peakMb, at[k].ok ? "" : "  (FAILED RUN)");
    }
    const double growth = at[1].peakMb / at[0].peakMb;
    std::printf("     peak RSS 256 / 64 ranks: %.2fx (target at most 1.50x): %s\n", growth,
                growth <= 1.5 ? "PASS" : "FAIL");
    pass &= growth <= 1.5 && at[0].ok && at[1].ok;

    // B. one process over 256 files against 256 processes over one file each.
    if (only == "A") return pass;
    const std::string job = jobDir(dir, cli, 256);
    const auto files = filesOf(job);
    std::vector<std::vector<std::string>> each;
    for (const auto& f : files) each.push_back({cli, "report", f});
    const ChildRun one = medianOf(runs, [&] { return runProgram({cli, "report", "--jobs", "1", job}); });
    const ChildRun many = medianOf(runs, [&] { return runAll(each); });
    const double wallRatio = one.wall / many.wall, cpuRatio = one.cpu / many.cpu;
    std::printf("  B. %zu files in one `report --jobs 1`: %.2f s wall, %.2f s CPU\n", files.size(), one.wall, one.cpu);
    std::printf("     %zu processes, one file each:       %.2f s wall, %.2f s CPU\n", files.size(), many.wall,
                many.cpu);
    std::printf("     one process / %zu processes: %.2fx wall, %.2fx CPU (target at most 0.50x): %s\n", files.size(),
                wallRatio, cpuRatio, wallRatio <= 0.5 ? "PASS" : "FAIL");
    pass &= wallRatio <= 0.5 && one.ok && many.ok;
    return pass;
}

// C. 8 big files with every core, against the baseline round by round.
bool everyCore(const std::string& cli, const std::string& baseline, const std::string& dir, int runs) {
    const std::string job = jobDir(dir, cli, 8, 20000);
    std::vector<osc::bench::Side> sides{{"this build", [&] { return runProgram({cli, "report", job}); }}};
    if (!baseline.empty()) sides.push_back({"baseline", [&] { return runProgram({baseline, "report", job}); }});
    const osc::bench::PairedRuns paired(sides, runs);
    std::printf(
        "\nC. 8 files x 20,000 steps (%.0f MB) in one `report DIR`, default workers, %d rounds, load average "
        "%.1f -> %.1f\n",
        [&] {
            double mb = 0;
            for (const auto& f : filesOf(job)) mb += static_cast<double>(fs::file_size(f)) / 1e6;
            return mb;
        }(),
        runs, paired.loadBefore(), paired.loadAfter());
    bool pass = true;
    for (size_t s = 0; s < paired.sides(); ++s) {
        const double wall = paired.median(s, &ChildRun::wall), cpu = paired.median(s, &ChildRun::cpu);
        std::printf("  %-10s %6.2f s wall, %6.2f s CPU (wall / CPU %.2f), peak %6.1f MB%s\n", paired.name(s).c_str(),
                    wall, cpu, wall / cpu, paired.median(s, &ChildRun::peakMb), paired.ok(s) ? "" : "  (FAILED RUN)");
        pass &= paired.ok(s);
    }
    const auto share = [&](size_t s) {
        std::vector<double> v;
        for (const auto& r : paired.runs(s)) v.push_back(r.wall / r.cpu);
        return osc::bench::median(v);
    };
    const double ours = share(0);
    std::printf("     wall / CPU time %.2f (target at most 0.60): %s\n", ours, ours <= 0.6 ? "PASS" : "FAIL");
    pass &= ours <= 0.6;
    if (paired.sides() == 2) {
        const auto t = paired.ratio(0, 1, &ChildRun::wall);
        const auto m = paired.ratio(0, 1, &ChildRun::peakMb);
        std::printf(
            "     this / baseline: wall %.2fx [%.2f, %.2f], peak memory %.2fx [%.2f, %.2f] (target at most "
            "1.00x): %s\n",
            t.median, t.low, t.high, m.median, m.low, m.high, m.median <= 1.0 ? "PASS" : "FAIL");
        pass &= m.median <= 1.0;
    }
    return pass;
}

}  // namespace

int main(int argc, char** argv) {
    int runs = 5;
    // Jobs are generated once and reused, in the temporary directory: never
    // in the working one (a checkout, most often).
    std::string dir = (std::filesystem::temp_directory_path() / "osc-bench-job-scale").string(), baseline, only;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--runs" && i + 1 < argc)
            runs = std::atoi(argv[++i]);
        else if (a == "--dir" && i + 1 < argc)
            dir = argv[++i];
        else if (a == "--baseline" && i + 1 < argc)
            baseline = argv[++i];
        else if (a == "--only" && i + 1 < argc)
            only = argv[++i];
        else {
            std::fprintf(
                stderr, "usage: bench_job_scale [--runs R] [--dir DIR] [--baseline OLD_OVERLAPSCOPE] [--only A|B|C]\n");
            return 2;
        }
    }
    fs::create_directories(dir);
    double load[3] = {0, 0, 0};
    ::getloadavg(load, 3);
    std::printf("bench_job_scale: medians of %d runs, load average %.1f %.1f %.1f\n", runs, load[0], load[1], load[2]);
    bool pass = measure("this build", OSC_CLI_PATH, dir, runs, only);
    if (!baseline.empty() && only != "C") measure("baseline", baseline, dir, runs, only);
    if (only.empty() || only == "C") pass &= everyCore(OSC_CLI_PATH, baseline, dir, runs);
    std::printf("\n%s\n", pass ? "PASS" : "FAIL");
    return pass ? 0 : 1;
}
