// The partial result file (`overlapscope report --partial`, the agent's
// OVERLAPSCOPE_PARTIAL): JSON Lines, one JSON object per line.
//
//   {"format":"overlapscope-partial","version":1,"generator":..,"inputs":[..],"settings":{..}}
//   {"file":{"path":..,"origin_utc_ns":..,"processes":[{"rank","host","pid"}..],
//            "load_warnings":[..],"warnings":[{"process","message"}..],
//            "dropped_records":N,"devices":K[,"saved_nothing":true]}}
//   then for each of the file's K devices, two lines:
//   {"device":{"process","rank","host","pid","device","totals":[7 numbers],
//              "steps":{columns},"ops":{columns},"exposed_comm":[s,e,s,e,..],
//              "comm_ranks":[hash,rank,..],"p2p":{columns},"alltoall":{columns},
//              "microbatches":{columns},"compute":[s,e,s,e,..],"idle_gap_at":{columns},
//              "gpu":..,"bandwidth":{columns},"lead_ups":{columns}}}
//   {..the device exactly as the report JSON's "devices" element, on one line..}
//   ... more files ...
//   {"end":{"files":F,"devices":D}}
//
// The second line of each device is the report's own device object written
// before anything is known of other ranks: its cross-rank fields (4c waiting
// versus transfer, last arrivals) are null, its times on the file's own
// timeline. The merge moves every "start_ns"/"end_ns" inside it to the job's
// timeline and fills the cross-rank fields; all other fields pass through
// untouched, so fields added to the report's device object need no change
// here. The first line holds what the cross-rank part needs: each
// communication operation's collective, NCCL identity and times ("ops"),
// the device's exposed communication, step windows and totals; the
// communicators it is in, the sends and receives of its point-to-point
// operations ("p2p": per operation its communicator, rank and number of
// parts, then the parts' columns: direction, peer, bytes, sequence number),
// its all-to-all operations (step,
// duration, exposed time, bytes), and its micro-batches per step with, when
// it ran any, its compute intervals (docs/metrics.md 7d-7f); and where its
// idle-gap findings' messages name a time on the file's timeline, which the
// merge moves to the job's. For docs/design.md 4d: the GPU's model, per
// operation its bus bytes and factor, exposed time, step and whether it is
// an all-to-all ("bandwidth"), and per operation in a step its lead-up
// (start, compute, idle) with the names that filled it ("lead_ups": per
// operation its count of increments, then the increments' columns, then the
// names they index).
//
// Version 2 added the point-to-point, all-to-all and pipeline inputs and the
// pipeline settings; version 3 the sends' and receives' sequence numbers,
// which pair them (docs/metrics.md 7d); version 4 the bus bandwidth and
// straggler inputs (docs/design.md 4d); version 5 the GPU's UUID (ranks
// sharing one GPU). Older partials cannot serve these and are refused.
#pragma once

#include "analyzer/load/input_kind.h"
#include "analyzer/metrics/analysis.h"
#include "analyzer/partial/file_part.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace osc::partial {

inline constexpr int kPartialVersion = 5;
// Its first bytes (kPartialMagic) and the suffix `report --partial` users
// are told to use and the agent uses (kPartialSuffix; capture directories
// skip such files) are in analyzer/load/input_kind.h, where inputs are told
// apart.

struct PartialHeader {
    AnalysisSettings settings;
    std::vector<std::string> inputs;
    std::string generator;  // "overlapscope 0.1.0"
};

void writePartialHeader(std::ostream& out, const PartialHeader& header);
// The file's line and two lines per device. Returns the number of devices.
size_t writeFileSection(std::ostream& out, const FilePart& part);
void writePartialTrailer(std::ostream& out, size_t files, size_t devices);

// The analysis settings as the header stores them, and back. Partials merged
// together must agree on everything but "align" (a cross-rank choice).
std::string settingsLine(const AnalysisSettings& settings, bool withAlign);

}  // namespace osc::partial
