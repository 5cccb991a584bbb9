// A device's report object from a partial result, written again as the
// job's report holds it: the layout of writeDeviceJson (dump(2) at a given
// indent), every "start_ns"/"end_ns" moved to the job's timeline, and the
// fields only other ranks can decide (crossrank::DeviceCrossRank) filled in,
// as crossrank::applyCrossRank fills them in memory. Streamed token by token
// (nlohmann's SAX parser): memory does not grow with the device's size, and
// fields this code has never heard of pass through as they are.
#pragma once

#include "analyzer/crossrank/device_cross_rank.h"
#include "analyzer/metrics/analysis.h"

#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace osc::partial {

// Reads one device object from `in`; writes it to `out` starting at the
// opening brace, inner lines indented indent + 2. Throws CaptureError(origin, ...)
// when `in` is not one JSON object.
// `idleGapAt`: where the idle-gap findings' messages name a time on the
// file's timeline (window -1: the device's findings, else its step;
// PartDevice::idleGapAt), written moved by cross.messageShift.
void rewriteDeviceJson(std::istream& in, std::ostream& out, int indent, const crossrank::DeviceCrossRank& cross,
                       const std::vector<std::pair<int, TimeNs>>& idleGapAt, const std::string& origin);

}  // namespace osc::partial
