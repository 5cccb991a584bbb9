// The text report of a job of many ranks: made device by device through the
// merge (partial::mergedReport) against the whole merged Analysis
// (partial::mergedAnalysis + formatTextReport, the CLI's path before).
// Each run is a child process, so its peak RSS is its own; figures are
// medians of --runs runs (wall time and peak each their own median).
//
//   bench_merged_text [--ranks 64,256] [--steps 100] [--layers 12] [--runs 3]
//                     [--jobs 1] [--format text|markdown] [--dir DIR]
//
// Jobs are `overlapscope synth --ranks N --steps S` (data parallel,
// bucketed, 12 layers), generated once under DIR (default:
// $TMPDIR/osc-bench-merged-text). Target: the device-by-device peak at the
// largest N within 1.5x of that at the smallest (judged on 64 and 256:
// beyond, the merge's own per-device headers grow it, the JSON path's too,
// which is printed alongside as the floor); both paths' reports equal.
#include "analyzer/job/file_workers.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/partial/merge.h"
#include "analyzer/report/report_markdown.h"
#include "analyzer/report/report_text.h"
#include "analyzer/synth/workload_synth.h"
#include "bench/child_run.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace osc;

namespace {

using Run = bench::ChildRun;

Run median(int runs, const std::function<bool()>& work) {
    return bench::medianOf(runs, [&] { return bench::runInChild(work); });
}

std::vector<int> parseList(const std::string& s) {
    std::vector<int> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoi(item));
    return out;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// The job analysed file by file, as the CLI does for several captures.
struct Job {
    std::vector<std::string> files;
    int jobs = 1;
    bool markdown = false;

    report::ReportOptions options() const {
        report::ReportOptions o;
        o.inputs = files;
        return o;
    }
    template <typename Report>
    bool write(const std::string& out, Report report) const {
        job::FileWorkerOptions po;
        po.jobs = jobs;
        const job::AnalyzedFiles analyzed(files, {}, po);
        partial::PartSet set;
        analyzed.addTo(set, files);
        std::ofstream o(out, std::ios::binary);
        report(set, o);
        return static_cast<bool>(o);
    }
};

}  // namespace

int main(int argc, char** argv) {
    std::vector<int> ranks = {64, 256};
    synth::WorkloadSpec spec;
    spec.steps = 100;
    int runs = 3, jobs = 1;
    bool markdown = false;
    // Jobs are generated once and reused, in the temporary directory: never
    // in the working one (a checkout, most often).
    std::string dir = (std::filesystem::temp_directory_path() / "osc-bench-merged-text").string();
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--ranks")
            ranks = parseList(next());
        else if (a == "--steps")
            spec.steps = std::stoi(next());
        else if (a == "--layers")
            spec.layers = std::stoi(next());
        else if (a == "--runs")
            runs = std::max(1, std::stoi(next()));
        else if (a == "--jobs")
            jobs = std::max(1, std::stoi(next()));
        else if (a == "--format")
            markdown = next() == "markdown";
        else if (a == "--dir")
            dir = next();
        else {
            std::fprintf(stderr,
                         "usage: bench_merged_text [--ranks 64,256] [--steps S] [--layers L] [--runs R] "
                         "[--jobs J] [--format text|markdown] [--dir DIR]\n");
            return a == "--help" || a == "-h" ? 0 : 2;
        }
    }
    std::printf(
        "bench_merged_text: N ranks x %d steps (%d layers, bucketed), %s report, %d worker(s), "
        "medians of %d runs\n",
        spec.steps, spec.layers, markdown ? "markdown" : "text", jobs, runs);
    bool pass = true;
    double firstPeak = 0, lastPeak = 0;
    for (int n : ranks) {
        spec.ranks = n;
        const std::string jobDir =
            dir + "/r" + std::to_string(n) + "_s" + std::to_string(spec.steps) + "_l" + std::to_string(spec.layers);
        if (!fs::exists(jobDir)) {
            std::printf("  generating %s...\n", jobDir.c_str());
            std::fflush(stdout);
            // In a child: the writers' memory must not count in the runs below.
            bench::runInChild([&] { return !synth::writeWorkload(spec, jobDir, false).empty(); });
        }
        const Job job{captureFiles({jobDir}), jobs, markdown};
        const auto format = markdown ? report::ReportFormat::Markdown : report::ReportFormat::Text;
        const std::string wholeOut = jobDir + ".whole.txt", byDeviceOut = jobDir + ".by_device.txt";
        const Run whole = median(runs, [&] {
            return job.write(wholeOut, [&](const partial::PartSet& set, std::ostream& out) {
                const Analysis a = partial::mergedAnalysis(set, {});
                out << (markdown ? report::formatMarkdownReport(a, job.options())
                                 : report::formatTextReport(a, job.options()));
            });
        });
        const Run byDevice = median(runs, [&] {
            return job.write(byDeviceOut, [&](const partial::PartSet& set, std::ostream& out) {
                out << partial::mergedReport(set, {}, job.options(), format);
            });
        });
        // The floor: the JSON report, streamed the same way since the merge was written.
        const std::string jsonOut = jobDir + ".json";
        const Run json = median(runs, [&] {
            return job.write(jsonOut, [&](const partial::PartSet& set, std::ostream& out) {
                partial::writeMergedJson(set, {}, job.options(), out);
            });
        });
        const bool same = whole.ok && byDevice.ok && json.ok && slurp(wholeOut) == slurp(byDeviceOut);
        std::printf(
            "  %5d ranks: whole Analysis %6.2f s %7.1f MB | device by device %6.2f s %7.1f MB | "
            "(JSON streamed %6.2f s %7.1f MB) | report %.2f MB, %s\n",
            n, whole.wall, whole.peakMb, byDevice.wall, byDevice.peakMb, json.wall, json.peakMb,
            static_cast<double>(fs::file_size(byDeviceOut)) / 1e6, same ? "identical" : "DIFFERENT");
        pass &= same;
        if (firstPeak == 0) firstPeak = byDevice.peakMb;
        lastPeak = byDevice.peakMb;
    }
    const double growth = lastPeak / firstPeak;
    std::printf("device-by-device peak, smallest to largest N: %.2fx (target <= 1.5x): %s\n", growth,
                growth <= 1.5 ? "PASS" : "FAIL");
    pass &= growth <= 1.5;
    std::printf("%s\n", pass ? "PASS" : "FAIL");
    return pass ? 0 : 1;
}
