// Readers for the per-process tables: runtime/driver API calls, NVTX ranges,
// NCCL collectives (ours), stream names (ours) and thread names (nsys's
// ThreadNames, which ours copy).
#include "analyzer/capture/column_scatter.h"
#include "analyzer/capture/parallel_scan.h"
#include "analyzer/capture/schema.h"
#include "analyzer/capture/sqlite_read_context.h"

#include <map>
#include <string_view>

namespace osc::sqlread {
namespace {

// Process index → compact slot, for the flat-then-distribute pattern.
class ProcessSlots {
public:
    explicit ProcessSlots(ReadContext& ctx) : ctx_(ctx) {}
    uint32_t slot(uint64_t global) {
        const size_t process = ctx_.processIndex(global);
        if (process == lastProcess_) return lastSlot_;
        uint32_t found = static_cast<uint32_t>(processes_.size());
        for (uint32_t i = 0; i < processes_.size(); ++i)
            if (processes_[i] == process) found = i;
        if (found == processes_.size()) processes_.push_back(process);
        lastProcess_ = process;
        lastSlot_ = found;
        return found;
    }
    template <typename Table>
    std::vector<Table*> tables(Table Process::*member) {
        std::vector<Table*> out;
        for (size_t p : processes_) out.push_back(&(ctx_.capture.processes[p].*member));
        return out;
    }

private:
    ReadContext& ctx_;
    std::vector<size_t> processes_;
    size_t lastProcess_ = ~size_t{0};
    uint32_t lastSlot_ = 0;
};

const auto kApiColumns =
    std::make_tuple(&ApiCallTable::start, &ApiCallTable::end, &ApiCallTable::globalTid, &ApiCallTable::correlation,
                    &ApiCallTable::name, &ApiCallTable::returnValue, &ApiCallTable::kind);
const auto kRangeColumns = std::make_tuple(&RangeTable::start, &RangeTable::end, &RangeTable::name,
                                           &RangeTable::globalTid, &RangeTable::domain, &RangeTable::category,
                                           &RangeTable::color, &RangeTable::kind, &RangeTable::onGpu);

// Driver API names start with "cu" but not "cuda" (cuLaunchKernelEx).
ApiKind kindFromName(std::string_view name) {
    const bool driver = name.size() > 2 && name.substr(0, 2) == "cu" && name.substr(0, 4) != "cuda";
    return driver ? ApiKind::Driver : ApiKind::Runtime;
}

std::string_view textOf(sqlite3_stmt* s, int column) {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, column));
    return p ? std::string_view(p, static_cast<size_t>(sqlite3_column_bytes(s, column))) : std::string_view{};
}

}  // namespace

void readApiCalls(ReadContext& ctx) {
    const std::string t = "CUPTI_ACTIVITY_KIND_RUNTIME";
    if (!ctx.hasTable(t)) return;
    const int64_t total = ctx.rowCount(t);
    if (total == 0) return;
    // Runtime or driver: eventClass when it says so, else the name decides,
    // once every row is in (the rows may be read on two threads).
    constexpr auto kUndecided = static_cast<ApiKind>(0xFF);
    // Columns 0-6: globalTid, start, end, correlationId, nameId, returnValue,
    // eventClass. NULL reads as 0 but for nameId and eventClass, whose NULL
    // is -1.
    auto rows = [&ctx](TablePart<ApiCallTable>& part, const DecodedRows& r) {
        ApiCallTable& flat = part.rows;
        const size_t n = r.count;
        const int64_t* tid = r.column(0);
        const int64_t* start = r.column(1);
        const int64_t* end = r.column(2);
        const int64_t* correlation = r.column(3);
        const int64_t* nameId = r.column(4);
        const int64_t* returnValue = r.column(5);
        const int64_t* eventClass = r.column(6);
        appendEach(flat.globalTid, n, [&](size_t i) { return static_cast<uint64_t>(tid[i]); });
        flat.start.insert(flat.start.end(), start, start + n);
        flat.end.insert(flat.end.end(), end, end + n);
        appendEach(flat.correlation, n, [&](size_t i) { return u32(correlation[i]); });
        appendEach(flat.name, n, [&](size_t i) { return ctx.name(nameId[i]); });
        appendEach(flat.returnValue, n, [&](size_t i) { return static_cast<int32_t>(returnValue[i]); });
        appendEach(flat.kind, n, [&](size_t i) {
            if (eventClass[i] == schema::kEventClassRuntime) return ApiKind::Runtime;
            if (eventClass[i] == schema::kEventClassDriver) return ApiKind::Driver;
            return kUndecided;
        });
    };
    const std::vector<PageColumn> columns = {
        "globalTid", "start", "end", "correlationId", {"nameId", -1, -1}, "returnValue", {"eventClass", -1, -1}};
    std::optional<TablePart<ApiCallTable>> part = scanTablePages<ApiCallTable>(ctx, t, columns, kApiColumns, rows);
    if (!part) {
        part.emplace();
        reserveAll(part->rows, static_cast<size_t>(total), kApiColumns);
        // Raw columns where NULL means 0 (sqlite3_column_int64 reads NULL as
        // 0, so coalesce(c, 0) only cost VDBE steps); nameId and eventClass
        // keep their -1 for NULL.
        sql::Statement st(ctx.db, "SELECT " + ctx.rawColumn(t, "globalTid", "0") + ", " +
                                      ctx.rawColumn(t, "start", "0") + ", " + ctx.rawColumn(t, "end", "0") + ", " +
                                      ctx.rawColumn(t, "correlationId", "0") + ", " + ctx.column(t, "nameId", "-1") +
                                      ", " + ctx.rawColumn(t, "returnValue", "0") + ", " +
                                      ctx.column(t, "eventClass", "-1") + " FROM " + t);
        int64_t done = 0;
        while (st.step()) {
            try {
                rows(*part, StatementRow<7>(st.get()).rows());
            } catch (const sql::NotAnInteger&) {
                st.requireIntegers(0, 7, t);
                throw;
            }
            if ((++done & 0xFFFF) == 0) ctx.tick(done, total);
        }
    }
    ApiCallTable& flat = part->rows;
    std::vector<int8_t> kindByName(ctx.capture.strings.size() + 1, -1);  // -1: not decided yet
    for (size_t i = 0; i < flat.size(); ++i) {
        if (flat.kind[i] != kUndecided) continue;
        const uint32_t name = flat.name[i];
        if (name >= kindByName.size()) kindByName.resize(name + 1, -1);
        if (kindByName[name] < 0) kindByName[name] = static_cast<int8_t>(kindFromName(ctx.capture.strings.at(name)));
        flat.kind[i] = static_cast<ApiKind>(kindByName[name]);
    }
    // Processes are made once every row is in, in row order, whichever way
    // they were read (a reading from pages that gave up made none).
    ProcessSlots slots(ctx);
    std::vector<uint32_t> slotOf;
    slotOf.reserve(flat.size());
    for (uint64_t tid : flat.globalTid) slotOf.push_back(slots.slot(tid));
    distribute(flat, slotOf, slots.tables(&Process::apiCalls), kApiColumns);
}

void readRanges(ReadContext& ctx) {
    const std::string t = "NVTX_EVENTS";
    if (!ctx.hasTable(t)) return;
    const std::string text = ctx.hasColumn(t, "text") ? "\"text\"" : "NULL";
    const std::string textId = ctx.column(t, "textId", "-1");
    const std::string tid = ctx.column(t, "globalTid", "0");
    const std::string domainId = ctx.column(t, "domainId", "0");
    const std::string eventType = ctx.column(t, "eventType", "-1");

    // Domains: DomainCreate rows name them. Ids are per process in nsys; the
    // fallback by id alone covers rows whose thread ids disagree.
    std::map<std::pair<size_t, int64_t>, uint32_t> domainByProcess;
    std::map<int64_t, uint32_t> domainById;
    {
        sql::Statement st(ctx.db, "SELECT " + tid + ", " + domainId + ", " + text + ", " + textId + " FROM " + t +
                                      " WHERE " + eventType + " = " + std::to_string(schema::kNvtxDomainCreate));
        while (st.step()) {
            st.requireIntegers(0, 2, t);
            st.requireIntegers(3, 4, t);
            const uint32_t name = st.isNull(2) ? ctx.name(st.int64(3)) : ctx.capture.strings.intern(st.text(2));
            const size_t process = ctx.processIndex(static_cast<uint64_t>(st.int64(0)));
            domainByProcess[{process, st.int64(1)}] = name;
            domainById.emplace(st.int64(1), name);
        }
    }

    sql::Statement count(ctx.db, "SELECT count(*) FROM " + t + " WHERE " + eventType + " IN (" +
                                     std::to_string(schema::kNvtxMark) + ", " + std::to_string(schema::kNvtxPushPop) +
                                     ", " + std::to_string(schema::kNvtxStartEnd) + ")");
    const int64_t total = count.step() ? count.int64(0) : 0;
    if (total == 0) return;
    RangeTable flat;
    reserveAll(flat, static_cast<size_t>(total), kRangeColumns);
    std::vector<uint32_t> slotOf;
    slotOf.reserve(static_cast<size_t>(total));
    ProcessSlots slots(ctx);
    sql::Statement st(ctx.db, "SELECT " + tid + ", " + ctx.column(t, "start", "0") + ", " +
                                  (ctx.hasColumn(t, "end") ? "\"end\"" : "NULL") + ", " + eventType + ", " + text +
                                  ", " + textId + ", " + domainId + ", " + ctx.column(t, "category", "0") + ", " +
                                  ctx.column(t, "color", "0") + ", " + ctx.column(t, "overlapscopeOnGpu", "0") +
                                  " FROM " + t + " WHERE " + eventType + " IN (" + std::to_string(schema::kNvtxMark) +
                                  ", " + std::to_string(schema::kNvtxPushPop) + ", " +
                                  std::to_string(schema::kNvtxStartEnd) + ")");
    sqlite3_stmt* s = st.get();
    int64_t done = 0;
    while (st.step()) {
        st.requireIntegers(0, 4, t);  // column 4 is the text
        st.requireIntegers(5, 10, t);
        const auto globalTid = static_cast<uint64_t>(sqlite3_column_int64(s, 0));
        const uint32_t slot = slots.slot(globalTid);
        slotOf.push_back(slot);
        const TimeNs start = sqlite3_column_int64(s, 1);
        const int64_t type = sqlite3_column_int64(s, 3);
        // Marks, and ranges never closed (process killed mid-range), end where they start.
        const bool open = sqlite3_column_type(s, 2) == SQLITE_NULL;
        flat.start.push_back(start);
        flat.end.push_back(type == schema::kNvtxMark || open ? start : sqlite3_column_int64(s, 2));
        flat.kind.push_back(type == schema::kNvtxMark       ? RangeKind::Mark
                            : type == schema::kNvtxStartEnd ? RangeKind::StartEnd
                                                            : RangeKind::PushPop);
        flat.name.push_back(sqlite3_column_type(s, 4) == SQLITE_NULL ? ctx.name(sqlite3_column_int64(s, 5))
                                                                     : ctx.capture.strings.intern(textOf(s, 4)));
        flat.globalTid.push_back(globalTid);
        const int64_t domain = sqlite3_column_int64(s, 6);
        uint32_t domainName = kNoId;
        if (domain != 0) {
            const size_t process = ctx.processIndex(globalTid);
            if (auto it = domainByProcess.find({process, domain}); it != domainByProcess.end())
                domainName = it->second;
            else if (auto byId = domainById.find(domain); byId != domainById.end())
                domainName = byId->second;
        }
        flat.domain.push_back(domainName);
        flat.category.push_back(u32(sqlite3_column_int64(s, 7)));
        flat.color.push_back(u32(sqlite3_column_int64(s, 8)));
        flat.onGpu.push_back(sqlite3_column_int64(s, 9) != 0 ? 1 : 0);
        if ((++done & 0xFFFF) == 0) ctx.tick(done, total);
    }
    distribute(flat, slotOf, slots.tables(&Process::ranges), kRangeColumns);
}

void readCollectives(ReadContext& ctx) {
    const std::string t = "OVERLAPSCOPE_NCCL_COLL";
    if (!ctx.hasTable(t)) return;
    auto c = [&](const char* name, const char* fallback) { return ctx.column(t, name, fallback); };
    sql::Statement st(ctx.db, "SELECT " + c("globalPid", "0") + ", " + c("deviceId", "4294967295") + ", " +
                                  c("commHash", "0") + ", " + c("rank", "-1") + ", " + c("nranks", "-1") + ", " +
                                  c("seqNumber", "0") + ", " + c("func", "''") + ", " + c("count", "0") + ", " +
                                  c("datatype", "''") + ", " + c("bytes", "0") + ", " + c("root", "-1") + ", " +
                                  c("algo", "''") + ", " + c("proto", "''") + ", " + c("nChannels", "0") + ", " +
                                  c("enqueue", "-1") + ", " + c("gpuStart", "-1") + ", " + c("gpuEnd", "-1") +
                                  " FROM " + t);
    auto& strings = ctx.capture.strings;
    while (st.step()) {
        // Columns 6, 8, 11, 12 are names (text in our files, string ids in others).
        for (const auto& [from, to] : {std::pair{0, 6}, {7, 8}, {9, 11}, {13, 17}}) st.requireIntegers(from, to, t);
        const auto globalPid = static_cast<uint64_t>(st.int64(0));
        auto& n =
            ctx.capture.processes[globalPid == 0 ? ctx.defaultProcess() : ctx.processIndex(globalPid)].collectives;
        n.device.push_back(u32(st.int64(1)));
        n.commHash.push_back(static_cast<uint64_t>(st.int64(2)));
        n.rank.push_back(static_cast<int32_t>(st.int64(3)));
        n.nranks.push_back(static_cast<int32_t>(st.int64(4)));
        n.seqNumber.push_back(static_cast<uint64_t>(st.int64(5)));
        n.func.push_back(strings.intern(st.text(6)));
        n.count.push_back(static_cast<uint64_t>(st.int64(7)));
        n.datatype.push_back(strings.intern(st.text(8)));
        n.bytes.push_back(static_cast<uint64_t>(st.int64(9)));
        n.root.push_back(static_cast<int32_t>(st.int64(10)));
        n.algo.push_back(strings.intern(st.text(11)));
        n.proto.push_back(strings.intern(st.text(12)));
        n.nChannels.push_back(static_cast<int32_t>(st.int64(13)));
        n.enqueue.push_back(st.int64(14));
        n.gpuStart.push_back(st.int64(15));
        n.gpuEnd.push_back(st.int64(16));
    }
}

void readStreamNames(ReadContext& ctx) {
    const std::string t = "OVERLAPSCOPE_STREAM_NAME";
    if (!ctx.hasTable(t)) return;
    sql::Statement st(ctx.db, "SELECT " + ctx.column(t, "globalPid", "0") + ", " + ctx.column(t, "deviceId", "0") +
                                  ", " + ctx.column(t, "streamId", "0") + ", " + ctx.column(t, "name", "''") +
                                  " FROM " + t);
    while (st.step()) {
        st.requireIntegers(0, 3, t);
        const auto globalPid = static_cast<uint64_t>(st.int64(0));
        auto& process = ctx.capture.processes[globalPid == 0 ? ctx.defaultProcess() : ctx.processIndex(globalPid)];
        process.deviceById(u32(st.int64(1))).streamNames[u32(st.int64(2))] = std::string(st.text(3));
    }
}

void readThreadNames(ReadContext& ctx) {
    const std::string t = "ThreadNames";
    if (!ctx.hasTable(t)) return;
    sql::Statement st(ctx.db, "SELECT " + ctx.column(t, "globalTid", "0") + ", " + ctx.column(t, "nameId", "-1") +
                                  ", " + ctx.column(t, "priority", "0") + " FROM " + t);
    // nsys names a thread from several sources (the OS, nvtxNameOsThread)
    // and ranks them by priority: the highest wins, and among equals the
    // later row, as a rename would. A name whose string id is missing is
    // skipped rather than blanking a name that could be read.
    std::map<uint64_t, int64_t> priorityOf;
    while (st.step()) {
        st.requireIntegers(0, 3, t);
        const auto globalTid = static_cast<uint64_t>(st.int64(0));
        // A thread of no process read so far ran nothing worth a lane; its
        // name alone must not make a process (ours keep empty ones).
        const size_t process = ctx.existingProcess(globalTid);
        if (globalTid == 0 || process == ReadContext::kNoProcess) continue;
        const uint32_t name = ctx.name(st.int64(1));
        const std::string_view text = ctx.capture.strings.at(name);
        if (text.empty()) continue;
        const int64_t priority = st.int64(2);
        const auto [it, first] = priorityOf.try_emplace(globalTid, priority);
        if (!first && priority < it->second) continue;
        it->second = priority;
        ctx.capture.processes[process].threadNames[globalTid] = std::string(text);
    }
}

}  // namespace osc::sqlread
