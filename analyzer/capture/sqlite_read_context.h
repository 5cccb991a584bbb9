// Internal to the SQLite reader: what one file's table readers share (the
// open database, which tables and columns exist, the StringIds remap, the
// processes found so far) and the per-table readers' entry points.
#pragma once

#include "analyzer/capture/id_index.h"
#include "analyzer/capture/load_options.h"
#include "analyzer/capture/model.h"
#include "analyzer/capture/sqlite_util.h"

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace osc::sqlread {

// SQLite VM steps a file may take before reading it is given up (0: by its
// size, see ReadContext's constructor). Tests lower it to show the bound is
// enforced without building a file that would really run forever.
inline uint64_t sqliteStepBudgetForTests = 0;

class ReadContext {
public:
    ReadContext(const std::string& path, const LoadOptions& options, Capture& capture);

    sql::Database db;
    const std::string path;
    const LoadOptions& options;
    Capture& capture;
    size_t firstProcess = 0;  // this file's processes are capture.processes[firstProcess..]

    // --- schema ---
    // Throws CaptureError when `table` is a view: a view runs whatever query
    // the file's author wrote (an endless recursive one hangs the reader).
    bool hasTable(const std::string& table) const;
    bool hasColumn(const std::string& table, const std::string& column);
    const std::set<std::string>& tableNames() const { return tables_; }
    // `coalesce("column", fallback)` when the column exists, else `fallback`:
    // absent columns and NULLs read the same, so nsys's schema drift needs no
    // special cases in the row loops.
    std::string column(const std::string& table, const std::string& name, const std::string& fallback);
    // `"column"` when it exists (NULL then reads as 0), else `fallback`.
    std::string rawColumn(const std::string& table, const std::string& name, const std::string& fallback);
    // The first of `names` the table has, quoted; empty when none.
    std::string firstColumn(const std::string& table, std::initializer_list<const char*> names);
    // At least the number of rows (exact when rowids are dense); remembered.
    int64_t rowCount(const std::string& table);
    // The file's size with its WAL: no table can hold more rows than bytes.
    int64_t fileBytes();
    // An IdIndex sized for the ids of `table` (which has an integer id column).
    template <typename T>
    IdIndex<T> idIndexFor(const std::string& table) {
        IdIndex<T> index;
        const IdSpan span = idSpan(table);
        index.prepare(span.min, span.max, span.rows);
        return index;
    }
    // Format 2 kernels: narrow OVERLAPSCOPE_KERNEL rows and the launches they
    // share (CUPTI_ACTIVITY_KIND_KERNEL is then a view over them).
    bool hasSplitKernels() const { return hasTable("OVERLAPSCOPE_KERNEL") && hasTable("OVERLAPSCOPE_KERNEL_LAUNCH"); }

    // --- strings ---
    void loadStrings();
    // File StringIds id → capture.strings id ("" for unknown ids).
    uint32_t name(int64_t fileId) const { return strings_.get(fileId); }
    const IdIndex<uint32_t>& stringIds() const { return strings_; }

    // --- processes ---
    // Index into capture.processes of the process with this globalPid or
    // globalTid (keyed by the bits above the tid), created when first seen.
    size_t processIndex(uint64_t globalPidOrTid);
    // The same without creating one: kNoProcess when none has these bits.
    static constexpr size_t kNoProcess = ~size_t{0};
    size_t existingProcess(uint64_t globalPidOrTid) const;
    // The file's first process, created from nothing when the file has none.
    size_t defaultProcess();

    // --- progress ---
    // Called between and inside tables: reports progress and throws
    // LoadCancelled when asked to stop.
    // A stage covers [from, to) of the file's progress bar.
    void stage(const char* label, double from, double to);
    void tick(int64_t done, int64_t total);

private:
    struct IdSpan {
        int64_t min = 0, max = -1, rows = 0;
    };
    IdSpan idSpan(const std::string& table);
    size_t addProcess(uint64_t key);

    std::set<std::string> tables_;  // type 'table' only
    std::set<std::string> views_;
    // SQLite VM steps this file may take (see the constructor) and taken so far.
    uint64_t stepBudget_ = 0, stepsTaken_ = 0;
    static int onProgress(void* self);
    std::map<std::string, std::set<std::string>> columns_;
    std::map<std::string, int64_t> counts_;
    int64_t fileBytes_ = -1;
    IdIndex<uint32_t> strings_;
    std::unordered_map<uint64_t, size_t> processByKey_;
    uint64_t lastKey_ = ~0ull;
    size_t lastIndex_ = 0;
    const char* stageLabel_ = "";
    double stageFrom_ = 0, stageTo_ = 0;
};

// Ids, grid sizes and colours are 32-bit in the model; SQLite hands out 64.
inline uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

// Table readers (sqlite_gpu_tables.cpp, sqlite_host_tables.cpp). Each reads
// one table if present and appends its rows to the file's processes.
void readKernels(ReadContext& ctx, uint64_t& kernelsInGraphs);
void readCopies(ReadContext& ctx);
void readMemsets(ReadContext& ctx);
void readSyncs(ReadContext& ctx);
void readApiCalls(ReadContext& ctx);
void readRanges(ReadContext& ctx);
void readCollectives(ReadContext& ctx);
void readStreamNames(ReadContext& ctx);
void readThreadNames(ReadContext& ctx);
// NCCL's NVTX ranges with payloads (Nsight Systems) as collective rows, for
// processes without plugin rows; after kernels, API calls and ranges
// (sqlite_nccl_nvtx.cpp).
void readNcclNvtxPayloads(ReadContext& ctx);

}  // namespace osc::sqlread
