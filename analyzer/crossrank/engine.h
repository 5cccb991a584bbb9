// The cross-rank half of the analysis, written once: everything only
// several devices together can decide, over any DeviceSource (in memory or
// on disk), with memory bounded by the devices' headers, not their
// operations:
//
//   groups   per matching key, the first and last start, the first end and
//            who arrived last (docs/design.md section 4 "Multi-rank", 4c);
//   align    with --align collectives, each process's clock shift from the
//            reference process's ends (clock_alignment.h), then the groups
//            again in the shifted clocks;
//   p2p      sends paired with receives, all-to-all exchanges of grouped
//            sends and receives, and where each one's waiting ends
//            (p2p_match.h);
//   summary  the sums over devices and the spread of step time and overlap;
//   patterns the pipeline bubble (its window spans every stage) and the
//            all-to-all balance, by the metrics' own phases
//            (pipeline_bubble.h, alltoall.h) on one "shell" per device
//            (pattern_passes.cpp);
//   late     per collective one rank arrived at last, the median rank, and
//            the two ranks' lead-ups compared: why it was late
//            (straggler_pass.cpp, docs/design.md 4d);
//   device   per device, in order, when its caller asks: waiting versus
//            transfer against its exposed communication (wait_transfer.h),
//            last arrivals, bus bandwidth (bandwidth_pass.h), its matched
//            instances;
//   matched  then the matched collectives, in the report's order.
//
// A new cross-rank metric: its inputs in DeviceHeader or a stream of
// DeviceSource (both sources fill them), its computation here, and a
// per-device value in DeviceCrossRank (device_cross_rank.h).
#pragma once

#include "analyzer/crossrank/common_steps.h"
#include "analyzer/crossrank/device_cross_rank.h"
#include "analyzer/crossrank/device_source.h"
#include "analyzer/crossrank/p2p_match.h"

#include <algorithm>
#include <climits>
#include <memory>
#include <optional>
#include <vector>

namespace osc::crossrank {

struct EngineOptions {
    AnalysisSettings settings;  // alignCollectives decides --align
    // Matched instances held in memory at once before they go to disk.
    size_t instancesInMemory = size_t{8} << 20;
};

class InstanceTable;

class Engine {
public:
    // Runs everything but the per-device part.
    Engine(const DeviceSource& source, const EngineOptions& options);
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    // Everything but the devices and matched collectives: settings, summary,
    // total skew, spread, dropped records, warnings, point-to-point pairs,
    // pipeline and all-to-all steps. Its devices are shells: identity,
    // pipeline and all-to-all results (what the summary and the job-level
    // lists name), no collectives.
    const Analysis& rest() const { return rest_; }
    size_t deviceCount() const { return n_; }
    size_t matchedCount() const { return matched_.size(); }

    // One device at a time in order 0, 1, ...
    DeviceCrossRank device(size_t index);
    // After the last device, in order 0, 1, ...
    MatchedCollective matched(size_t index);

private:
    // One matching key over the job: each device counts once, with its
    // first operation of that key.
    struct Group {
        uint32_t devices = 0;
        uint32_t stamp = 0;  // device index + 1 of the last device counted
        TimeNs firstStart = 0, lastStart = 0, firstEnd = 0;
        TimeNs second = INT64_MIN;  // the second-latest start (equal to lastStart on a tie)
        int lastDevice = -1, atLast = 0;
        uint32_t host = 0;       // of its first device with a known host (hostOf_), 0 none
        bool multiHost = false;  // devices on two hosts or more

        void add(int device, TimeNs start, TimeNs end) {
            if (devices == 0) {
                firstStart = start;
                firstEnd = end;
                lastStart = INT64_MIN;
            }
            firstStart = std::min(firstStart, start);
            firstEnd = std::min(firstEnd, end);
            if (start > lastStart) {
                second = lastStart;
                lastStart = start;
                lastDevice = device;
                atLast = 1;
            } else {
                if (start == lastStart) ++atLast;
                second = std::max(second, start);
            }
            ++devices;
        }
    };
    // What matched_collectives lists, in its order: a collective's key, or an exchange.
    struct MatchedEntry {
        bool exchange;
        uint32_t id;  // into groups_ or P2pMatch::exchanges()
    };
    TimeNs shiftOf(size_t index) const;
    std::vector<OpRecord> shiftedOps(size_t index) const;
    IntervalSet shifted(IntervalSet set, size_t index) const;
    void groupPass();
    void orderMatched();
    void arrivals();
    void summarize();
    void buildShells();
    void pipelinePass();   // pattern_passes.cpp
    void allToAllPass();   // pattern_passes.cpp
    void stragglerPass();  // straggler_pass.cpp

    // The source, read over the steps every device holds (common_steps.h).
    const std::unique_ptr<CommonStepSource> common_;
    const DeviceSource& source_;
    const size_t n_;
    Analysis rest_;
    std::vector<TimeNs> clockShift_;     // per job process (--align collectives)
    std::vector<Group> groups_;          // per key
    std::vector<uint32_t> matchedKeys_;  // keys with >= 2 devices, by first start, then key
    std::unique_ptr<P2pMatch> p2p_;
    std::vector<MatchedEntry> matched_;  // keys and exchanges, in report order
    std::vector<uint64_t> slotOf_;       // per key: its first instance's slot in matched order
    std::vector<int> lastArrivals_;
    std::vector<TimeNs> delayCaused_;
    std::vector<uint32_t> hostOf_;
    std::vector<std::vector<size_t>>
        sharedGpus_;  // devices on one GPU (same UUID), for each GPU with several  // per device: its host, numbered from 1 (0: unknown)
    // Per device: why it was late where it arrived last, and its finding.
    std::vector<std::optional<StragglerMetrics>> straggler_;
    std::vector<std::optional<Finding>> stragglerFinding_;
    size_t instancesInMemory_;
    std::unique_ptr<InstanceTable> instances_;
    size_t nextDevice_ = 0, nextMatched_ = 0;
};

}  // namespace osc::crossrank
