// The capture file's schema, defined once for the writer (agent, synth) and
// the reader. Table and column names follow the Nsight Systems SQLite export
// (docs/design.md section 2); our own additions are the OVERLAPSCOPE_* tables.
#pragma once

#include <string_view>

namespace osc::schema {

// Bumped when a reader of the previous version would misread a file.
// 2: kernels in OVERLAPSCOPE_KERNEL + OVERLAPSCOPE_KERNEL_LAUNCH, with
//    CUPTI_ACTIVITY_KIND_KERNEL a view over them (1: a table).
inline constexpr int kFormatVersion = 2;
inline constexpr std::string_view kFormatVersionKey = "format_version";

// CREATE TABLE (and VIEW) statements for everything our writer creates, in order.
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

// Rows of each ENUM_* table: (id, name, label), as in the nsys export.
struct EnumValue {
    int id;
    const char* name;
    const char* label;
};
struct EnumTable {
    const char* table;
    const EnumValue* values;
    int count;
};
extern const EnumTable kEnumTables[];
extern const int kEnumTableCount;

// OVERLAPSCOPE_META keys (format_version is kFormatVersionKey above). The
// writer sets format_version, tool_version and,
// at close(), capture_stop_utc_ns (unless already set) and end_reason; the
// agent sets the others. The reader maps host/pid/rank/local_rank/world_size
// onto Process fields and keeps every pair in Process::meta.
namespace meta {
inline constexpr std::string_view kToolVersion = "tool_version";
inline constexpr std::string_view kHost = "host";
inline constexpr std::string_view kPid = "pid";
inline constexpr std::string_view kRank = "rank";
inline constexpr std::string_view kLocalRank = "local_rank";
inline constexpr std::string_view kWorldSize = "world_size";
inline constexpr std::string_view kCommandLine = "command_line";
inline constexpr std::string_view kCaptureStartUtcNs = "capture_start_utc_ns";
inline constexpr std::string_view kCaptureStopUtcNs = "capture_stop_utc_ns";
inline constexpr std::string_view kCuptiVersion = "cupti_version";
inline constexpr std::string_view kDriverVersion = "driver_version";
inline constexpr std::string_view kDroppedRecords = "dropped_records";
inline constexpr std::string_view kEndReason = "end_reason";  // stopped, process_exit, signal
}  // namespace meta

}  // namespace osc::schema
