// The times a capture may hold. Every metric subtracts and compares
// timestamps; times near INT64's limits (a corrupt or hostile file) made
// those differences overflow: a negative window, "-0.00x", a crash in
// export. Readers' results are checked against one bound instead, so the
// arithmetic after loading cannot overflow: two times within +-2^62 ns
// (+-146 years) differ by less than 2^63.
#pragma once

#include "analyzer/capture/model.h"

#include <string>

namespace osc {

inline constexpr TimeNs kMaxAbsTimeNs = TimeNs{1} << 62;

inline bool timeInRange(TimeNs t) { return t > -kMaxAbsTimeNs && t < kMaxAbsTimeNs; }

// Throws CaptureError(path, "...") naming the first time (or session start)
// outside +-kMaxAbsTimeNs in `process`. Collective times of -1 mean unknown.
void checkTimeRange(const Process& process, const std::string& path);

// checkTimeRange for the processes a reader added, from `firstProcess` on.
void checkTimeRanges(const Capture& capture, size_t firstProcess, const std::string& path);

// The end of loading, once every file's processes are in and checked
// (checkTimeRanges): processes aligned on one timeline (wall-clock session
// starts), the times of those the alignment moved checked again (each time
// and session start in range can still land outside it when shifted),
// tables sorted and processes ordered (Capture::finalize). The loader and
// the agent's own partial end the same way.
void finishLoading(Capture& capture);

}  // namespace osc
