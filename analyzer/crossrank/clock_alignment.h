// --align collectives (docs/design.md section 4c): hosts' clocks disagree by
// more than the skews a report looks for, but a collective ends at nearly
// the same moment on every rank. Each process is shifted so that the ends
// of its matched collectives line up with the reference process's (the
// lowest known rank, else the first) in the lower median.
#pragma once

#include "analyzer/capture/model.h"
#include "analyzer/crossrank/device_source.h"

#include <vector>

namespace osc::crossrank {

// Per job process, its shift; 0 for the reference and for processes that
// share no matched collective with it. `matchedKey[k]` marks the keys
// matched on two or more devices; all-to-all exchanges of grouped sends
// and receives do not count (they do not end together).
std::vector<TimeNs> collectiveClockShifts(const DeviceSource& source, const std::vector<char>& matchedKey);

// For views of the capture itself (export, the GUI's lanes): moves each
// process of `capture` by its shift; returns the shifts by process.
std::vector<TimeNs> alignOnCollectives(Capture& capture, const AnalysisSettings& settings);

}  // namespace osc::crossrank
