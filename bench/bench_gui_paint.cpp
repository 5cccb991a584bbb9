// overlapscope-gui figures on a synthetic 10-million-kernel capture
// (8 ranks x 8 streams; the last stream of each rank carries NCCL kernels):
//   load time   (SQLite files -> capture -> lanes and coverages -> analysis), target < 15 s
//   paint time  of the timeline at 1920x1080 at several zoom levels,        target < 16 ms each
//   memory      peak resident set size after loading and painting,          target < 3 GB
//
// usage: bench_gui_paint [--kernels N] [--dir DIR]
// The per-rank files are written once into DIR (default /tmp/osc-bench-gui-N)
// and reused by later runs; writing them is not part of the load figure.
#include "analyzer/capture/schema.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/synth/generic_synth.h"
#include "analyzer/synth/row_sink.h"
#include "gui/widgets/capture_loader.h"
#include "gui/widgets/timeline_widget.h"

#include <QApplication>
#include <QImage>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kRanks = 8, kStreams = 8;

double seconds(Clock::time_point since) {
    return std::chrono::duration<double>(Clock::now() - since).count();
}

double peakRssGiB() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_maxrss) / (1024.0 * 1024.0);  // ru_maxrss is KiB
}

void writeRanks(const std::string& dir, uint64_t kernels) {
    std::filesystem::create_directories(dir);
    for (int r = 0; r < kRanks; ++r) {
        const std::string path = dir + "/rank" + std::to_string(r) + ".sqlite";
        if (std::filesystem::exists(path)) continue;
        osc::synth::GenericSpec spec;
        spec.kernels = kernels / kRanks;
        spec.streams = kStreams;
        spec.seed = static_cast<uint64_t>(r) + 1;
        spec.pid = 4000 + r;
        osc::synth::ProcessIdentity who = osc::synth::genericIdentity(spec);
        who.rank = r;
        who.localRank = r;
        who.worldSize = kRanks;
        const std::string tmp = path + ".part";
        std::filesystem::remove(tmp);
        {
            osc::synth::WriterSink sink(tmp, who, false);
            osc::synth::generateGeneric(spec, sink, [&](uint64_t done, uint64_t total) {
                if (done % 250000 == 0 || done == total)
                    std::fprintf(stderr, "\rwriting rank %d: %3.0f%%", r, 100.0 * static_cast<double>(done) / static_cast<double>(total));
            });
            sink.close();
        }
        std::filesystem::rename(tmp, path);
    }
    std::fprintf(stderr, "\n");
}

void verdict(const char* what, double value, const char* unit, double target) {
    std::printf("%-44s %10.2f %-3s (target < %g %s)  %s\n", what, value, unit, target, unit,
                value < target ? "PASS" : "FAIL");
}

}  // namespace

int main(int argc, char** argv) {
    uint64_t kernels = 10'000'000;
    std::string dir;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--kernels") && i + 1 < argc) kernels = std::stoull(argv[++i]);
        else if (!std::strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
        else {
            std::fprintf(stderr, "usage: bench_gui_paint [--kernels N] [--dir DIR]\n");
            return 2;
        }
    }
    // The format version in the name: cached files of an older format would
    // measure the old reader path.
    if (dir.empty())
        dir = "/tmp/osc-bench-gui-" + std::to_string(kernels) + "-format" +
              std::to_string(osc::schema::kFormatVersion);
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);

    std::printf("bench_gui_paint: %llu kernels, %d ranks x %d streams, files in %s\n",
                static_cast<unsigned long long>(kernels), kRanks, kStreams, dir.c_str());
    writeRanks(dir, kernels);

    // The same stages as loadForViewing(), timed one by one.
    const auto t0 = Clock::now();
    osc::LoadOptions options;
    options.progress = [](double f, std::string_view stage) {
        std::fprintf(stderr, "\rreading %3.0f%% %-30.*s", f * 100, static_cast<int>(stage.size()), stage.data());
    };
    auto capture = std::make_shared<osc::Capture>(osc::loadCapture(dir, options));
    std::fprintf(stderr, "\n");
    const double readS = seconds(t0);
    const auto t1 = Clock::now();
    osc::gui::LoadedCapture loaded;
    loaded.model = std::make_shared<osc::gui::TimelineModel>(capture);
    const double lanesS = seconds(t1);
    const auto t2 = Clock::now();
    loaded.analysis = std::make_shared<const osc::Analysis>(osc::analyze(*capture));
    loaded.model->addStepLanes(*loaded.analysis);
    const double analysisS = seconds(t2);
    const double loadS = seconds(t0);
    std::printf("  read files %.2f s, build lanes and coverages %.2f s, analysis %.2f s\n", readS, lanesS, analysisS);
    std::printf("loaded %zu kernels in %zu lanes\n", loaded.model->capture().kernelCount(), loaded.model->lanes().size());
    verdict("load (read + lanes + analysis)", loadS, "s", 15);
    size_t summaryBytes = 0, longEntries = 0;
    for (const auto& lane : loaded.model->lanes()) {
        for (const auto& row : lane.rows) {
            for (int l = 0; l < row.summary.levels(); ++l) {
                summaryBytes += row.summary.cells(l).size() * sizeof(osc::gui::SummaryCell) +
                                row.summary.longEvents(l).index.size() * (sizeof(uint32_t) + sizeof(osc::TimeNs));
                longEntries += row.summary.longEvents(l).index.size();
            }
        }
    }
    std::printf("  row summaries %.0f MiB (%zu long-event entries)\n", static_cast<double>(summaryBytes) / (1 << 20), longEntries);

    osc::gui::TimelineWidget w;
    w.resize(1920, 1080);
    w.setModel(loaded.model);
    QImage img(w.size(), QImage::Format_ARGB32_Premultiplied);
    const osc::TimeNs begin = loaded.model->begin(), len = loaded.model->end() - begin;
    struct Zoom {
        const char* name;
        double fraction;  // of the whole span
    } zooms[] = {{"everything", 1.0}, {"1/10 of the span", 0.1}, {"1/1000", 1e-3}, {"1/100000", 1e-5}};
    bool allPass = true;
    for (const Zoom& z : zooms) {
        const auto span = std::max<osc::TimeNs>(100, static_cast<osc::TimeNs>(static_cast<double>(len) * z.fraction));
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
            osc::gui::FrameBuilder(*loaded.model, w.layout()).build(w.viewport(), list);
            build.push_back(seconds(b0) * 1000);
            if (i == 0) sample = std::move(list);
        }
        std::sort(ms.begin(), ms.end());
        std::sort(build.begin(), build.end());
        std::printf("  %-18s draw list %.2f ms of the frame: %zu rects, %zu texts, %zu events, %zu folded blocks\n",
                    z.name, build[build.size() / 2], sample.rects.size(), sample.texts.size(), sample.eventsDrawn,
                    sample.foldedBlocks);
        char what[80];
        std::snprintf(what, sizeof what, "paint 1920x1080, %s (median of 7)", z.name);
        verdict(what, ms[ms.size() / 2], "ms", 16);
        allPass &= ms[ms.size() / 2] < 16;
    }
    const double rss = peakRssGiB();
    verdict("peak memory (RSS)", rss, "GiB", 3);
    return allPass && loadS < 15 && rss < 3 ? 0 : 1;
}
