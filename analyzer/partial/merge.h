// The cross-rank half of analyze() (finishAnalysis in metrics/analysis.h) over partial
// results, with memory bounded by the largest device rather than the job:
// per device only its header stays in memory (part_set.h); its operations
// are read back from disk for each pass. The results are exactly those of
// finishAnalysis on the same devices (tests compare them on random jobs):
//
//   pass 1  groups: per matching key, the first and last start, the first
//           end and who arrived last (matchAcrossDevices, computeWaitTransfer);
//   align   with --align collectives, each process's shift from the
//           reference process's ends (collectiveClockShifts), then pass 1
//           again in the shifted clocks;
//   p2p     sends paired with receives, all-to-all exchanges of grouped
//           sends and receives, and where each one's waiting ends
//           (matchPointToPoint, computeWaitTransfer; merge_p2p.h);
//   patterns the pipeline bubble (its window spans every stage) and the
//           all-to-all balance, run by the metrics' own phases on one
//           "shell" per device (identity, step windows, the results and the
//           findings they add; merge_patterns.cpp);
//   pass 2  per device, in order, when its report object is written:
//           waiting versus transfer against its exposed communication, and
//           its matched instances for "matched_collectives"; the shell's
//           results and findings go into its report object.
//
// A new cross-rank metric needs its inputs in the partial's device line
// (partial_format.cpp writes it, part_set.cpp reads it), its computation
// here, and, when it fills a per-device field, the field in
// DeviceCrossRank (device_json.h); DESIGN-level results that are not per
// device go into rest() or a new StreamedReportBody part.
#pragma once

#include "analyzer/partial/device_json.h"
#include "analyzer/partial/merge_p2p.h"
#include "analyzer/partial/part_set.h"
#include "analyzer/report/report_options.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace osc::partial {

struct MergeOptions {
    // --align for the merged job; unset: what the partials were made with
    // (they must agree).
    std::optional<bool> alignCollectives;
    // After each device is written: devices done, devices in all.
    std::function<void(size_t done, size_t total)> progress;
    // Matched instances held in memory at once before they go to disk.
    size_t instancesInMemory = size_t{8} << 20;
};

class InstanceTable;

class Merge {
public:
    // Runs pass 1 and the alignment. Throws std::invalid_argument when the
    // partials disagree on --align and none was given.
    Merge(const PartSet& parts, const MergeOptions& options);
    ~Merge();
    Merge(const Merge&) = delete;
    Merge& operator=(const Merge&) = delete;

    // Everything but the devices and matched collectives: settings, summary,
    // total skew, spread, dropped records, warnings, point-to-point pairs,
    // pipeline and all-to-all steps. Its devices are shells: identity,
    // pipeline and all-to-all results (what the summary and the job-level
    // lists name), no collectives.
    const Analysis& rest() const { return rest_; }
    size_t deviceCount() const { return order_.size(); }
    size_t matchedCount() const { return matched_.size(); }

    // Pass 2, one device at a time in order 0, 1, ...: its report object
    // (writeDeviceJson's layout), or read back as a DeviceAnalysis.
    void writeDevice(std::ostream& out, int indent, size_t index);
    DeviceAnalysis device(size_t index);
    // After the last device, in order 0, 1, ...
    MatchedCollective matched(size_t index);

private:
    // One matching key over the job, as matchAcrossDevices and
    // computeWaitTransfer see its group: each device counts once, with its first
    // operation of that key.
    struct Group {
        uint32_t devices = 0;
        uint32_t stamp = 0;  // ordered device index + 1 of the last device counted
        TimeNs firstStart = 0, lastStart = 0, firstEnd = 0;
        TimeNs second = INT64_MIN;  // the second-latest start (equal to lastStart on a tie)
        int lastDevice = -1, atLast = 0;

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
    void groupPass();
    void alignClocks();
    void arrivals();
    void summarize();
    void orderMatched();
    void buildShells();
    void pipelinePass();   // merge_patterns.cpp
    void allToAllPass();   // merge_patterns.cpp
    DeviceCrossRank crossRank(size_t index);

    const PartSet& parts_;
    MergeOptions options_;
    Analysis rest_;
    std::vector<size_t> order_;         // devices in job order (into parts_.devices)
    std::vector<int> processOf_;        // job process index of each ordered device
    std::vector<TimeNs> fileShift_;     // per file: its origin on the job's timeline
    std::vector<TimeNs> clockShift_;    // per job process (--align collectives)
    size_t processes_ = 0;
    std::vector<Group> groups_;         // per key
    std::vector<uint32_t> matchedKeys_;  // keys with >= 2 devices, in matchAcrossDevices' order
    std::unique_ptr<P2pMatch> p2p_;
    std::vector<MatchedEntry> matched_;  // keys and exchanges, in report order
    std::vector<uint64_t> slotOf_;      // per key: its first instance's slot in matched order
    std::vector<int> lastArrivals_;
    std::vector<TimeNs> delayCaused_;
    std::unique_ptr<InstanceTable> instances_;
    size_t nextDevice_ = 0, nextMatched_ = 0;
};

// The merged report JSON, streamed (report_json.h's layout).
void writeMergedJson(const PartSet& parts, const MergeOptions& options, const report::ReportOptions& report,
                     std::ostream& out);
// The merged job as an Analysis (text and Markdown reports, check, diff).
// Without `collectives` the devices' collectives and signatures are dropped
// as they are read: memory then holds little more than the per-device totals.
Analysis mergedAnalysis(const PartSet& parts, const MergeOptions& options, bool collectives = true);

}  // namespace osc::partial
