#include "bench/gui_bench_util.h"

#include "analyzer/synth/generic_synth.h"
#include "analyzer/synth/row_sink.h"
#include "gui/widgets/timeline_widget.h"

#include <QApplication>
#include <QImage>

#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <vector>

namespace oscbench {

double peakRssGiB() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_maxrss) / (1024.0 * 1024.0);  // ru_maxrss is KiB
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
        osc::synth::WriterSink sink(tmp, who, false);
        osc::synth::generateGeneric(spec, sink, [&](uint64_t done, uint64_t total) {
            if (done % 250000 == 0 || done == total)
                std::fprintf(stderr, "\rwriting %s: %3.0f%%", path.c_str(), 100.0 * static_cast<double>(done) / static_cast<double>(total));
        });
        sink.close();
    }
    std::filesystem::rename(tmp, path);
    std::fprintf(stderr, "\n");
}

}  // namespace

void writeRanks(const std::string& dir, uint64_t kernels, int ranks, int streams) {
    std::filesystem::create_directories(dir);
    for (int r = 0; r < ranks; ++r)
        writeOne(dir + "/rank" + std::to_string(r) + ".sqlite", kernels / static_cast<uint64_t>(ranks), streams, r, ranks);
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
    longestMs_ = 0;
    since_.start();
    timer_.setInterval(2);
    QObject::connect(&timer_, &QTimer::timeout, this, [this] {
        longestMs_ = std::max(longestMs_, static_cast<double>(since_.nsecsElapsed()) / 1e6);
        since_.restart();
    });
    timer_.start();
}

void GuiStallProbe::stop() {
    longestMs_ = std::max(longestMs_, static_cast<double>(since_.nsecsElapsed()) / 1e6);
    timer_.stop();
    timer_.disconnect();
}

}  // namespace oscbench
