// The capture file's schema, defined once for the writer (agent, synth) and
// the reader. Table and column names follow the Nsight Systems SQLite export
// (DESIGN.md section 2); our own additions are the OVERLAPSCOPE_* tables.
#pragma once

#include <string_view>

namespace osc::schema {

// Bumped when a reader of the previous version would misread a file.
inline constexpr int kFormatVersion = 1;
inline constexpr std::string_view kFormatVersionKey = "format_version";

// CREATE TABLE statements for every table our writer creates, in order.
// Defined in schema.cpp.
extern const char* const kCreateTables[];
extern const int kCreateTableCount;
// Indexes created when a capture is closed.
extern const char* const kCreateIndexes[];
extern const int kCreateIndexCount;

// globalPid / globalTid packing used by Nsight Systems: pid in bits 24..47,
// tid in bits 0..23.
constexpr unsigned long long packGlobalPid(long long pid) {
    return (static_cast<unsigned long long>(pid) & 0xFFFFFFull) << 24;
}
constexpr unsigned long long packGlobalTid(long long pid, long long tid) {
    return packGlobalPid(pid) | (static_cast<unsigned long long>(tid) & 0xFFFFFFull);
}
constexpr long long pidOf(unsigned long long global) { return (global >> 24) & 0xFFFFFF; }
constexpr long long tidOf(unsigned long long global) { return global & 0xFFFFFF; }

// NVTX_EVENTS.eventType codes (ENUM_NSYS_EVENT_TYPE).
inline constexpr int kNvtxMark = 34;
inline constexpr int kNvtxPushPop = 59;
inline constexpr int kNvtxStartEnd = 60;
inline constexpr int kNvtxDomainCreate = 75;
// CUPTI_ACTIVITY_KIND_RUNTIME.eventClass for runtime and driver calls.
inline constexpr int kEventClassRuntime = 0;
inline constexpr int kEventClassDriver = 1;

}  // namespace osc::schema
