// The same collective on every rank: matching, skew and the spread of step
// time and overlap across devices (DESIGN.md section 4, "Multi-rank").
#pragma once

#include "analyzer/metrics/analysis.h"

#include <optional>
#include <string_view>
#include <vector>

namespace osc {

// Fills Analysis::matched and total_skew_ns. Operations carrying a plugin
// (commHash, seqNumber) are matched on (commHash, collective, seqNumber);
// the others on (collective, k) where k counts that collective type on its
// device in start order. A group needs operations on at least two devices.
// SendRecv kernels are left to matchPointToPoint (p2p.h): they pair by peer.
void matchAcrossDevices(Analysis& analysis);

// Appends a group whose instances are set (two or more devices) to
// Analysis::matched, with its skew (latest start - earliest start) and
// transfer (earliest end - latest start, at least 0), and adds the skew to
// total_skew_ns. matchPointToPoint (p2p.h) appends its exchanges the same way.
void appendMatched(Analysis& analysis, MatchedCollective group);
// Orders Analysis::matched by each group's earliest start, ties kept in order.
void sortMatchedByFirstStart(Analysis& analysis);

// Min / median / max over devices of mean step time and step overlap ratio,
// over the step names every device has; nullopt with fewer than two devices.
std::optional<RankSpread> rankSpread(const Analysis& analysis);

// One device's steps as rankSpread needs them, so that a merge of partial
// reports (analyzer/partial) computes the spread by the same rule. The names
// are views into the caller's steps.
struct SpreadStep {
    std::string_view name;
    TimeNs window_ns = 0, overlap_ns = 0, comm_ns = 0;
};
struct SpreadDevice {
    std::vector<SpreadStep> steps;
    TimeNs overlap_ns = 0, comm_ns = 0;  // the whole capture's, for devices without common steps
};
std::optional<RankSpread> rankSpread(const std::vector<SpreadDevice>& devices);

}  // namespace osc
