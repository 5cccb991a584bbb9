// A device's report object from a partial result, written again as the
// job's report holds it: the layout of writeDeviceJson (dump(2) at a given
// indent), every "start_ns"/"end_ns" moved to the job's timeline, and the
// fields only other ranks can decide filled in. Streamed token by token
// (nlohmann's SAX parser): memory does not grow with the device's size, and
// fields this code has never heard of pass through as they are.
#pragma once

#include "analyzer/metrics/analysis.h"

#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace osc::partial {

// What the merge decided for one device.
struct DeviceCrossRank {
    TimeNs shift = 0;  // added to every integer field named start_ns or end_ns
    // DESIGN 4c, absent with one device: totals.comm_wait_ns, exposed_wait_ns,
    // exposed_transfer_ns and the same in each step (by position).
    std::optional<WaitTransferMetrics> wait;
    std::vector<WaitTransferMetrics> stepWait;
    std::optional<int> lastArrivals;          // totals.last_arrivals
    std::optional<TimeNs> delayCaused;        // totals.delay_caused_ns
    std::optional<TimeNs> clockShift;         // clock_shift_ns, the last field, with --align collectives
    // The merge's shell of the device (merge.h): its pipeline and all-to-all
    // results (totals and per step, by position) and the findings they add
    // (device and per step), put in by addFinding; with a pipeline, the
    // idle-gap and communication-bound findings get the pipeline's note.
    const DeviceAnalysis* patterns = nullptr;
    // Idle-gap findings name a time on the file's timeline (window -1: the
    // device's findings, else its step; PartDevice::idleGapAt): written
    // moved by messageShift, to the job's timeline as analyze() names it.
    TimeNs messageShift = 0;
    const std::vector<std::pair<int, TimeNs>>* idleGapAt = nullptr;
};

// Reads one device object from `in`; writes it to `out` starting at the
// opening brace, inner lines indented indent + 2. Throws CaptureError(origin, ...)
// when `in` is not one JSON object.
void rewriteDeviceJson(std::istream& in, std::ostream& out, int indent, const DeviceCrossRank& cross,
                       const std::string& origin);

}  // namespace osc::partial
