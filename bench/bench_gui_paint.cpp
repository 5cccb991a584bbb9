// overlapscope-gui figures on synthetic captures of 10 million kernels:
//
//  A. 8 ranks x 8 streams, one file per rank (the last stream of each rank
//     carries NCCL kernels):
//       load time (read -> lanes and coverages -> analysis), target < 15 s
//       paint time of the timeline at 1920x1080, four zooms,   target < 16 ms each
//  B. one file, one rank, 8 streams (580,000 NCCL kernels), opened the way a
//     user opens it: File > Open until the window shows it, tables filled
//     and sorted and the first frame painted,                 target < 15 s
//       the longest the GUI thread was blocked meanwhile,      target < 250 ms
//       and while sorting the Collectives table by exposed time, target < 100 ms
//       paint time at four zooms,                              target < 16 ms each
//  C. the heat map of 1,024 ranks at 1920x1080,                target < 16 ms a frame
//  peak resident set size of each case (each runs in a process of its own), target < 3 GB
//
// usage: bench_gui_paint [--kernels N] [--dir DIR] [--only A|B|C]
// Capture files are written once into DIR (default /tmp/osc-bench-gui-N-formatF)
// and reused by later runs; writing them is not part of any figure.
#include "bench/gui_bench_util.h"

#include "analyzer/capture/schema.h"
#include "analyzer/crossrank/analyze.h"
#include "analyzer/load/load_capture.h"
#include "gui/widgets/capture_loader.h"
#include "gui/widgets/main_window.h"
#include "gui/widgets/metric_tables.h"
#include "gui/widgets/timeline_widget.h"

#include <QApplication>
#include <QSettings>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace oscbench;
constexpr int kRanks = 8, kStreams = 8;

bool caseRanks(const std::string& dir, uint64_t kernels) {
    std::printf("\nA. %llu kernels, %d ranks x %d streams, one file per rank\n",
                static_cast<unsigned long long>(kernels), kRanks, kStreams);
    writeRanks(dir, kernels, kRanks, kStreams);
    // The same stages as loadForViewing(), timed one by one.
    const auto t0 = Clock::now();
    osc::LoadOptions options;
    auto capture = std::make_shared<osc::Capture>(osc::loadCapture(dir, options));
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
    std::printf("  read files %.2f s, build lanes and coverages %.2f s, analysis %.2f s (one after the other)\n", readS,
                lanesS, analysisS);
    bool pass = verdict("A. load (read + lanes + analysis)", loadS, "s", 15);
    printSummarySize(*loaded.model);
    osc::gui::TimelineWidget w;
    w.resize(1920, 1080);
    w.setModel(loaded.model);
    pass &= paintAtZooms(w, "A.");
    return pass;
}

bool caseSingleFile(const std::string& path, uint64_t kernels) {
    std::printf("\nB. %llu kernels in one file (one rank, %d streams), opened in the window\n",
                static_cast<unsigned long long>(kernels), kStreams);
    writeSingle(path, kernels, kStreams);
    osc::gui::MainWindow win;
    win.resize(1920, 1080);
    win.show();
    QApplication::processEvents();
    GuiStallProbe probe;  // the longest gap between GUI-thread timer ticks
    // Connected after the window's own slot: when this runs, showLoaded() has.
    bool loaded = false, failed = false;
    QObject::connect(win.loader(), &osc::gui::CaptureLoader::loaded, &win, [&] { loaded = true; });
    QObject::connect(win.loader(), &osc::gui::CaptureLoader::failed, &win, [&] { failed = true; });
    // When each stage of the worker was first reported.
    std::vector<std::pair<QString, double>> stages;
    QObject::connect(win.loader(), &osc::gui::CaptureLoader::progress, &win, [&](double, const QString& stage) {
        const QString head = stage.section(' ', 0, 1);
        if (stages.empty() || stages.back().first != head) stages.emplace_back(head, 0.0);
    });
    const auto t0 = Clock::now();
    QObject::connect(win.loader(), &osc::gui::CaptureLoader::progress, &win, [&](double, const QString&) {
        if (!stages.empty() && stages.back().second == 0.0) stages.back().second = seconds(t0);
    });
    win.openCapture(QString::fromStdString(path));
    probe.start();
    while (!loaded && !failed) QApplication::processEvents(QEventLoop::WaitForMoreEvents);
    if (failed) {
        std::printf("  the capture did not load\n");
        return false;
    }
    const double workerS = seconds(t0);
    while (win.stepModel()->sorting() || win.collectiveModel()->sorting())
        QApplication::processEvents(QEventLoop::WaitForMoreEvents);
    win.repaint();
    QApplication::processEvents();
    const double loadS = seconds(t0);
    probe.stop();
    std::printf("  worker stages began at:");
    for (const auto& [name, at] : stages) std::printf(" %s %.2f s,", name.toLocal8Bit().constData(), at);
    std::printf("\n  reading, lanes and analysis on the worker %.2f s; shown, tables sorted and painted at %.2f s\n",
                workerS, loadS);
    bool pass = verdict("B. load, File > Open to the first frame", loadS, "s", 15);
    // Showing the capture (lanes laid out, 580,000 table rows, first frame)
    // is the one part the GUI thread does itself.
    pass &= verdict("B. longest GUI-thread stall while loading", probe.longestMs(), "ms", 250);

    // Sorting the 580,000-row Collectives table by exposed time, as a header click does.
    const int rows = win.collectiveModel()->rowCount();
    GuiStallProbe sortProbe;
    sortProbe.start();
    const auto s0 = Clock::now();
    win.collectiveModel()->sort(osc::gui::CollectiveTableModel::Exposed, Qt::DescendingOrder);
    const double callMs = seconds(s0) * 1000;
    while (win.collectiveModel()->sorting()) QApplication::processEvents(QEventLoop::WaitForMoreEvents);
    const double sortS = seconds(s0);
    sortProbe.stop();
    std::printf("  sorting %d collectives by exposed time: sort() returned after %.1f ms, order applied after %.2f s\n",
                rows, callMs, sortS);
    pass &= verdict("B. longest GUI-thread stall while sorting", sortProbe.longestMs(), "ms", 100);
    pass &= paintAtZooms(*win.timeline(), "B.");
    return pass;
}

}  // namespace

int main(int argc, char** argv) {
    uint64_t kernels = 10'000'000;
    std::string dir, only;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--kernels") && i + 1 < argc)
            kernels = std::stoull(argv[++i]);
        else if (!std::strcmp(argv[i], "--dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!std::strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else {
            std::fprintf(stderr, "usage: bench_gui_paint [--kernels N] [--dir DIR] [--only A|B|C]\n");
            return 2;
        }
    }
    // Each case in a process of its own, so that each peak memory figure is
    // that case's alone (freed memory is not always returned to the system).
    if (only.empty()) {
        std::vector<std::string> args = {"--kernels", std::to_string(kernels)};
        if (!dir.empty()) args.insert(args.end(), {"--dir", dir});
        return oscbench::runCasesInChildren(argv[0], args, {"A", "B", "C"});
    }
    // The format version in the name: cached files of an older format would
    // measure the old reader path.
    if (dir.empty())
        dir = "/tmp/osc-bench-gui-" + std::to_string(kernels) + "-format" + std::to_string(osc::schema::kFormatVersion);
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    // Recent files of the bench go to its own directory, not the user's settings.
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, QString::fromStdString(dir + "/settings"));
    QApplication::setOrganizationName("overlapscope-bench");
    std::printf("bench_gui_paint: files in %s; load average %.2f on %u cores\n", dir.c_str(), loadAverage(),
                std::thread::hardware_concurrency());
    bool pass = true;
    if (only.empty() || only == "A") pass &= caseRanks(dir + "/ranks", kernels);
    if (only.empty() || only == "B") pass &= caseSingleFile(dir + "/single.sqlite", kernels);
    if (only.empty() || only == "C") pass &= caseHeatMap(1024);
    std::printf("\n");
    const double rss = peakRssGiB();
    pass &= verdict((only + ". peak memory (RSS)").c_str(), rss, "GiB", 3);
    return pass ? 0 : 1;
}
