// The partial result file (`overlapscope report --partial`, the agent's
// OVERLAPSCOPE_PARTIAL): JSON Lines, one JSON object per line.
//
//   {"format":"overlapscope-partial","version":1,"generator":..,"inputs":[..],"settings":{..}}
//   {"file":{"path":..,"origin_utc_ns":..,"processes":[{"rank","host","pid"}..],
//            "load_warnings":[..],"warnings":[{"process","message"}..],
//            "dropped_records":N,"devices":K}}
//   then for each of the file's K devices, two lines:
//   {"device":{"process","rank","host","pid","device","totals":[7 numbers],
//              "steps":{columns},"ops":{columns},"exposed_comm":[s,e,s,e,..]}}
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
// the device's exposed communication, step windows and totals.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/partial/file_part.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace osc::partial {

inline constexpr const char* kPartialFormat = "overlapscope-partial";
inline constexpr int kPartialVersion = 1;
// What a partial file's first bytes are.
inline constexpr const char* kPartialMagic = "{\"format\":\"overlapscope-partial\"";
// The suffix `report --partial` users are told to use and the agent uses;
// capture directories skip such files.
inline constexpr const char* kPartialSuffix = ".partial.json";

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

// True when the file starts like a partial result (sniffed, never blocks).
bool looksLikePartial(const std::string& path);

}  // namespace osc::partial
