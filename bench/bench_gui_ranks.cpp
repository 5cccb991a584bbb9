// overlapscope-gui with many ranks (issue 40 part 1): no interaction may
// freeze the window.
//
//  D. a data-parallel job of 1,024 ranks and 100 steps (overlapscope synth,
//     8 ranks a host, one rank arriving 2 ms late at every step), opened as a
//     user opens it (File > Open), then driven as a user drives it:
//       the window's first frame after the capture is read,      target <= 2 s
//       the longest the GUI thread is blocked by each click, drag,
//       selection, fold and panel switch,                        target < 100 ms
//       peak resident memory, the What-if and Collective progress
//       panels computed too (each runs an analysis of its own over
//       every rank's operations),                                target < 1 GiB
//       (the peak before those two panels is printed apart)
//     OSC_BENCH_MEMORY=1 adds the resident size after every action;
//     OSC_BENCH_MEMORY=stages instead loads it stage by stage and prints
//     what each stage and each panel's analysis adds.
//  E. a saved report of 100,000 devices (a report of many files), opened with
//     File > Open until the window shows it,                     target <= 10 s
//
// usage: bench_gui_ranks [--ranks N] [--steps S] [--devices D] [--dir DIR] [--only D|E]
// The job and the report are written once into DIR (default
// /tmp/osc-bench-gui-ranks-N-S) and reused; writing them is not part of any
// figure. Each case runs in a process of its own (peak memory is its own).
#include "bench/gui_bench_util.h"

#include "analyzer/crossrank/analyze.h"
#include "analyzer/hang/hang.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/report/report_json.h"
#include "analyzer/synth/workload_synth.h"
#include "analyzer/whatif/whatif.h"
#include "gui/widgets/capture_loader.h"
#include "gui/widgets/heat_map_widget.h"
#include "gui/widgets/main_window.h"
#include "gui/widgets/metric_tables.h"
#include "gui/widgets/process_memory.h"
#include "gui/widgets/rank_menu.h"
#include "gui/widgets/rank_panel.h"
#include "gui/widgets/timeline_widget.h"
#include "gui/widgets/whatif_panel.h"

#include <QAbstractItemView>
#include <QApplication>
#include <QDockWidget>
#include <QHeaderView>
#include <QSettings>
#include <QTableView>
#include <QTest>
#include <QTimer>

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace oscbench;

constexpr double kBlockTargetMs = 100, kFirstFrameTargetS = 2, kMemoryTargetGiB = 1, kReportTargetS = 10;

// Runs the events the last interaction queued (paints, sorts, results of
// workers) until the window has been idle a while.
void settle(osc::gui::MainWindow& win, int quietMs = 120) {
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < quietMs || win.stepModel()->sorting()) {
        QApplication::processEvents(QEventLoop::AllEvents, 20);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

// A block of the GUI thread against the target: judged by the GUI thread's
// own CPU time inside its longest gap (what the block lasts on an idle
// machine), with the wall time of the longest gap beside it (longer on a
// loaded one).
bool blockVerdict(const char* what, const GuiStallProbe& probe) {
    const bool pass = probe.mostCpuMs() < kBlockTargetMs;
    std::printf("%-50s %7.1f ms CPU, %6.0f ms wall (target < %g ms)  %s\n", what, probe.mostCpuMs(), probe.longestMs(),
                kBlockTargetMs, pass ? "PASS" : "FAIL");
    std::fflush(stdout);
    return pass;
}

// One interaction: the longest the GUI thread was blocked from its start
// until the window is idle again.
struct Interactions {
    osc::gui::MainWindow& win;
    bool pass = true;
    double worst = 0, worstWall = 0;
    void run(const char* what, const std::function<void()>& act) {
        GuiStallProbe probe;
        probe.start();
        act();
        settle(win);
        probe.stop();
        pass &= blockVerdict(("D. " + std::string(what)).c_str(), probe);
        if (std::getenv("OSC_BENCH_MEMORY"))
            std::printf("    resident %.2f GiB, peak %.2f GiB, heap in use %.2f GiB\n", currentRssGiB(), peakRssGiB(),
                        static_cast<double>(mallinfo2().uordblks) / (1 << 30));
        worst = std::max(worst, probe.mostCpuMs());
        worstWall = std::max(worstWall, probe.longestMs());
    }
};

QTableView* tableIn(osc::gui::MainWindow& win, const QString& dock) {
    for (QDockWidget* d : win.findChildren<QDockWidget*>())
        if (d->objectName() == dock) return d->findChild<QTableView*>();
    return nullptr;
}

// When the loader's latest queued call (progress, `loaded`, the worker's end)
// began to be delivered on the GUI thread, and the thread's CPU time then.
struct DeliveryClock : QObject {
    Clock::time_point at = Clock::now();
    double cpuMs = 0;
    bool eventFilter(QObject*, QEvent* e) override {
        if (e->type() == QEvent::MetaCall) at = Clock::now(), cpuMs = threadCpuMs();
        return false;
    }
};

void clickRow(QTableView* table, int row) {
    const QRect r = table->visualRect(table->model()->index(row, 1));
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, r.center());
}

// A drag in `steps` moves, the events of each handled before the next.
void drag(QWidget* w, QPoint from, QPoint to, int steps) {
    QTest::mousePress(w, Qt::LeftButton, {}, from);
    for (int i = 1; i <= steps; ++i) {
        QTest::mouseMove(w, from + (to - from) * i / steps);
        QApplication::processEvents();
    }
    QTest::mouseRelease(w, Qt::LeftButton, {}, to);
}

void wheel(QWidget* w, QPoint at, int notches, Qt::KeyboardModifiers mods) {
    QWheelEvent e(at, w->mapToGlobal(at), {}, {0, 120 * notches}, Qt::NoButton, mods, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(w, &e);
}

// Where a kernel is drawn, in timeline widget coordinates (its lane in view).
QPoint pointOf(osc::gui::TimelineWidget& t, osc::gui::EventRef ref) {
    const osc::gui::EventRow& row = t.model()->lane(ref.lane).rows[static_cast<size_t>(ref.row)];
    const osc::TimeNs mid = row.start[ref.index] + (row.end[ref.index] - row.start[ref.index]) / 2;
    const osc::gui::LaneSlot* slot = t.layout().slotOf(ref.lane);
    if (!slot) slot = t.layout().rankRowOf(t.model()->lane(ref.lane).group);
    const int y = osc::gui::TimelineWidget::kRulerHeight + slot->y - t.scrollY() + slot->height / 2;
    return {static_cast<int>(t.xOf(mid)), y};
}

// The first communication kernel of a rank near the middle of the view.
osc::gui::EventRef middleCollective(osc::gui::TimelineWidget& t, int group) {
    const osc::gui::TimelineModel& m = *t.model();
    const osc::TimeNs mid = t.viewRange().start + t.viewRange().length() / 2;
    for (int l : m.groups()[static_cast<size_t>(group)].lanes) {
        const osc::gui::Lane& lane = m.lane(l);
        if (lane.kind != osc::gui::LaneKind::Stream || lane.mainCategory != osc::Category::Communication) continue;
        const osc::gui::EventRow& row = lane.rows[0];
        const size_t i = row.firstEndingAfter(mid);
        if (i < row.size()) return {l, 0, i};
    }
    return {};
}

std::string writeJob(const std::string& dir, int ranks, int steps) {
    const std::string job = dir + "/job";
    if (std::filesystem::exists(job + "/.complete")) return job;
    std::filesystem::remove_all(job);
    osc::synth::WorkloadSpec spec;
    spec.ranks = ranks;
    spec.steps = steps;
    spec.ranksPerHost = 8;
    spec.jitter = 0.05;
    spec.arrivalSkewNs.assign(static_cast<size_t>(ranks), 0);
    spec.arrivalSkewNs[static_cast<size_t>(ranks * 2 / 3)] = 2'000'000;  // the late rank
    std::fprintf(stderr, "writing %d ranks x %d steps into %s ...\n", ranks, steps, job.c_str());
    osc::synth::writeWorkload(spec, job, false);
    std::ofstream(job + "/.complete") << "ok\n";
    return job;
}

// Where the memory goes: resident size after each stage of a load, one
// after the other (the window's loader runs the analysis and the lanes side
// by side), then the highest resident size while each panel's own analysis
// runs on top (sampled every 2 ms: the process's peak only ever grows).
class ResidentSampler {
public:
    ResidentSampler()
        : thread_([this] {
              while (!stop_) {
                  highest_ = std::max(highest_.load(), currentRssGiB());
                  std::this_thread::sleep_for(std::chrono::milliseconds(2));
              }
          }) {}
    ~ResidentSampler() {
        stop_ = true;
        thread_.join();
    }
    double highest() const { return std::max(highest_.load(), currentRssGiB()); }

private:
    std::atomic<bool> stop_{false};
    std::atomic<double> highest_{0};
    std::thread thread_;
};

void memoryByStage(const std::string& job) {
    const double base = currentRssGiB();
    osc::LoadOptions options;
    options.launchShapeOnly = true;  // as the window reads it
    auto capture = std::make_shared<osc::Capture>(osc::loadCapture(job, options));
    const double read = currentRssGiB();
    auto model = std::make_shared<osc::gui::TimelineModel>(capture);
    const double lanes = currentRssGiB();
    auto analysis = std::make_shared<const osc::Analysis>(osc::analyze(*capture));
    const double analysed = currentRssGiB();
    model->annotate(*analysis);
    const double annotated = currentRssGiB();
    std::printf(
        "  resident by stage: capture %.2f GiB, lanes and coverages %.2f, analysis %.2f, annotated %.2f "
        "(peak %.2f)\n",
        read - base, lanes - read, analysed - lanes, annotated - analysed, peakRssGiB());
    {
        ResidentSampler sampler;
        const osc::hang::HangAnalysis hang = osc::hang::analyzeHang(capture.get(), {});
        std::printf("  Collective progress's hang analysis: highest resident %.2f GiB (+%.2f), %zu communicators\n",
                    sampler.highest(), sampler.highest() - annotated, hang.communicators.size());
    }
    {
        const double before = currentRssGiB();
        ResidentSampler sampler;
        osc::whatif::WhatIfSettings settings;
        settings.bucketMb = osc::gui::WhatIfPanel::bucketSizes();  // as the panel asks
        const osc::whatif::WhatIfResult r = osc::whatif::runWhatIf(*capture, *analysis, settings);
        std::printf("  What-if replay: highest resident %.2f GiB (+%.2f), %zu devices\n", sampler.highest(),
                    sampler.highest() - before, r.devices.size());
    }
}

bool caseRanks(const std::string& dir, int ranks, int steps) {
    std::printf("\nD. %d ranks x %d steps (synth data-parallel, 8 ranks a host, rank %d arrives 2 ms late)\n", ranks,
                steps, ranks * 2 / 3);
    const std::string job = writeJob(dir, ranks, steps);
    if (const char* m = std::getenv("OSC_BENCH_MEMORY"); m && std::string_view(m) == "stages") {
        memoryByStage(job);
        return true;
    }
    osc::gui::MainWindow win;
    win.resize(1920, 1080);
    win.show();
    QApplication::processEvents();
    bool loaded = false, failed = false;
    // The window's own slot runs first on `loaded` (it connected first): the
    // first frame is timed from the start of the delivery that emitted it.
    DeliveryClock delivery;
    win.loader()->installEventFilter(&delivery);
    Clock::time_point shownFrom;
    double shownFromCpu = 0;
    QObject::connect(win.loader(), &osc::gui::CaptureLoader::loaded, &win, [&] {
        loaded = true;
        shownFrom = delivery.at;  // the start of the call this runs in, before the window's showLoaded
        shownFromCpu = delivery.cpuMs;
    });
    QObject::connect(win.loader(), &osc::gui::CaptureLoader::failed, &win, [&] { failed = true; });
    const auto t0 = Clock::now();
    win.openCapture(QString::fromStdString(job));
    while (!loaded && !failed) QApplication::processEvents(QEventLoop::WaitForMoreEvents);
    if (failed) {
        std::printf("  the job did not load\n");
        return false;
    }
    // Until the worker handed the capture over.
    const double readS = std::chrono::duration<double>(shownFrom - t0).count();
    win.repaint();
    QApplication::processEvents();
    const double firstFrameS = seconds(shownFrom);
    const double firstFrameCpuS = (threadCpuMs() - shownFromCpu) / 1e3;
    settle(win);
    osc::gui::TimelineWidget& t = *win.timeline();
    std::printf("  %zu kernels in %zu lanes; read and analysed on the worker in %.2f s (load average %.2f)\n",
                t.model()->capture().kernelCount(), t.model()->lanes().size(), readS, loadAverage());
    std::printf("  resident once shown %.2f GiB, peak so far %.2f GiB\n", currentRssGiB(), peakRssGiB());
    std::printf("  the window showed it (tables filled, first frame painted) in %.2f s of GUI-thread CPU\n",
                firstFrameCpuS);
    bool pass = verdict("D. first frame once the capture is read (wall)", firstFrameS, "s", kFirstFrameTargetS);

    Interactions in{win};
    auto* ranksTable = tableIn(win, "ranks");
    in.run("panel switch: Collectives across ranks", [&] { win.raisePanel("ranks"); });
    for (int row : {0, 5, 200})
        in.run(("click row " + std::to_string(row) + " of Collectives across ranks").c_str(),
               [&] { clickRow(ranksTable, row); });
    const int rulerY = osc::gui::TimelineWidget::kRulerHeight / 2;
    const int left = osc::gui::TimelineWidget::kLabelWidth + 20, right = t.width() - 20;
    in.run("drag on the ruler over every rank (20 moves)", [&] { drag(&t, {left, rulerY}, {right, rulerY}, 20); });
    in.run("drag a selection down across the lanes", [&] {
        drag(&t, {left + 100, osc::gui::TimelineWidget::kRulerHeight + 10}, {right - 100, t.height() - 10}, 20);
    });
    t.clearSelection();
    // At 1,024 ranks the lanes may open folded under their hosts (the layout
    // then holds no group): rank 0's group is shown first, untimed.
    t.revealGroup(0);
    settle(win);
    const int shownGroup = t.layout().groups().empty() ? 0 : t.layout().groups().front().group;
    const osc::gui::EventRef coll = middleCollective(t, shownGroup);
    in.run("click a collective on the timeline", [&] { QTest::mouseClick(&t, Qt::LeftButton, {}, pointOf(t, coll)); });
    in.run("zoom in and out with the wheel (10 notches)", [&] {
        for (int i = 0; i < 10; ++i) {
            wheel(&t, {t.width() / 2, t.height() / 2}, i < 5 ? 1 : -1, Qt::ControlModifier);
            QApplication::processEvents();
        }
    });
    in.run("group ranks by host", [&] { osc::gui::applyRankView(&win, "host", false); });
    in.run("fold a host", [&] {
        const auto& s = t.layout().sections().front();
        QTest::mouseClick(&t, Qt::LeftButton, {},
                          {100, osc::gui::TimelineWidget::kRulerHeight + s.y - t.scrollY() + 4});
    });
    in.run("one row per rank", [&] { osc::gui::applyRankView(&win, "none", true); });
    const int lateGroup = [&] {
        for (size_t g = 0; g < t.model()->groups().size(); ++g)
            if (t.model()->processOf(static_cast<int>(g)).rank == ranks * 2 / 3) return static_cast<int>(g);
        return 0;
    }();
    t.revealGroup(lateGroup);
    settle(win);
    const osc::gui::EventRef lateColl = middleCollective(t, lateGroup);
    in.run("click the late rank's row (one row per rank)",
           [&] { QTest::mouseClick(&t, Qt::LeftButton, {}, pointOf(t, lateColl)); });
    for (const char* panel : {"steps", "collectives", "statistics", "ranks", "heatmap"})
        in.run((std::string("panel switch: ") + panel).c_str(), [&] { win.raisePanel(panel); });
    in.run("heat map colour: lateness", [&] { win.heatMap()->setMetric(osc::gui::HeatMetric::Lateness); });
    osc::gui::HeatMapView* heat = win.heatMap()->view();
    in.run("click a heat map cell", [&] {
        QTest::mouseClick(heat, Qt::LeftButton, {}, heat->cellCentre(ranks * 2 / 3, heat->heatMap().columns / 2));
    });
    in.run("Esc clears the selection", [&] { QTest::keyClick(&t, Qt::Key_Escape); });
    // The memory of viewing: everything above. The two panels below each run
    // an analysis of their own over every rank's operations.
    const double viewing = peakRssGiB();
    for (const char* panel : {"whatif", "hang"})
        in.run((std::string("panel switch: ") + panel).c_str(), [&] { win.raisePanel(panel); });
    win.waitForPanels();  // the What-if replay, on its worker
    std::printf("  worst of all interactions %.1f ms of GUI-thread CPU, %.1f ms wall (load average %.2f)\n", in.worst,
                in.worstWall, loadAverage());
    std::printf("  peak before the What-if and Collective progress panels: %.2f GiB\n", viewing);
    pass &= verdict("D. peak memory, those panels computed (RSS)", peakRssGiB(), "GiB", kMemoryTargetGiB);
    return pass && in.pass;
}

// A saved report of `devices` devices: 100 ranks a host, 3 steps each, one
// all-reduce a step matched over every device.
std::string writeReport(const std::string& dir, int devices) {
    const std::string path = dir + "/report-" + std::to_string(devices) + ".json";
    if (std::filesystem::exists(path)) return path;
    std::fprintf(stderr, "writing a report of %d devices into %s ...\n", devices, path.c_str());
    osc::Analysis a;
    const int steps = 3;
    a.matched.resize(steps);
    for (int d = 0; d < devices; ++d) {
        osc::DeviceAnalysis dev;
        dev.host = "node-" + std::to_string(d / 100);
        dev.pid = 1000 + d % 100;
        dev.rank = d;
        dev.device = static_cast<uint32_t>(d % 8);
        for (int s = 0; s < steps; ++s) {
            osc::StepAnalysis st;
            st.name = "ProfilerStep#" + std::to_string(s);
            st.start_ns = s * 10'000'000;
            st.end_ns = st.start_ns + 9'000'000;
            st.metrics.window_ns = 9'000'000;
            st.metrics.compute_ns = 6'000'000 + (d % 97) * 1000;
            st.metrics.comm_ns = 2'000'000;
            st.metrics.overlap_ns = 1'500'000;
            st.metrics.exposed_comm_ns = 500'000;
            st.metrics.overlap_ratio = 0.75;
            dev.steps.push_back(st);
            osc::CollectiveInstance c;
            c.name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
            c.collective = "AllReduce";
            c.start_ns = st.start_ns + 7'000'000 + (d % 13) * 1000;
            c.end_ns = c.start_ns + 2'000'000;
            c.duration_ns = 2'000'000;
            c.overlapped_ns = 1'500'000;
            c.exposed_ns = 500'000;
            c.bytes = 25u << 20;
            c.step = s;
            dev.collectives.push_back(c);
            a.matched[static_cast<size_t>(s)].collective = "AllReduce";
            a.matched[static_cast<size_t>(s)].instances.emplace_back(d, s);
        }
        a.devices.push_back(std::move(dev));
    }
    // A "report of many files": one input per device.
    osc::report::ReportOptions options;
    for (int d = 0; d < devices; ++d)
        options.inputs.push_back("node-" + std::to_string(d / 100) + "/rank" + std::to_string(d) + ".sqlite");
    std::ofstream out(path + ".part");
    osc::report::writeJsonReport(out, a, options);
    out.close();
    std::filesystem::rename(path + ".part", path);
    return path;
}

// CPU time per thread of this process, sampled from /proc while the load
// runs (a thread's figure is kept after it ends): the longest thread's is
// what the load takes on an idle machine with a core per thread.
class ThreadCpuSampler {
public:
    void sample() {
        const long hz = sysconf(_SC_CLK_TCK);
        for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
            std::ifstream stat(entry.path() / "stat");
            std::string line;
            std::getline(stat, line);
            // Fields after the command name in parentheses: utime and stime are the 12th and 13th.
            const size_t close = line.rfind(')');
            if (close == std::string::npos) continue;
            std::istringstream rest(line.substr(close + 2));
            std::string field;
            double ticks = 0;
            for (int k = 1; k <= 13 && rest >> field; ++k)
                if (k >= 12) ticks += std::stod(field);
            const std::string tid = entry.path().filename();
            ms_[tid] = std::max(ms_[tid], ticks * 1000.0 / static_cast<double>(hz));
        }
    }
    // The most CPU time of one thread other than `except` (the window's).
    double longestMs(const std::string& except) const {
        double most = 0;
        for (const auto& [tid, ms] : ms_)
            if (tid != except) most = std::max(most, ms);
        return most;
    }

private:
    std::map<std::string, double> ms_;
};

bool caseReport(const std::string& dir, int devices) {
    std::printf("\nE. a saved report of %d devices, opened with File > Open\n", devices);
    const std::string path = writeReport(dir, devices);
    osc::gui::MainWindow win;
    win.resize(1920, 1080);
    win.show();
    QApplication::processEvents();
    bool loaded = false, failed = false;
    QObject::connect(win.loader(), &osc::gui::CaptureLoader::loaded, &win, [&] { loaded = true; });
    QObject::connect(win.loader(), &osc::gui::CaptureLoader::failed, &win, [&] { failed = true; });
    GuiStallProbe probe;
    ThreadCpuSampler threads;
    QTimer sampling;
    QObject::connect(&sampling, &QTimer::timeout, &win, [&] { threads.sample(); });
    const auto t0 = Clock::now();
    const double cpu0 = processCpuMs(), guiCpu0 = threadCpuMs();
    win.openCapture(QString::fromStdString(path));
    probe.start();
    sampling.start(20);
    while (!loaded && !failed) QApplication::processEvents(QEventLoop::WaitForMoreEvents);
    if (failed) {
        std::printf("  the report did not load\n");
        return false;
    }
    win.repaint();
    QApplication::processEvents();
    while (win.stepModel()->sorting()) QApplication::processEvents(QEventLoop::WaitForMoreEvents);
    const double shownS = seconds(t0), cpuS = (processCpuMs() - cpu0) / 1e3;
    const double guiS = (threadCpuMs() - guiCpu0) / 1e3;
    probe.stop();
    sampling.stop();
    threads.sample();
    const double longestS = threads.longestMs(std::to_string(gettid())) / 1e3;
    std::printf("  read on the worker and shown in %.2f s wall (load average %.2f); CPU time of all threads %.2f s\n",
                shownS, loadAverage(), cpuS);
    // On a loaded machine the wall time is the other processes' as much as
    // ours. The reading thread runs the parts that cannot be split and its
    // share of the devices, the others their shares, then the window shows
    // the result: the longest worker's CPU time plus the window's own is
    // the time on an idle machine with a core for each reading thread.
    std::printf("  longest reading thread %.2f s of CPU, the window's thread %.2f s\n", longestS, guiS);
    bool pass = verdict("E. File > Open to showing it (longest thread + window)", longestS + guiS, "s", kReportTargetS);
    std::printf("  longest GUI-thread block meanwhile: %.0f ms of its CPU (wall %.0f ms)\n", probe.mostCpuMs(),
                probe.longestMs());
    return pass;
}

}  // namespace

int main(int argc, char** argv) {
    osc::gui::limitAllocatorArenas();  // as the application starts
    int ranks = 1024, steps = 100, devices = 100'000;
    std::string dir, only;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--ranks") && i + 1 < argc)
            ranks = std::stoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = std::stoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--devices") && i + 1 < argc)
            devices = std::stoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!std::strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else {
            std::fprintf(stderr,
                         "usage: bench_gui_ranks [--ranks N] [--steps S] [--devices D] [--dir DIR] "
                         "[--only D|E]\n");
            return 2;
        }
    }
    if (dir.empty()) dir = "/tmp/osc-bench-gui-ranks-" + std::to_string(ranks) + "-" + std::to_string(steps);
    if (only.empty())
        return oscbench::runCasesInChildren(argv[0],
                                            {"--ranks", std::to_string(ranks), "--steps", std::to_string(steps),
                                             "--devices", std::to_string(devices), "--dir", dir},
                                            {"D", "E"});
    std::filesystem::create_directories(dir);
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, QString::fromStdString(dir + "/settings"));
    QApplication::setOrganizationName("overlapscope-bench");
    std::printf("bench_gui_ranks: files in %s; load average %.2f on %u cores\n", dir.c_str(), loadAverage(),
                std::thread::hardware_concurrency());
    bool pass = true;
    if (only == "D") pass &= caseRanks(dir, ranks, steps);
    if (only == "E") pass &= caseReport(dir, devices);
    std::printf("\n%s. peak memory of the case (RSS) %.2f GiB\n", only.c_str(), peakRssGiB());
    return pass ? 0 : 1;
}
