// Writes processes of an in-memory capture as an Nsight Systems SQLite
// export would hold them: several processes in one file (nsys profiles a
// node's ranks together), globalPid/globalTid-encoded ids, names through
// StringIds, ranks in MPI_RANKS, the host in TARGET_INFO_SYSTEM_ENV, no
// OVERLAPSCOPE_* tables (so no NCCL plugin rows: collectives match by order).
// With `payloads`, the plugin rows of collectives become what NCCL itself
// writes instead: an ncclCommInitRank range per communicator and an
// ncclAllReduce (AllGather, ReduceScatter, Broadcast) range at each kernel's launch,
// with NCCL's NVTX payloads in the given layout (nccl_payload_writer.h).
// Kernels, copies, runtime calls and NVTX ranges are written; memsets and
// synchronisations are not.
// `mergeDevices` folds every second process into the one before it as a
// second GPU of the same process, the shape of a one-process-many-GPUs job.
#pragma once

#include "analyzer/capture/model.h"
#include "tests/analyzer/nccl_payload_writer.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace osc::test {

struct PayloadLayout {
    ncclpayload::Nccl nccl = ncclpayload::Nccl::V2_25;
    ncclpayload::Encoding encoding = ncclpayload::Encoding::HeaderedBlob;
};

class NsysShapedWriter {
public:
    explicit NsysShapedWriter(const std::string& path, std::optional<PayloadLayout> payloads = std::nullopt)
        : payloads_(payloads) {
        EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK);
        exec(R"(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.11.0');
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT, name TEXT, nameEnum INTEGER, value TEXT);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
CREATE TABLE MPI_RANKS (globalTid INTEGER, rank INTEGER);
CREATE TABLE TARGET_INFO_GPU (id INTEGER PRIMARY KEY, name TEXT, busLocation TEXT, totalMemory INTEGER,
  smCount INTEGER, computeMajor INTEGER, computeMinor INTEGER, uuid TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
  contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER,
  shortName INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER,
  blockZ INTEGER, registersPerThread INTEGER, staticSharedMemory INTEGER, dynamicSharedMemory INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER, contextId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER, copyKind INTEGER, srcKind INTEGER,
  dstKind INTEGER, srcDeviceId INTEGER, dstDeviceId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER, returnValue INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
  rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
  endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
BEGIN;
)");
        if (payloads_) {
            exec(
                "ALTER TABLE NVTX_EVENTS ADD COLUMN jsonText TEXT; ALTER TABLE NVTX_EVENTS ADD COLUMN binaryData "
                "BLOB;" +
                ncclpayload::schemaTablesSql() + ncclpayload::schemaRowsSql(payloads_->nccl) +
                "INSERT INTO NVTX_EVENTS (start, eventType, domainId, text) VALUES (0, 75, " +
                std::to_string(ncclpayload::kDomain) + ", 'NCCL');");
        }
    }
    ~NsysShapedWriter() {
        exec("COMMIT;");
        sqlite3_close(db_);
    }

    // `shift` is subtracted from every time (the file's session starts that
    // much after the capture's origin).
    void write(const Capture& c, const std::vector<size_t>& processes, bool mergeDevices, TimeNs shift) {
        exec("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (" + std::to_string(c.originUtcNs + shift) +
             ", 'x', 'y');");
        if (!processes.empty())
            exec("INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (0, 'x', 'Hostname', 2, '" +
                 c.processes[processes[0]].host + "');");
        for (size_t k = 0; k < processes.size(); ++k) {
            const Process& p = c.processes[processes[k]];
            // The process these rows belong to in the export.
            const bool folded = mergeDevices && k % 2 == 1;
            const Process& owner = folded ? c.processes[processes[k - 1]] : p;
            const uint64_t gpid = static_cast<uint64_t>(owner.pid) << 24;
            const uint32_t corrBase = folded ? 10'000'000u : 0u;
            if (!folded) {
                exec("INSERT INTO PROCESSES VALUES (" + std::to_string(gpid) + ", " + std::to_string(owner.pid) +
                     ", 'python');");
                if (p.rank >= 0)
                    exec("INSERT INTO MPI_RANKS VALUES (" + std::to_string(gpid | 1) + ", " + std::to_string(p.rank) +
                         ");");
            }
            for (const Device& d : p.devices) {
                if (!d.gpu.name.empty()) {
                    sqlite3_stmt* gpu = prepare("INSERT OR IGNORE INTO TARGET_INFO_GPU VALUES (?,?,'',0,0,0,0,'')");
                    bind(gpu, 1, d.id);
                    sqlite3_bind_text(gpu, 2, d.gpu.name.c_str(), -1, SQLITE_TRANSIENT);
                    step(gpu);
                    sqlite3_finalize(gpu);
                }
                const KernelTable& t = d.kernels;
                sqlite3_stmt* st =
                    prepare("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,1,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
                for (size_t i = 0; i < t.size(); ++i) {
                    int col = 1;
                    bind(st, col++, t.start[i] - shift);
                    bind(st, col++, t.end[i] - shift);
                    bind(st, col++, d.id);
                    bind(st, col++, t.stream[i]);
                    bind(st, col++, t.correlation[i] + corrBase);
                    bind(st, col++, static_cast<int64_t>(gpid));
                    bind(st, col++, stringId(c, t.name[i]));
                    bind(st, col++, stringId(c, t.shortName[i]));
                    for (const auto* v : {&t.gridX, &t.gridY, &t.gridZ, &t.blockX, &t.blockY, &t.blockZ,
                                          &t.registersPerThread, &t.staticSharedMemory, &t.dynamicSharedMemory})
                        bind(st, col++, (*v)[i]);
                    step(st);
                }
                sqlite3_finalize(st);
                const CopyTable& m = d.copies;
                sqlite3_stmt* cp = prepare("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?,?,?,1,?,?,?,?,?,?,?,?,?)");
                for (size_t i = 0; i < m.size(); ++i) {
                    int col = 1;
                    bind(cp, col++, m.start[i] - shift);
                    bind(cp, col++, m.end[i] - shift);
                    bind(cp, col++, d.id);
                    bind(cp, col++, m.stream[i]);
                    bind(cp, col++, m.correlation[i] + corrBase);
                    bind(cp, col++, static_cast<int64_t>(gpid));
                    bind(cp, col++, static_cast<int64_t>(m.bytes[i]));
                    bind(cp, col++, static_cast<int64_t>(m.copyKind[i]));
                    bind(cp, col++, static_cast<int64_t>(m.srcKind[i]));
                    bind(cp, col++, static_cast<int64_t>(m.dstKind[i]));
                    bind(cp, col++, m.srcDevice[i]);
                    bind(cp, col++, m.dstDevice[i]);
                    step(cp);
                }
                sqlite3_finalize(cp);
            }
            // Each original process keeps its own thread, so a folded
            // process's ranges and launches stay apart.
            const uint64_t tid = gpid | (folded ? 2 : 1);
            sqlite3_stmt* api = prepare("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,0)");
            for (size_t i = 0; i < p.apiCalls.size(); ++i) {
                bind(api, 1, p.apiCalls.start[i] - shift);
                bind(api, 2, p.apiCalls.end[i] - shift);
                bind(api, 3, static_cast<int64_t>(tid));
                bind(api, 4, p.apiCalls.correlation[i] + corrBase);
                bind(api, 5, stringId(c, p.apiCalls.name[i]));
                step(api);
            }
            sqlite3_finalize(api);
            sqlite3_stmt* nvtx = prepare(
                "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?,?,59,?,?,0)");
            for (size_t i = 0; i < p.ranges.size(); ++i) {
                bind(nvtx, 1, p.ranges.start[i] - shift);
                bind(nvtx, 2, p.ranges.end[i] - shift);
                const std::string_view text = c.strings.at(p.ranges.name[i]);
                sqlite3_bind_text(nvtx, 3, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
                bind(nvtx, 4, static_cast<int64_t>(tid));
                step(nvtx);
            }
            sqlite3_finalize(nvtx);
            if (payloads_) writeNcclRanges(c, p, tid, shift);
        }
    }

    // Rows beyond what write() puts there, for tests of single tables: a
    // StringIds row of its own (its id), a runtime call on any thread, and
    // a ThreadNames row (the table made on first use, so a file without
    // these calls has none, as exports without thread names).
    int64_t string(std::string_view text) {
        const auto id = static_cast<int64_t>(++nextId_);
        sqlite3_stmt* st = prepare("INSERT INTO StringIds VALUES (?, ?)");
        bind(st, 1, id);
        sqlite3_bind_text(st, 2, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
        step(st);
        sqlite3_finalize(st);
        return id;
    }
    void runtimeCall(uint64_t globalTid, TimeNs start, TimeNs end, uint32_t correlation, int64_t nameId) {
        sqlite3_stmt* st = prepare("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,0)");
        bind(st, 1, start);
        bind(st, 2, end);
        bind(st, 3, static_cast<int64_t>(globalTid));
        bind(st, 4, correlation);
        bind(st, 5, nameId);
        step(st);
        sqlite3_finalize(st);
    }
    void threadName(uint64_t globalTid, int64_t nameId, int64_t priority) {
        if (!threadNames_) {
            exec(
                "CREATE TABLE ThreadNames (nameId INTEGER NOT NULL REFERENCES StringIds(id), priority INTEGER, "
                "globalTid INTEGER);");
            threadNames_ = true;
        }
        sqlite3_stmt* st = prepare("INSERT INTO ThreadNames VALUES (?, ?, ?)");
        bind(st, 1, nameId);
        bind(st, 2, priority);
        bind(st, 3, static_cast<int64_t>(globalTid));
        step(st);
        sqlite3_finalize(st);
    }

private:
    // NCCL's ranges for `p`'s collective plugin rows, each at the launch of
    // the NCCL kernel that started when the row did (its GPU start).
    void writeNcclRanges(const Capture& c, const Process& p, uint64_t tid, TimeNs shift) {
        using namespace ncclpayload;
        const bool named = payloads_->nccl == Nccl::V2_25;
        const CollectiveTable& t = p.collectives;
        std::set<uint64_t> created;
        for (size_t r = 0; r < t.size(); ++r) {
            const std::string_view func = c.strings.at(t.func[r]);
            const uint64_t sid = func == "AllGather"       ? 4
                                 : func == "AllReduce"     ? 5
                                 : func == "Broadcast"     ? 6
                                 : func == "ReduceScatter" ? 7
                                                           : 0;
            if (sid == 0 || t.commHash[r] == 0) continue;
            std::optional<TimeNs> at;
            const Device* d = p.findDevice(t.device[r]);
            for (size_t k = 0; d && k < d->kernels.size() && !at; ++k)
                if (d->kernels.start[k] == t.gpuStart[r])
                    for (size_t a = 0; a < p.apiCalls.size() && !at; ++a)
                        if (p.apiCalls.correlation[a] == d->kernels.correlation[k]) at = p.apiCalls.start[a] - shift;
            if (!at) {
                ADD_FAILURE() << "no launch for the " << func << " row " << r;
                continue;
            }
            const auto range = [&](const char* name, TimeNs when, uint64_t schema, std::vector<uint64_t> fields) {
                const Literals l = payloadLiterals(payloads_->nccl, payloads_->encoding, schema, fields);
                exec(
                    "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId, jsonText, "
                    "binaryData) VALUES (" +
                    std::to_string(when) + ", " + std::to_string(when) + ", 59, '" + name + "', " +
                    std::to_string(tid) + ", " + std::to_string(kDomain) + ", " + l.json + ", " + l.binary + ");");
            };
            const auto rank = static_cast<uint64_t>(t.rank[r]), nranks = static_cast<uint64_t>(t.nranks[r]);
            const uint64_t dev = t.device[r];
            if (created.insert(t.commHash[r]).second) {
                if (named)
                    range("ncclCommInitRankConfig", *at - 1, 11, {t.commHash[r], nranks, rank, dev});
                else
                    range("ncclCommInitRank", *at - 1, 0, {rank, nranks, dev});
            }
            std::vector<uint64_t> fields;
            if (named) fields.push_back(t.commHash[r]);
            fields.push_back(t.bytes[r]);
            // A broadcast's root; a reduction's operation, ncclSum.
            if (schemaOf(payloads_->nccl, sid).entries.size() > fields.size())
                fields.push_back(sid == 6 ? static_cast<uint64_t>(static_cast<int64_t>(t.root[r])) : 0);
            range(("nccl" + std::string(func)).c_str(), *at, sid, fields);
        }
    }

    int64_t stringId(const Capture& c, uint32_t id) {
        if (id >= ids_.size()) ids_.resize(id + 1, -1);
        if (ids_[id] < 0) {
            ids_[id] = static_cast<int64_t>(++nextId_);
            sqlite3_stmt* st = prepare("INSERT INTO StringIds VALUES (?, ?)");
            bind(st, 1, ids_[id]);
            const std::string_view text = c.strings.at(id);
            sqlite3_bind_text(st, 2, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
            step(st);
            sqlite3_finalize(st);
        }
        return ids_[id];
    }
    void exec(const std::string& sql) {
        char* error = nullptr;
        EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
        sqlite3_free(error);
    }
    sqlite3_stmt* prepare(const char* sql) {
        sqlite3_stmt* st = nullptr;
        EXPECT_EQ(sqlite3_prepare_v2(db_, sql, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db_);
        return st;
    }
    static void bind(sqlite3_stmt* st, int col, int64_t v) { sqlite3_bind_int64(st, col, v); }
    void step(sqlite3_stmt* st) {
        EXPECT_EQ(sqlite3_step(st), SQLITE_DONE) << sqlite3_errmsg(db_);
        sqlite3_reset(st);
    }

    std::optional<PayloadLayout> payloads_;
    sqlite3* db_ = nullptr;
    std::vector<int64_t> ids_;
    size_t nextId_ = 0;
    bool threadNames_ = false;
};

}  // namespace osc::test
