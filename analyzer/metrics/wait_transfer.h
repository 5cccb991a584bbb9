// DESIGN.md section 4c: the part of communication spent waiting for the last
// rank to arrive versus moving data, who arrives last, and clock alignment
// on matched collectives (--align collectives).
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/metrics/intervals.h"

#include <vector>

namespace osc {

// Needs Analysis::matched and Analysis::p2p (matchAcrossDevices,
// matchPointToPoint). `intervalsOfDevice[d].exposed` is M ∖ C of device d
// over the whole capture, in the same clock as its collectives: waiting lies
// inside M, so (Wt ∖ Tr) ∖ C = (Wt ∖ Tr) ∩ (M ∖ C). Fills each device's and
// step's `wait`, and `last_arrivals` and `delay_caused_ns`; leaves them
// empty with fewer than two devices. Matched sends and receives enter as
// pairs (docs/metrics.md section 7d).
void computeWaitTransfer(Analysis& a, const std::vector<DeviceIntervals>& intervalsOfDevice);

// The shift per process (indexed by DeviceAnalysis::processIndex, sized
// `processes`) that lines the ends of its matched collectives up with the
// reference process (lowest rank) in the lower median; 0 for the reference
// and for processes sharing no matched collective with it. All-to-all
// exchanges of grouped sends and receives do not count.
std::vector<TimeNs> collectiveClockShifts(const Analysis& a, size_t processes);

// Moves every time of the devices of process p by shifts[p] (steps,
// collectives, each device's intervals) and records it as clock_shift_ns.
void applyClockShifts(Analysis& a, const std::vector<TimeNs>& shifts,
                      std::vector<DeviceIntervals>& intervalsOfDevice);
// Moves every time of one device's analysis (and its intervals) by `by`.
void shiftDeviceTimes(DeviceAnalysis& d, TimeNs by, DeviceIntervals* intervals);

// For views of the capture itself (export, the GUI): moves each process of
// `capture` by its --align collectives shift; returns the shifts by process.
std::vector<TimeNs> alignOnCollectives(Capture& capture, const AnalysisSettings& settings);

}  // namespace osc
