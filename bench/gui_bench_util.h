// Helpers of bench_gui_paint: synthetic files, timing, paint measurement and
// a probe for how long the GUI thread was blocked.
#pragma once

#include "gui/model/timeline_model.h"

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace osc::gui {
class TimelineWidget;
}

namespace oscbench {

using Clock = std::chrono::steady_clock;

inline double seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }
double peakRssGiB();
double currentRssGiB();  // resident now
double processCpuMs();   // CPU time of every thread of the process
double threadCpuMs();    // CPU time of the calling thread
double loadAverage();    // 1-minute load average: how busy the machine was
// Prints one figure against its target; true when it meets it.
bool verdict(const char* what, double value, const char* unit, double target);

// Runs this program once per case, `args` then "--only CASE", one after the
// other, each in a process of its own so that each peak memory figure is that
// case's alone (freed memory is not always returned to the system). 0 when
// every case passed, 1 when one did not, 2 when one could not start.
int runCasesInChildren(const char* self, std::vector<std::string> args, const std::vector<const char*>& cases);

// Writes `kernels` over `ranks` files in `dir` (skipped when present).
void writeRanks(const std::string& dir, uint64_t kernels, int ranks, int streams);
void writeSingle(const std::string& path, uint64_t kernels, int streams);

void printSummarySize(const osc::gui::TimelineModel& model);
// Median of 7 uncached frames at the whole span, 1/10, 1/1000 and 1/100000.
bool paintAtZooms(osc::gui::TimelineWidget& w, const char* prefix);

// The longest gap between ticks of a 2 ms GUI-thread timer: how long the
// window could not paint or take input. On a loaded machine the wall time of
// a gap grows with the other processes' share of the cores; the GUI thread's
// own CPU time inside the gap is what it would be on an idle machine (for
// work that waits on no other thread).
class GuiStallProbe : public QObject {
public:
    void start();
    void stop();
    double longestMs() const { return longestMs_; }
    double longestCpuMs() const { return longestCpuMs_; }  // GUI-thread CPU time inside the longest gap
    double mostCpuMs() const { return mostCpuMs_; }        // the most GUI-thread CPU time of any gap

private:
    void tick();
    QTimer timer_;
    QElapsedTimer since_;
    double cpuAt_ = 0;
    double longestMs_ = 0, longestCpuMs_ = 0, mostCpuMs_ = 0;
};

// Case C: `ranks` ranks of a bucketed data-parallel pattern, in memory.
std::shared_ptr<osc::Capture> manyRanks(int ranks, int steps, int layers);
bool caseHeatMap(int ranks);

}  // namespace oscbench
