#include "analyzer/capture/capture_writer.h"

#include "analyzer/capture/batch_insert.h"
#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/new_capture_file.h"
#include "analyzer/capture/schema.h"
#include "analyzer/capture/sqlite_util.h"
#include "analyzer/capture/text_map.h"
#include "analyzer/capture/wal_checkpointer.h"

#include <fcntl.h>
#include <unistd.h>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <set>
#include <unordered_map>

#ifndef OSC_VERSION
#define OSC_VERSION "unknown"
#endif

namespace osc {
namespace {

using StringIdMap = TextMap<uint32_t>;

// What a kernel row shares with other launches of the same kernel in the
// same way (OVERLAPSCOPE_KERNEL_LAUNCH). No padding: compared and hashed as bytes.
struct LaunchKey {
    uint32_t contextId, streamId, name, shortName;
    uint32_t gridX, gridY, gridZ, blockX, blockY, blockZ;
    uint32_t registersPerThread, staticSharedMemory, dynamicSharedMemory, graphId;
    uint64_t globalPid, graphNodeId;
    bool operator==(const LaunchKey& o) const { return std::memcmp(this, &o, sizeof o) == 0; }
};
static_assert(sizeof(LaunchKey) == 14 * 4 + 2 * 8, "LaunchKey must have no padding");

struct LaunchKeyHash {
    size_t operator()(const LaunchKey& k) const {
        uint64_t words[sizeof(LaunchKey) / 8];
        std::memcpy(words, &k, sizeof words);
        uint64_t h = 0x9E3779B97F4A7C15ull;
        for (uint64_t w : words) {
            h ^= w;
            h *= 0xBF58476D1CE4E5B9ull;
            h ^= h >> 31;
        }
        return static_cast<size_t>(h);
    }
};

int64_t asInt(uint64_t v) { return static_cast<int64_t>(v); }  // two's complement, by design

// CUPTI's "not applicable" id is stored as NULL.
void bindId(sql::Statement& s, int index, uint32_t id) {
    if (id == kNoId)
        s.bindNull(index);
    else
        s.bind(index, id);
}
void setId(sql::BatchInsert& b, int64_t* v, int column, uint32_t id) {
    if (id == kNoId)
        b.setNull(column);
    else
        v[column] = id;
}
void bindTime(sql::Statement& s, int index, TimeNs t) {
    if (t < 0)
        s.bindNull(index);
    else
        s.bind(index, t);
}
void bindTextOrNull(sql::Statement& s, int index, std::string_view text) {
    if (text.empty())
        s.bindNull(index);
    else
        s.bindText(index, text);
}

const char* namedObjectName(NamedObject kind) {
    switch (kind) {
        case NamedObject::Process:
            return "process";
        case NamedObject::Device:
            return "device";
        case NamedObject::Context:
            return "context";
    }
    return "device";
}

const char* endReasonName(CaptureEnd how) {
    switch (how) {
        case CaptureEnd::Stopped:
            return "stopped";
        case CaptureEnd::ProcessExit:
            return "process_exit";
        case CaptureEnd::Signal:
            return "signal";
        case CaptureEnd::WriteFailed:
            return nullptr;
    }
    return "stopped";
}

}  // namespace

struct CaptureWriter::Statements {
    sql::Database db;  // first: destroyed after the statements that use it
    sql::Statement begin, commit, domain, collective, string, meta, gpu, process, streamName;
    sql::Statement threadNameForget, threadName, objectName;
    sql::BatchInsert kernelLaunch, kernel, copy, memset, sync, api, range, cudaEvent;
    // Launch configurations seen so far, to their OVERLAPSCOPE_KERNEL_LAUNCH
    // id. Bounded: a job whose every launch differs (grids that follow the
    // input shape) would otherwise grow it without end; past the bound it
    // starts over, and a configuration seen again just gets a second row.
    static constexpr size_t kMaxLaunchesRemembered = size_t{1} << 16;
    std::unordered_map<LaunchKey, uint32_t, LaunchKeyHash> launches;
    uint32_t nextLaunchId = 0;
    std::unique_ptr<sql::WalCheckpointer> checkpointer;  // declared after db: stopped first
    StringIdMap strings;
    StringIdMap domains;
    std::set<std::string, std::less<>> metaSet;
    uint32_t nextDomainId = 1;  // 0 is NVTX's default domain
    // Callers pass the same few kernel names over and over, usually from the
    // same buffers: a few recent strings, found by the text's address and
    // confirmed by comparing the text itself (so a reused buffer is never a
    // false hit), save hashing long demangled names twice per kernel.
    struct Recent {
        const char* data = nullptr;
        std::string text;
        uint32_t id = 0;
    };
    std::array<Recent, 8> recent;
    size_t nextRecent = 0;

    explicit Statements(sql::Database database) : db(std::move(database)) {}

    void prepare() {
        auto p = [&](const char* text) { return sql::Statement(db, text); };
        begin = p("BEGIN");
        commit = p("COMMIT");
        kernelLaunch = sql::BatchInsert(db, "OVERLAPSCOPE_KERNEL_LAUNCH", "", 17);
        kernel = sql::BatchInsert(db, "OVERLAPSCOPE_KERNEL", "", 5);
        copy = sql::BatchInsert(db, "CUPTI_ACTIVITY_KIND_MEMCPY", "", 13);
        memset = sql::BatchInsert(db, "CUPTI_ACTIVITY_KIND_MEMSET", "", 9);
        sync = sql::BatchInsert(db, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "", 9);
        api = sql::BatchInsert(db, "CUPTI_ACTIVITY_KIND_RUNTIME", "", 7);
        range = sql::BatchInsert(db, "NVTX_EVENTS",
                                 "(start, end, eventType, category, color, textId, globalTid, "
                                 "endGlobalTid, domainId, overlapscopeOnGpu)",
                                 10);
        domain =
            p("INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) "
              "VALUES (?,?,?,?,?)");
        collective =
            p("INSERT INTO OVERLAPSCOPE_NCCL_COLL VALUES "
              "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
        string = p("INSERT INTO StringIds VALUES (?,?)");
        meta = p("INSERT OR REPLACE INTO OVERLAPSCOPE_META VALUES (?,?)");
        gpu = p("INSERT OR REPLACE INTO TARGET_INFO_GPU VALUES (?,?,?,?,?,?,?,?)");
        process = p("INSERT INTO PROCESSES VALUES (?,?,?)");
        streamName = p("INSERT INTO OVERLAPSCOPE_STREAM_NAME VALUES (?,?,?,?)");
        cudaEvent = sql::BatchInsert(db, "OVERLAPSCOPE_CUDA_EVENT", "", 8);
        threadNameForget = p("DELETE FROM ThreadNames WHERE globalTid = ?");
        threadName = p("INSERT INTO ThreadNames VALUES (?,?,?)");
        objectName = p("INSERT INTO OVERLAPSCOPE_OBJECT_NAME VALUES (?,?,?,?,?)");
    }

    void flush() {
        for (auto* b : {&kernelLaunch, &kernel, &copy, &memset, &sync, &api, &range, &cudaEvent}) b->flush();
    }
};

std::unique_ptr<CaptureWriter> CaptureWriter::create(const std::string& path, int64_t sessionStartUtcNs,
                                                     const CaptureWriterOptions& options) {
    NewCaptureFile file(path, options.overwrite);
    std::unique_ptr<CaptureWriter> w(new CaptureWriter());
    w->path_ = path;
    w->st_ = std::make_unique<Statements>(
        sql::Database(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
                      file.sqlitePath()));
    auto& db = w->st_->db;
    sqlite3_busy_timeout(db.get(), 5000);  // a viewer reading the live file may hold a lock briefly
    // The largest pages: fewer b-tree pages, page splits and WAL frame
    // headers per row for the append-only tables (measured: 16 KiB -> 64 KiB
    // pages took a 20-column kernel insert from 1.77 to 2.06 M rows/CPU-s).
    db.exec("PRAGMA page_size=65536");
    // WAL + NORMAL: a commit is durable against a killed process (not against
    // power loss), and readers can open the file while we write.
    db.exec("PRAGMA journal_mode=WAL");
    db.exec("PRAGMA synchronous=NORMAL");
    db.exec("PRAGMA cache_size=-32768");
    db.exec("PRAGMA wal_autocheckpoint=4096");
    db.exec("BEGIN");
    for (int i = 0; i < schema::kCreateTableCount; ++i) db.exec(schema::kCreateTables[i]);
    {
        for (int t = 0; t < schema::kEnumTableCount; ++t) {
            const auto& e = schema::kEnumTables[t];
            sql::Statement insert(db, std::string("INSERT INTO ") + e.table + " VALUES (?,?,?)");
            for (int v = 0; v < e.count; ++v) {
                insert.bind(1, e.values[v].id);
                insert.bindText(2, e.values[v].name);
                insert.bindText(3, e.values[v].label);
                insert.run();
            }
        }
        sql::Statement session(db, "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?)");
        session.bind(1, sessionStartUtcNs);
        session.run();
        sql::Statement exportMeta(db, "INSERT INTO META_DATA_EXPORT VALUES (?,?)");
        exportMeta.bindText(1, "EXPORT_PRODUCER");
        exportMeta.bindText(2, "overlapscope " OSC_VERSION);
        exportMeta.run();
    }
    db.exec("COMMIT");
    w->st_->prepare();
    if (options.backgroundCheckpoint)
        w->st_->checkpointer =
            std::make_unique<sql::WalCheckpointer>(db.get(), file.sqlitePath(), options.walLimitBytes);
    w->st_->begin.run();
    w->setMeta(schema::kFormatVersionKey, std::to_string(schema::kFormatVersion));
    w->setMeta(schema::meta::kToolVersion, OSC_VERSION);
    w->commit();  // the file is a valid, empty capture from here on
    file.keep();
    return w;
}

CaptureWriter::~CaptureWriter() {
    try {
        close(CaptureEnd::Stopped);
    } catch (...) {
        // A destructor must not throw; callers who care call close() themselves.
    }
}

void CaptureWriter::setMeta(std::string_view name, std::string_view value) {
    auto& s = st_->meta;
    s.bindText(1, name);
    s.bindText(2, value);
    s.run();
    st_->metaSet.emplace(name);
}

void CaptureWriter::addGpu(const GpuInfo& gpu) {
    auto& s = st_->gpu;
    s.bind(1, gpu.id);
    s.bindText(2, gpu.name);
    s.bindText(3, gpu.busLocation);
    s.bindText(4, gpu.uuid);
    s.bind(5, asInt(gpu.totalMemory));
    s.bind(6, gpu.smCount);
    s.bind(7, gpu.computeMajor);
    s.bind(8, gpu.computeMinor);
    s.run();
}

void CaptureWriter::addProcess(const ProcessRow& process) {
    auto& s = st_->process;
    s.bind(1, asInt(process.globalPid));
    s.bind(2, process.pid);
    s.bindText(3, process.name);
    s.run();
}

uint32_t CaptureWriter::internString(std::string_view text) {
    auto& st = *st_;
    for (const auto& r : st.recent)
        if (r.data == text.data() && std::string_view(r.text) == text) return r.id;
    auto& map = st.strings;
    if (auto it = map.find(text); it != map.end()) {
        auto& r = st.recent[st.nextRecent++ % st.recent.size()];
        r.data = text.data();
        r.text.assign(text);
        r.id = it->second;
        return it->second;
    }
    const auto id = static_cast<uint32_t>(map.size());
    auto& s = st_->string;
    s.bind(1, id);
    s.bindText(2, text);
    s.run();
    map.emplace(text, id);
    return id;
}

void CaptureWriter::addKernel(const KernelRow& r) {
    const LaunchKey key{r.contextId,
                        r.streamId,
                        r.demangledNameId != kNoId ? r.demangledNameId : internString(r.demangledName),
                        r.shortNameId != kNoId ? r.shortNameId : internString(r.shortName),
                        r.gridX,
                        r.gridY,
                        r.gridZ,
                        r.blockX,
                        r.blockY,
                        r.blockZ,
                        r.registersPerThread,
                        r.staticSharedMemory,
                        r.dynamicSharedMemory,
                        r.graphId,
                        r.globalPid,
                        r.graphNodeId};
    auto& st = *st_;
    if (st.launches.size() >= Statements::kMaxLaunchesRemembered) st.launches.clear();
    auto [it, isNew] = st.launches.try_emplace(key, st.nextLaunchId);
    if (isNew) {
        // Flushed with the kernel rows that refer to it, in the same
        // transaction: the view never loses a committed kernel.
        ++st.nextLaunchId;
        auto& launch = st.kernelLaunch;
        int64_t* v = launch.next();
        v[0] = it->second;
        v[1] = key.contextId;
        v[2] = key.streamId;
        v[3] = asInt(key.globalPid);
        v[4] = key.name;
        v[5] = key.shortName;
        v[6] = key.gridX;
        v[7] = key.gridY;
        v[8] = key.gridZ;
        v[9] = key.blockX;
        v[10] = key.blockY;
        v[11] = key.blockZ;
        v[12] = key.registersPerThread;
        v[13] = key.staticSharedMemory;
        v[14] = key.dynamicSharedMemory;
        v[15] = key.graphId;
        v[16] = asInt(key.graphNodeId);
        launch.push();
    }
    auto& b = st.kernel;
    int64_t* v = b.next();
    v[0] = r.start;
    v[1] = r.end;
    v[2] = r.deviceId;
    v[3] = r.correlationId;
    v[4] = it->second;
    b.push();
    ++rows_;
}

void CaptureWriter::addCopy(const CopyRow& r) {
    auto& b = st_->copy;
    int64_t* v = b.next();
    v[0] = r.start;
    v[1] = r.end;
    v[2] = r.deviceId;
    v[3] = r.contextId;
    v[4] = r.streamId;
    v[5] = r.correlationId;
    v[6] = asInt(r.globalPid);
    v[7] = asInt(r.bytes);
    v[8] = static_cast<int>(r.copyKind);
    v[9] = static_cast<int>(r.srcKind);
    v[10] = static_cast<int>(r.dstKind);
    setId(b, v, 11, r.srcDeviceId);
    setId(b, v, 12, r.dstDeviceId);
    b.push();
    ++rows_;
}

void CaptureWriter::addMemset(const MemsetRow& r) {
    auto& b = st_->memset;
    int64_t* v = b.next();
    v[0] = r.start;
    v[1] = r.end;
    v[2] = r.deviceId;
    v[3] = r.contextId;
    v[4] = r.streamId;
    v[5] = r.correlationId;
    v[6] = asInt(r.globalPid);
    v[7] = r.value;
    v[8] = asInt(r.bytes);
    b.push();
    ++rows_;
}

void CaptureWriter::addSync(const SyncRow& r) {
    auto& b = st_->sync;
    int64_t* v = b.next();
    v[0] = r.start;
    v[1] = r.end;
    v[2] = r.deviceId;
    v[3] = r.contextId;
    setId(b, v, 4, r.streamId);
    v[5] = r.correlationId;
    v[6] = asInt(r.globalPid);
    v[7] = static_cast<int>(r.syncType);
    setId(b, v, 8, r.eventId);
    b.push();
    ++rows_;
}

void CaptureWriter::addApiCall(const ApiCallRow& r) {
    const uint32_t name = r.nameId != kNoId ? r.nameId : internString(r.name);
    auto& b = st_->api;
    int64_t* v = b.next();
    v[0] = r.start;
    v[1] = r.end;
    v[2] = r.kind == ApiKind::Driver ? schema::kEventClassDriver : schema::kEventClassRuntime;
    v[3] = asInt(r.globalTid);
    v[4] = r.correlationId;
    v[5] = name;
    v[6] = r.returnValue;
    b.push();
    ++rows_;
}

void CaptureWriter::addRange(const RangeRow& r) {
    uint32_t domainId = 0;
    if (!r.domain.empty()) {
        auto& domains = st_->domains;
        if (auto it = domains.find(r.domain); it != domains.end()) {
            domainId = it->second;
        } else {
            // nsys's shape: a DomainCreate row whose text is the domain's name.
            domainId = st_->nextDomainId++;
            domains.emplace(r.domain, domainId);
            auto& s = st_->domain;
            s.bind(1, r.start);
            s.bind(2, schema::kNvtxDomainCreate);
            s.bindText(3, r.domain);
            s.bind(4, asInt(r.globalTid));
            s.bind(5, domainId);
            s.run();
        }
    }
    const uint32_t textId = r.textId != kNoId ? r.textId : internString(r.text);
    const bool mark = r.kind == RangeKind::Mark;
    auto& b = st_->range;
    int64_t* v = b.next();
    v[0] = r.start;
    if (mark)
        b.setNull(1);
    else
        v[1] = r.end;
    v[2] = mark ? schema::kNvtxMark : r.kind == RangeKind::StartEnd ? schema::kNvtxStartEnd : schema::kNvtxPushPop;
    v[3] = r.category;
    v[4] = r.color;
    v[5] = textId;  // registered-string style: the name lives in StringIds
    v[6] = asInt(r.globalTid);
    v[7] = asInt(r.endGlobalTid);
    v[8] = domainId;
    if (r.onGpu)
        v[9] = 1;
    else
        b.setNull(9);
    b.push();
    ++rows_;
}

void CaptureWriter::addCollective(const CollectiveRow& r) {
    auto& s = st_->collective;
    s.bindNull(1);  // globalPid: one process per capture file; readers use PROCESSES
    bindId(s, 2, r.deviceId);
    s.bind(3, asInt(r.commHash));
    s.bind(4, r.rank);
    s.bind(5, r.nranks);
    s.bind(6, asInt(r.seqNumber));
    bindTextOrNull(s, 7, r.func);
    s.bind(8, asInt(r.count));
    bindTextOrNull(s, 9, r.datatype);
    s.bind(10, asInt(r.bytes));
    s.bind(11, r.root);
    bindTextOrNull(s, 12, r.algo);
    bindTextOrNull(s, 13, r.proto);
    s.bind(14, r.nChannels);
    bindTime(s, 15, r.enqueue);
    bindTime(s, 16, r.gpuStart);
    bindTime(s, 17, r.gpuEnd);
    s.run();
    ++rows_;
}

void CaptureWriter::addStreamName(uint64_t globalPid, uint32_t deviceId, uint32_t streamId, std::string_view name) {
    auto& s = st_->streamName;
    s.bind(1, asInt(globalPid));
    s.bind(2, deviceId);
    s.bind(3, streamId);
    s.bindText(4, name);
    s.run();
}

void CaptureWriter::addCudaEvent(const CudaEventRow& r) {
    auto& b = st_->cudaEvent;
    int64_t* v = b.next();
    if (r.deviceTimestamp)
        v[0] = *r.deviceTimestamp;
    else
        b.setNull(0);
    setId(b, v, 1, r.deviceId);
    v[2] = r.contextId;
    setId(b, v, 3, r.streamId);
    v[4] = r.correlationId;
    v[5] = asInt(r.globalPid);
    v[6] = r.eventId;
    if (r.cudaEventSyncId)
        v[7] = asInt(*r.cudaEventSyncId);
    else
        b.setNull(7);
    b.push();
    ++rows_;
}

void CaptureWriter::addThreadName(uint64_t globalTid, std::string_view name) {
    const uint32_t nameId = internString(name);
    auto& forget = st_->threadNameForget;
    forget.bind(1, asInt(globalTid));
    forget.run();
    auto& s = st_->threadName;
    s.bind(1, nameId);
    // nsys ranks names from several sources by priority; ours all come from
    // NVTX, so there is nothing to rank.
    s.bind(2, 0);
    s.bind(3, asInt(globalTid));
    s.run();
}

void CaptureWriter::addObjectName(const ObjectNameRow& r) {
    auto& s = st_->objectName;
    s.bind(1, asInt(r.globalPid));
    s.bindText(2, namedObjectName(r.kind));
    bindId(s, 3, r.deviceId);
    bindId(s, 4, r.contextId);
    s.bindText(5, r.name);
    s.run();
}

void CaptureWriter::commit() {
    st_->flush();
    st_->commit.run();
    if (st_->checkpointer) st_->checkpointer->afterCommit();
    st_->begin.run();
}

void CaptureWriter::close(CaptureEnd how, bool buildIndexes) {
    if (closed_ || !st_) return;
    closed_ = true;
    if (const char* reason = endReasonName(how)) setMeta(schema::meta::kEndReason, reason);
    if (!st_->metaSet.count(schema::meta::kCaptureStopUtcNs)) {
        const auto now =
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
                .count();
        setMeta(schema::meta::kCaptureStopUtcNs, std::to_string(now));
    }
    st_->flush();
    st_->commit.run();
    if (st_->checkpointer) st_->checkpointer->stop();
    auto& db = st_->db;
    // Index builds are sorts: let SQLite's sorter use a helper thread and
    // more memory for them (the capture is over; the writer's budget is not).
    // Still in WAL mode, so a process killed while the indexes are built
    // leaves a file any reader opens (a rollback journal would leave a hot
    // journal that a read-only reader cannot roll back).
    if (buildIndexes) {
        db.exec("PRAGMA threads=2");
        db.exec("PRAGMA cache_size=-262144");
        db.exec("BEGIN");
        for (int i = 0; i < schema::kCreateIndexCount; ++i) db.exec(schema::kCreateIndexes[i]);
        db.exec("COMMIT");
    }
    sql::Database database = std::move(st_->db);
    st_.reset();  // finalizes the statements
    // Back to a rollback journal: the closed capture is one self-contained
    // file, readable from read-only media without -wal/-shm side files. Best
    // effort: while a viewer has the file open it stays in WAL mode, which
    // is just as valid.
    try {
        database.exec("PRAGMA journal_mode=DELETE");
    } catch (const CaptureError&) {}
    database.close();
}

}  // namespace osc
