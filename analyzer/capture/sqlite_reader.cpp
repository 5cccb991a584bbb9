// readSqliteCapture(): the order of work for one file. The table readers
// live in sqlite_gpu_tables.cpp and sqlite_host_tables.cpp; what they share
// in sqlite_read_context.*.
#include "analyzer/capture/sqlite_reader.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/schema.h"
#include "analyzer/capture/sqlite_read_context.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <string>

namespace osc {
namespace {

using sqlread::ReadContext;

std::optional<int64_t> parseInt(const std::string& text) {
    int64_t v = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, v);
    if (ec != std::errc() || ptr != end) return std::nullopt;
    return v;
}

std::map<std::string, std::string> readNameValue(ReadContext& ctx, const std::string& table) {
    std::map<std::string, std::string> out;
    if (!ctx.hasColumn(table, "name") || !ctx.hasColumn(table, "value")) return out;
    sql::Statement st(ctx.db, "SELECT name, value FROM " + table);
    while (st.step()) out[std::string(st.text(0))] = std::string(st.text(1));
    return out;
}

void requireCapture(ReadContext& ctx) {
    for (const auto& t : ctx.tableNames())
        if (t.rfind("CUPTI_ACTIVITY_KIND_", 0) == 0) return;
    throw CaptureError(ctx.path,
                       "not a capture: it has no CUPTI_ACTIVITY_KIND_* table (expected "
                       "an overlapscope capture or an Nsight Systems SQLite export)");
}

void checkVersion(ReadContext& ctx, const std::map<std::string, std::string>& meta) {
    auto it = meta.find(std::string(schema::kFormatVersionKey));
    if (it == meta.end()) return;
    const auto version = parseInt(it->second);
    if (!version) throw CaptureError(ctx.path, "format version '" + it->second + "' is not a number");
    if (*version > schema::kFormatVersion)
        throw CaptureError(ctx.path, "format version " + it->second + " is newer than this overlapscope supports (" +
                                         std::to_string(schema::kFormatVersion) + ")");
}

int64_t sessionStart(ReadContext& ctx) {
    const std::string t = "TARGET_INFO_SESSION_START_TIME";
    if (!ctx.hasColumn(t, "utcEpochNs")) return 0;
    sql::Statement st(ctx.db, "SELECT utcEpochNs FROM " + t + " LIMIT 1");
    return st.step() ? st.int64(0) : 0;
}

std::string hostFromSystemEnv(ReadContext& ctx) {
    const std::string t = "TARGET_INFO_SYSTEM_ENV";
    if (!ctx.hasColumn(t, "name") || !ctx.hasColumn(t, "value")) return {};
    sql::Statement st(ctx.db, "SELECT value FROM " + t + " WHERE name = 'Hostname' LIMIT 1");
    return st.step() ? std::string(st.text(0)) : std::string();
}

void readProcesses(ReadContext& ctx) {
    const std::string t = "PROCESSES";
    if (!ctx.hasTable(t)) return;
    sql::Statement st(ctx.db, "SELECT " + ctx.column(t, "globalPid", "0") + ", " + ctx.column(t, "pid", "-1") + ", " +
                                  ctx.column(t, "name", "''") + " FROM " + t);
    while (st.step()) {
        auto& p = ctx.capture.processes[ctx.processIndex(static_cast<uint64_t>(st.int64(0)))];
        if (st.int64(1) >= 0) p.pid = st.int64(1);
        p.name = std::string(st.text(2));
    }
}

// TARGET_INFO_GPU, or TARGET_INFO_CUDA_GPU in exports from early 2021.
std::map<uint32_t, GpuInfo> readGpus(ReadContext& ctx) {
    std::map<uint32_t, GpuInfo> out;
    const std::string t = ctx.hasTable("TARGET_INFO_GPU") ? "TARGET_INFO_GPU" : "TARGET_INFO_CUDA_GPU";
    const std::string id = ctx.firstColumn(t, {"id", "deviceId", "cuDevice"});
    if (id.empty()) return out;
    auto pick = [&](std::initializer_list<const char*> names, const char* fallback) {
        const std::string c = ctx.firstColumn(t, names);
        return c.empty() ? std::string(fallback) : "coalesce(" + c + ", " + fallback + ")";
    };
    sql::Statement st(ctx.db, "SELECT " + id + ", " + pick({"name"}, "''") + ", " + pick({"busLocation"}, "''") + ", " +
                                  pick({"uuid"}, "''") + ", " + pick({"totalMemory"}, "0") + ", " +
                                  pick({"smCount", "numMultiprocessors", "multiProcessorCount"}, "0") + ", " +
                                  pick({"computeMajor", "computeCapabilityMajor"}, "0") + ", " +
                                  pick({"computeMinor", "computeCapabilityMinor"}, "0") + " FROM " + t);
    while (st.step()) {
        GpuInfo g;
        g.id = static_cast<uint32_t>(st.int64(0));
        g.name = std::string(st.text(1));
        g.busLocation = std::string(st.text(2));
        g.uuid = std::string(st.text(3));
        g.totalMemory = static_cast<uint64_t>(st.int64(4));
        g.smCount = static_cast<int>(st.int64(5));
        g.computeMajor = static_cast<int>(st.int64(6));
        g.computeMinor = static_cast<int>(st.int64(7));
        out[g.id] = std::move(g);
    }
    return out;
}

// nsys: MPI_RANKS(globalTid, rank), when the job ran under MPI.
std::map<size_t, int> readMpiRanks(ReadContext& ctx) {
    std::map<size_t, int> out;
    const std::string t = "MPI_RANKS";
    if (!ctx.hasColumn(t, "globalTid") || !ctx.hasColumn(t, "rank")) return out;
    sql::Statement st(ctx.db, "SELECT globalTid, rank FROM " + t);
    while (st.step()) out[ctx.processIndex(static_cast<uint64_t>(st.int64(0)))] = static_cast<int>(st.int64(1));
    return out;
}

void setInt(const std::map<std::string, std::string>& meta, std::string_view key, int& field) {
    auto it = meta.find(std::string(key));
    if (it == meta.end()) return;
    if (auto v = parseInt(it->second)) field = static_cast<int>(*v);
}

bool isEmpty(const Process& p) {
    return p.devices.empty() && p.apiCalls.size() == 0 && p.ranges.size() == 0 && p.collectives.size() == 0;
}

void readFile(ReadContext& ctx) {
    requireCapture(ctx);
    const bool ours = ctx.hasTable("OVERLAPSCOPE_META");
    const auto meta = readNameValue(ctx, "OVERLAPSCOPE_META");
    checkVersion(ctx, meta);
    // The writer commits its tables, then format_version in a second
    // transaction (analyzer/capture/capture_writer.cpp): our tables without it
    // are a capture whose process died, or whose disk filled, before anything
    // was saved. Without this it reads as a finished capture of 0 devices.
    // So does one without end_reason (the agent records none when its file
    // failed) whose processes hold no GPU activity: see the end of this function.
    const bool savedNoFormat = ours && meta.count(std::string(schema::kFormatVersionKey)) == 0;
    const bool unfinished = ours && meta.count(std::string(schema::meta::kEndReason)) == 0;
    const auto exportMeta = readNameValue(ctx, "META_DATA_EXPORT");
    const int64_t session = sessionStart(ctx);

    // Progress: each table's share of the bar is its share of the rows.
    // Counting rows through format 2's kernel view would join them all.
    const char* kernelTable = ctx.hasSplitKernels() ? "OVERLAPSCOPE_KERNEL" : "CUPTI_ACTIVITY_KIND_KERNEL";
    const char* tables[] = {"StringIds",
                            kernelTable,
                            "CUPTI_ACTIVITY_KIND_MEMCPY",
                            "CUPTI_ACTIVITY_KIND_MEMSET",
                            "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
                            "CUPTI_ACTIVITY_KIND_RUNTIME",
                            "NVTX_EVENTS"};
    const char* labels[] = {"strings", "kernels", "copies", "memsets", "synchronisations", "API calls", "NVTX ranges"};
    double counts[std::size(tables)] = {};
    double total = 1;
    for (size_t i = 0; i < std::size(tables); ++i) {
        // Without a progress callback the shares go nowhere: nothing is
        // counted here (a statement each; the table readers count what they
        // read, and StringIds and NVTX_EVENTS need no count at all), but a
        // view is still refused here, before any table is read.
        if (!ctx.options.progress) {
            ctx.hasTable(tables[i]);
            continue;
        }
        counts[i] = static_cast<double>(ctx.rowCount(tables[i]));
        total += counts[i];
    }
    double at = 0;
    auto next = [&](size_t i) {
        ctx.stage(labels[i], at / total, (at + counts[i]) / total);
        at += counts[i];
    };

    next(0);
    ctx.loadStrings();
    readProcesses(ctx);
    uint64_t kernelsInGraphs = 0;
    next(1);
    sqlread::readKernels(ctx, kernelsInGraphs);
    next(2);
    sqlread::readCopies(ctx);
    next(3);
    sqlread::readMemsets(ctx);
    next(4);
    sqlread::readSyncs(ctx);
    next(5);
    sqlread::readApiCalls(ctx);
    next(6);
    sqlread::readRanges(ctx);
    sqlread::readCollectives(ctx);
    sqlread::readStreamNames(ctx);
    sqlread::readThreadNames(ctx);
    if (!ours) sqlread::readNcclNvtxPayloads(ctx);

    if (ctx.rowCount("CUPTI_ACTIVITY_KIND_GRAPH_TRACE") > 0 && kernelsInGraphs == 0)
        ctx.capture.warnings.push_back(ctx.path +
                                       ": CUDA graphs were traced as whole graphs: their kernels (and NCCL "
                                       "kernels inside) are invisible; re-run nsys with --cuda-graph-trace=node");

    const auto gpus = readGpus(ctx);
    const auto mpiRanks = readMpiRanks(ctx);
    const std::string envHost = hostFromSystemEnv(ctx);
    // Our files list the GPUs the process used, so each becomes a device
    // even when idle; nsys lists every GPU in the machine, so it does not.
    if (ours)
        for (const auto& [id, info] : gpus) ctx.capture.processes[ctx.defaultProcess()].deviceById(id);

    auto& processes = ctx.capture.processes;
    for (size_t i = ctx.firstProcess; i < processes.size(); ++i) {
        auto& p = processes[i];
        p.sourcePath = ctx.path;
        p.sessionStartUtcNs = session;
        p.meta = meta;
        for (const auto& [k, v] : exportMeta) p.meta.emplace(k, v);
        p.host = envHost;
        if (auto it = meta.find(std::string(schema::meta::kHost)); it != meta.end()) p.host = it->second;
        if (auto it = meta.find(std::string(schema::meta::kPid)); it != meta.end())
            if (auto v = parseInt(it->second)) p.pid = *v;
        if (auto it = mpiRanks.find(i); it != mpiRanks.end()) p.rank = it->second;
        setInt(meta, schema::meta::kRank, p.rank);
        setInt(meta, schema::meta::kLocalRank, p.localRank);
        setInt(meta, schema::meta::kWorldSize, p.worldSize);
        for (auto& d : p.devices) {
            if (auto it = gpus.find(d.id); it != gpus.end()) d.gpu = it->second;
            d.gpu.id = d.id;
        }
    }
    // nsys also lists launcher processes (shells, wrappers) with no activity.
    if (!ours) {
        for (size_t i = ctx.firstProcess; i < processes.size(); ++i) processes[i].dropDevicesWithoutWork();
        size_t keep = ctx.firstProcess;
        for (size_t i = ctx.firstProcess; i < processes.size(); ++i)
            if (!isEmpty(processes[i])) {
                if (keep != i) processes[keep] = std::move(processes[i]);
                ++keep;
            }
        processes.erase(processes.begin() + static_cast<std::ptrdiff_t>(keep), processes.end());
    }
    const auto mine = processes.begin() + static_cast<std::ptrdiff_t>(ctx.firstProcess);
    if (savedNoFormat ||
        (unfinished && std::all_of(mine, processes.end(), [](const Process& p) { return p.devices.empty(); }))) {
        ctx.capture.warnings.push_back(savedNothingWarning(ctx.path));
        ctx.capture.savedNothing.push_back(ctx.path);
    }
}

}  // namespace

void readSqliteCapture(const std::string& path, const LoadOptions& options, Capture& capture) {
    const size_t before = capture.processes.size();
    try {
        ReadContext ctx(path, options, capture);
        readFile(ctx);
    } catch (...) {
        // A failed file adds nothing.
        capture.processes.erase(capture.processes.begin() + static_cast<std::ptrdiff_t>(before),
                                capture.processes.end());
        throw;
    }
}

}  // namespace osc
