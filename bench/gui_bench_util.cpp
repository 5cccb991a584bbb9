#include "bench/gui_bench_util.h"

#include "analyzer/synth/generic_synth.h"
#include "analyzer/synth/process_sinks.h"
#include "gui/widgets/timeline_widget.h"

#include <QApplication>
#include <QImage>

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>

#include <algorithm>
#include <filesystem>
#include <vector>

extern char** environ;

namespace oscbench {

double processCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double threadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double loadAverage() {
    double l[1] = {0};
    return getloadavg(l, 1) == 1 ? l[0] : -1;
}

double peakRssGiB() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_maxrss) / (1024.0 * 1024.0);  // ru_maxrss is KiB
}

double currentRssGiB() {
    long pages = 0, resident = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        std::fclose(f);
    }
    return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0 * 1024.0);
}

int runCasesInChildren(const char* self, std::vector<std::string> args, const std::vector<const char*>& cases) {
    args.insert(args.begin(), self);
    args.emplace_back("--only");
    args.emplace_back();
    int failed = 0;
    for (const char* c : cases) {
        args.back() = c;
        std::vector<char*> cargs;
        for (auto& a : args) cargs.push_back(a.data());
        cargs.push_back(nullptr);
        std::fflush(stdout);
        pid_t pid = 0;
        if (posix_spawn(&pid, self, nullptr, nullptr, cargs.data(), environ) != 0) return 2;
        int status = 0;
        waitpid(pid, &status, 0);
        failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    return failed ? 1 : 0;
}

bool verdict(const char* what, double value, const char* unit, double target) {
    const bool pass = value < target;
    std::printf("%-52s %10.2f %-3s (target < %g %s)  %s\n", what, value, unit, target, unit, pass ? "PASS" : "FAIL");
    std::fflush(stdout);
    return pass;
}

namespace {

void writeOne(const std::string& path, uint64_t kernels, int streams, int rank, int ranks) {
    if (std::filesystem::exists(path)) return;
    osc::synth::GenericSpec spec;
    spec.kernels = kernels;
    spec.streams = static_cast<size_t>(streams);
    spec.seed = static_cast<uint64_t>(rank) + 1;
    spec.pid = 4000 + rank;
    osc::synth::ProcessIdentity who = osc::synth::genericIdentity(spec);
    who.rank = rank;
    who.localRank = rank;
    who.worldSize = ranks;
    const std::string tmp = path + ".part";
    std::filesystem::remove(tmp);
    {
        osc::synth::ProcessFile file(tmp, who, false);
        osc::synth::generateGeneric(spec, file.rows(), [&](uint64_t done, uint64_t total) {
            if (done % 250000 == 0 || done == total)
                std::fprintf(stderr, "\rwriting %s: %3.0f%%", path.c_str(),
                             100.0 * static_cast<double>(done) / static_cast<double>(total));
        });
        file.close();
    }
    std::filesystem::rename(tmp, path);
    std::fprintf(stderr, "\n");
}

}  // namespace

void writeRanks(const std::string& dir, uint64_t kernels, int ranks, int streams) {
    std::filesystem::create_directories(dir);
    for (int r = 0; r < ranks; ++r)
        writeOne(dir + "/rank" + std::to_string(r) + ".sqlite", kernels / static_cast<uint64_t>(ranks), streams, r,
                 ranks);
}

void writeSingle(const std::string& path, uint64_t kernels, int streams) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    writeOne(path, kernels, streams, 0, 1);
}

void printSummarySize(const osc::gui::TimelineModel& model) {
    size_t summaryBytes = 0, longEntries = 0;
    for (const auto& lane : model.lanes()) {
        for (const auto& row : lane.rows) {
            for (int l = 0; l < row.summary.levels(); ++l) {
                summaryBytes += row.summary.cells(l).size() * sizeof(osc::gui::SummaryCell) +
                                row.summary.longEvents(l).index.size() * (sizeof(uint32_t) + sizeof(osc::TimeNs));
                longEntries += row.summary.longEvents(l).index.size();
            }
        }
    }
    std::printf("  %zu kernels in %zu lanes; row summaries %.0f MiB (%zu long-event entries)\n",
                model.capture().kernelCount(), model.lanes().size(), static_cast<double>(summaryBytes) / (1 << 20),
                longEntries);
}

bool paintAtZooms(osc::gui::TimelineWidget& w, const char* prefix) {
    osc::gui::TimelineModel& model = *w.model();
    QImage img(w.size(), QImage::Format_ARGB32_Premultiplied);
    const osc::TimeNs begin = model.begin(), len = model.end() - begin;
    struct Zoom {
        const char* name;
        double fraction;  // of the whole span
    } zooms[] = {{"everything", 1.0}, {"1/10 of the span", 0.1}, {"1/1000", 1e-3}, {"1/100000", 1e-5}};
    bool allPass = true;
    for (const Zoom& z : zooms) {
        const auto span = std::max<osc::TimeNs>(1000, static_cast<osc::TimeNs>(static_cast<double>(len) * z.fraction));
        const osc::TimeNs start = begin + (len - span) / 2;
        w.setViewRange({start, start + span}, false);
        std::vector<double> ms, build;
        osc::gui::DrawList sample;
        for (int i = 0; i < 7; ++i) {
            w.invalidateGeometry();  // measure full frames, not the replay cache
            const auto p0 = Clock::now();
            w.render(&img);
            ms.push_back(seconds(p0) * 1000);
            osc::gui::DrawList list;
            const auto b0 = Clock::now();
            osc::gui::FrameBuilder(model, w.layout()).build(w.viewport(), list);
            build.push_back(seconds(b0) * 1000);
            if (i == 0) sample = std::move(list);
        }
        std::sort(ms.begin(), ms.end());
        std::sort(build.begin(), build.end());
        std::printf("  %-18s draw list %.2f ms of the frame: %zu rects, %zu texts, %zu events, %zu folded blocks\n",
                    z.name, build[build.size() / 2], sample.rects.size(), sample.texts.size(), sample.eventsDrawn,
                    sample.foldedBlocks);
        char what[96];
        std::snprintf(what, sizeof what, "%s paint 1920x1080, %s (median of 7)", prefix, z.name);
        allPass &= verdict(what, ms[ms.size() / 2], "ms", 16);
    }
    return allPass;
}

void GuiStallProbe::start() {
    longestMs_ = longestCpuMs_ = mostCpuMs_ = 0;
    since_.start();
    cpuAt_ = threadCpuMs();
    timer_.setInterval(2);
    QObject::connect(&timer_, &QTimer::timeout, this, [this] { tick(); });
    timer_.start();
}

void GuiStallProbe::tick() {
    const double ms = static_cast<double>(since_.nsecsElapsed()) / 1e6, cpu = threadCpuMs() - cpuAt_;
    if (ms > longestMs_) longestMs_ = ms, longestCpuMs_ = cpu;
    mostCpuMs_ = std::max(mostCpuMs_, cpu);
    since_.restart();
    cpuAt_ = threadCpuMs();
}

void GuiStallProbe::stop() {
    tick();
    timer_.stop();
    timer_.disconnect();
}

}  // namespace oscbench

// ---- case C: the heat map of many ranks ----

#include "gui/widgets/heat_map_widget.h"

namespace oscbench {
namespace {

void addKernel(osc::Capture& c, osc::Device& d, osc::TimeNs s, osc::TimeNs e, uint32_t stream, uint32_t name) {
    osc::KernelTable& k = d.kernels;
    k.start.push_back(s);
    k.end.push_back(e);
    k.stream.push_back(stream);
    k.correlation.push_back(0);
    k.name.push_back(name);
    k.shortName.push_back(name);
    for (auto* v : {&k.gridX, &k.gridY, &k.gridZ, &k.blockX, &k.blockY, &k.blockZ, &k.registersPerThread,
                    &k.staticSharedMemory, &k.dynamicSharedMemory})
        v->push_back(1);
    k.graphId.push_back(0);
    k.graphNodeId.push_back(0);
    (void)c;
}

}  // namespace

std::shared_ptr<osc::Capture> manyRanks(int ranks, int steps, int layers) {
    auto c = std::make_shared<osc::Capture>();
    const uint32_t gemm = c->strings.intern("gemm_kernel");
    const uint32_t nccl = c->strings.intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    uint64_t seed = 12345;
    auto jitter = [&](osc::TimeNs v) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        return v + static_cast<osc::TimeNs>((seed >> 33) % static_cast<uint64_t>(v / 5 + 1));
    };
    for (int r = 0; r < ranks; ++r) {
        osc::Process p;
        p.host = "node" + std::to_string(r / 8);
        p.pid = 1000 + r;
        p.rank = r;
        p.worldSize = ranks;
        osc::Device& d = p.deviceById(static_cast<uint32_t>(r % 8));
        osc::TimeNs t = 0;
        for (int s = 0; s < steps; ++s) {
            // Backward layers on the compute stream, one bucket all-reduce per
            // two layers on the comm stream, started as its layers finish.
            osc::TimeNs commFree = t;
            for (int l = 0; l < layers; ++l) {
                const osc::TimeNs len = jitter(200'000);
                addKernel(*c, d, t, t + len, 7, gemm);
                t += len + 5'000;
                if (l % 2 == 1) {
                    const osc::TimeNs start = std::max(commFree, t);
                    const osc::TimeNs clen = jitter(r == ranks / 3 ? 900'000 : 300'000);  // one slow rank
                    addKernel(*c, d, start, start + clen, 13, nccl);
                    commFree = start + clen;
                }
            }
            t = std::max(t, commFree) + 100'000;
        }
        c->processes.push_back(std::move(p));
    }
    c->finalize();
    return c;
}

bool caseHeatMap(int ranks) {
    std::printf("\nC. heat map of %d ranks at 1920x1080\n", ranks);
    const auto t0 = Clock::now();
    auto capture = manyRanks(ranks, 20, 24);
    auto model = std::make_shared<osc::gui::TimelineModel>(capture);
    std::printf("  %zu kernels built in %.2f s\n", capture->kernelCount(), seconds(t0));
    osc::gui::TimelineWidget timeline;
    timeline.resize(1920, 1080);
    timeline.setModel(model);
    osc::gui::HeatMapView view(&timeline);
    view.resize(1920, 1080);
    QImage img(view.size(), QImage::Format_ARGB32_Premultiplied);
    const osc::TimeNs begin = model->begin(), len = model->end() - begin;
    bool pass = true;
    struct Zoom {
        const char* name;
        double fraction;
    } zooms[] = {{"everything", 1.0}, {"1/10 of the span", 0.1}, {"1/100", 0.01}};
    for (const Zoom& z : zooms) {
        const auto span = static_cast<osc::TimeNs>(static_cast<double>(len) * z.fraction);
        const osc::TimeNs start = begin + (len - span) / 2;
        std::vector<double> ms, cpu;
        for (int i = 0; i < 7; ++i) {
            // A pan of one column each time: the map is rebuilt, as when the user drags.
            timeline.setViewRange({start + i * span / 1800, start + i * span / 1800 + span}, false);
            const auto p0 = Clock::now();
            const double c0 = processCpuMs();
            view.rebuild();
            view.render(&img);
            cpu.push_back(processCpuMs() - c0);
            ms.push_back(seconds(p0) * 1000);
        }
        std::sort(ms.begin(), ms.end());
        std::sort(cpu.begin(), cpu.end());
        std::printf("  %-18s CPU time of all threads %.2f ms (median), wall fastest %.2f ms\n", z.name,
                    cpu[cpu.size() / 2], ms.front());
        char what[96];
        std::snprintf(what, sizeof what, "C. heat map rebuild + paint, %s (median of 7)", z.name);
        pass &= verdict(what, ms[ms.size() / 2], "ms", 16);
    }
    std::printf("  %d rows x %d columns\n", view.heatMap().rows(), view.heatMap().columns);
    return pass;
}

}  // namespace oscbench
