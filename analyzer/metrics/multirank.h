// The same collective on every rank: matching, skew and the spread of step
// time and overlap across devices (DESIGN.md section 4, "Multi-rank").
#pragma once

#include "analyzer/metrics/analysis.h"

#include <optional>

namespace osc {

// Fills Analysis::matched and total_skew_ns. Operations carrying a plugin
// (commHash, seqNumber) are matched on (commHash, collective, seqNumber);
// the others on (collective, k) where k counts that collective type on its
// device in start order. A group needs operations on at least two devices.
// SendRecv kernels are left to matchPointToPoint (p2p.h): they pair by peer.
void matchAcrossDevices(Analysis& analysis);

// Min / median / max over devices of mean step time and step overlap ratio,
// over the step names every device has; nullopt with fewer than two devices.
std::optional<RankSpread> rankSpread(const Analysis& analysis);

}  // namespace osc
