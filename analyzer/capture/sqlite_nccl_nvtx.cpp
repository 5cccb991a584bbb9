// NCCL's NVTX ranges in an Nsight Systems export become the rows our NCCL
// profiler plugin writes (OVERLAPSCOPE_NCCL_COLL, model.h CollectiveTable):
// one per collective, send or receive, with its bytes, communicator, the
// caller's rank in it, the peer or root, and the GPU times of the kernel
// that ran it. Everything downstream (bytes and bandwidth, send/receive
// pairing and waiting, all-to-all bytes) then works as with the plugin.
//
// Which kernel ran a call: NCCL launches it inside the call's range, or,
// for calls inside ncclGroupStart/ncclGroupEnd (PyTorch's coalesced
// collectives, batched sends and receives, all-to-all), inside the
// outermost ncclGroupEnd range that follows on the same thread. The launch
// API call and the kernel share a correlation id. Rows get that kernel's
// start and end, so grouped sends and receives land on their one kernel
// (docs/metrics.md section 5, rule 1).
#include "analyzer/capture/nccl_nvtx_payload.h"
#include "analyzer/capture/schema.h"
#include "analyzer/capture/sqlite_read_context.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace osc::sqlread {
namespace {

using ncclnvtx::CallValues;

struct Call {
    uint64_t globalTid = 0;
    TimeNs start = 0, end = 0;
    std::string_view collective;  // "" for the ncclComm* calls
    bool creates = false;         // ncclCommInitRank, ncclCommSplit, ...
    CallValues values;
};

// What the ncclComm* calls say of one communicator, merged: ncclCommFinalize
// names only the communicator, ncclCommDestroy also the ranks.
void merge(CallValues& into, const CallValues& v) {
    for (auto [to, from] : {std::pair{&into.rank, &v.rank}, {&into.nranks, &v.nranks}, {&into.cudaDev, &v.cudaDev}})
        if (*from) *to = *from;
}

ncclnvtx::Schemas readSchemas(ReadContext& ctx) {
    ncclnvtx::Schemas out;
    const std::string s = "NVTX_PAYLOAD_SCHEMAS", e = "NVTX_PAYLOAD_SCHEMA_ENTRIES";
    if (!ctx.hasColumn(e, "schemaId") || !ctx.hasColumn(e, "name")) return out;
    if (ctx.hasColumn(s, "schemaId")) {
        sql::Statement st(ctx.db, "SELECT " + ctx.column(s, "domainId", "0") + ", schemaId, " +
                                      ctx.rawColumn(s, "payloadSize", "NULL") + " FROM " + s);
        while (st.step()) {
            st.requireIntegers(0, 3, s);
            auto& schema = out[{static_cast<uint64_t>(st.int64(0)), static_cast<uint64_t>(st.int64(1))}];
            if (!st.isNull(2) && st.int64(2) > 0) schema.payloadSize = static_cast<uint64_t>(st.int64(2));
        }
    }
    const std::string idx = ctx.firstColumn(e, {"idx", "entryIndex", "index"});
    sql::Statement st(ctx.db, "SELECT " + ctx.column(e, "domainId", "0") + ", schemaId, " +
                                  (idx.empty() ? std::string("rowid") : idx) + ", " + ctx.column(e, "type", "0") +
                                  ", name, " + ctx.rawColumn(e, "offset", "NULL") + " FROM " + e + " ORDER BY 1, 2, 3");
    while (st.step()) {
        st.requireIntegers(0, 4, e);
        st.requireIntegers(5, 6, e);
        auto& schema = out[{static_cast<uint64_t>(st.int64(0)), static_cast<uint64_t>(st.int64(1))}];
        ncclnvtx::SchemaEntry entry;
        entry.name = std::string(st.text(4));
        entry.type = static_cast<uint64_t>(st.int64(3));
        if (!st.isNull(5)) entry.offset = static_cast<uint64_t>(st.int64(5));
        schema.entries.push_back(std::move(entry));
    }
    return out;
}

// Domain ids the file names "NCCL" (DomainCreate rows).
std::set<int64_t> ncclDomains(ReadContext& ctx, const std::string& text, const std::string& textId) {
    std::set<int64_t> out;
    const std::string t = "NVTX_EVENTS";
    sql::Statement st(ctx.db, "SELECT " + ctx.column(t, "domainId", "0") + ", " + text + ", " + textId + " FROM " + t +
                                  " WHERE " + ctx.column(t, "eventType", "-1") + " = " +
                                  std::to_string(schema::kNvtxDomainCreate));
    while (st.step()) {
        const std::string_view name =
            st.isNull(1) ? ctx.capture.strings.at(ctx.name(st.int64(2))) : std::string_view(st.text(1));
        if (name == "NCCL") out.insert(st.int64(0));
    }
    return out;
}

// A kernel NCCL launched: its device, times, and the thread and time of the
// API call that launched it.
struct Launch {
    uint64_t globalTid = 0;
    TimeNs at = 0;
    uint32_t device = kNoId;
    TimeNs start = 0, end = 0;
};

bool isNcclKernel(std::string_view name) {
    if (name.starts_with("void ")) name.remove_prefix(5);
    return name.starts_with("nccl");
}

// Per thread, start-sorted: NCCL kernel launches and ncclGroupEnd ranges.
struct ThreadLaunches {
    std::vector<Launch> launches;
    std::vector<std::pair<TimeNs, TimeNs>> groupEnds;
};

std::unordered_map<uint64_t, ThreadLaunches> launchesOf(const Capture& capture, const Process& p) {
    std::unordered_map<uint32_t, Launch> byCorrelation;
    for (const Device& d : p.devices)
        for (size_t k = 0; k < d.kernels.size(); ++k) {
            const uint32_t name = d.kernels.name[k] != 0 ? d.kernels.name[k] : d.kernels.shortName[k];
            if (isNcclKernel(capture.strings.at(name)))
                byCorrelation[d.kernels.correlation[k]] = {0, 0, d.id, d.kernels.start[k], d.kernels.end[k]};
        }
    std::unordered_map<uint64_t, ThreadLaunches> out;
    if (byCorrelation.empty()) return out;
    const ApiCallTable& a = p.apiCalls;
    for (size_t i = 0; i < a.size(); ++i) {
        const auto it = byCorrelation.find(a.correlation[i]);
        if (it == byCorrelation.end()) continue;
        Launch l = it->second;
        l.globalTid = a.globalTid[i];
        l.at = a.start[i];
        out[l.globalTid].launches.push_back(l);
    }
    for (size_t i = 0; i < p.ranges.size(); ++i)
        if (capture.strings.at(p.ranges.name[i]) == "ncclGroupEnd")
            out[p.ranges.globalTid[i]].groupEnds.emplace_back(p.ranges.start[i], p.ranges.end[i]);
    for (auto& [tid, t] : out) {
        std::sort(t.launches.begin(), t.launches.end(), [](const Launch& x, const Launch& y) { return x.at < y.at; });
        std::sort(t.groupEnds.begin(), t.groupEnds.end());
    }
    return out;
}

// The launches made inside [from, to] on a thread.
std::pair<const Launch*, const Launch*> launchedIn(const ThreadLaunches& t, TimeNs from, TimeNs to) {
    const auto first = std::lower_bound(t.launches.begin(), t.launches.end(), from,
                                        [](const Launch& l, TimeNs v) { return l.at < v; });
    auto last = first;
    while (last != t.launches.end() && last->at <= to) ++last;
    return {t.launches.data() + (first - t.launches.begin()), t.launches.data() + (last - t.launches.begin())};
}

// The kernel that ran `call`: launched inside its range, else inside the
// first ncclGroupEnd after it that launched anything. Of several (one per
// GPU when a process drives several), the one on the communicator's GPU.
const Launch* kernelOf(const ThreadLaunches& t, const Call& call, std::optional<int64_t> cudaDev) {
    auto [first, last] = launchedIn(t, call.start, call.end);
    if (first == last) {
        auto g = std::lower_bound(t.groupEnds.begin(), t.groupEnds.end(), std::pair<TimeNs, TimeNs>{call.end, 0});
        for (; g != t.groupEnds.end(); ++g) {
            std::tie(first, last) = launchedIn(t, g->first, g->second);
            if (first != last) break;
        }
    }
    if (first == last) return nullptr;
    if (cudaDev)
        for (const Launch* l = first; l != last; ++l)
            if (static_cast<int64_t>(l->device) == *cudaDev) return l;
    return first;
}

void appendRows(Capture& capture, Process& p, const std::vector<Call>& calls) {
    // Communicators from their creation (NCCL >= 2.25 names them); older
    // NCCL names none, and a process that made one communicator has it.
    std::map<uint64_t, CallValues> comms;
    std::vector<CallValues> unnamed;
    for (const Call& c : calls) {
        if (!c.collective.empty()) continue;
        if (c.values.comm)
            merge(comms[*c.values.comm], c.values);
        else if (c.creates)
            unnamed.push_back(c.values);
    }
    const auto launches = launchesOf(capture, p);
    std::map<std::pair<uint64_t, std::string_view>, uint64_t> seqOf;
    CollectiveTable& t = p.collectives;
    t.p2pNumbered = false;  // NCCL numbers no send or receive (docs/metrics.md 7d)
    auto& strings = capture.strings;
    const uint32_t none = strings.intern("");
    for (const Call& c : calls) {
        if (c.collective.empty()) continue;
        const CallValues* comm = nullptr;
        if (c.values.comm) {
            if (auto it = comms.find(*c.values.comm); it != comms.end()) comm = &it->second;
        } else if (unnamed.size() == 1) {
            comm = &unnamed.front();
        }
        const Launch* k = nullptr;
        if (auto it = launches.find(c.globalTid); it != launches.end())
            k = kernelOf(it->second, c, comm ? comm->cudaDev : std::nullopt);
        const bool p2p = c.collective == "Send" || c.collective == "Recv";
        const uint64_t commHash = c.values.comm.value_or(0);
        t.commHash.push_back(commHash);
        t.rank.push_back(comm && comm->rank ? static_cast<int32_t>(*comm->rank) : -1);
        t.nranks.push_back(comm && comm->nranks ? static_cast<int32_t>(*comm->nranks) : -1);
        t.seqNumber.push_back(p2p ? 0 : seqOf[{commHash, c.collective}]++);
        t.func.push_back(strings.intern(c.collective));
        t.count.push_back(0);  // elements: the payload gives bytes only
        t.datatype.push_back(none);
        t.bytes.push_back(c.values.bytes.value_or(0));
        const std::optional<int64_t> root = p2p ? c.values.peer : c.values.root;
        t.root.push_back(root ? static_cast<int32_t>(*root) : -1);
        t.algo.push_back(none);
        t.proto.push_back(none);
        t.nChannels.push_back(0);
        t.device.push_back(k                                              ? k->device
                           : comm && comm->cudaDev && *comm->cudaDev >= 0 ? static_cast<uint32_t>(*comm->cudaDev)
                                                                          : kNoId);
        t.enqueue.push_back(c.start);
        t.gpuStart.push_back(k ? k->start : -1);
        t.gpuEnd.push_back(k ? k->end : -1);
    }
}

}  // namespace

void readNcclNvtxPayloads(ReadContext& ctx) {
    const std::string t = "NVTX_EVENTS";
    const bool binary = ctx.hasColumn(t, "binaryData");
    const bool json = ctx.hasColumn(t, "jsonText"), jsonId = ctx.hasColumn(t, "jsonTextId");
    if (!binary && !json && !jsonId) return;
    const ncclnvtx::Schemas schemas = binary ? readSchemas(ctx) : ncclnvtx::Schemas{};
    const std::string text = ctx.hasColumn(t, "text") ? "\"text\"" : "NULL";
    const std::string textId = ctx.column(t, "textId", "-1");
    const std::set<int64_t> domains = ncclDomains(ctx, text, textId);

    std::string payloadTest;
    for (const char* c : {"binaryData", "jsonText", "jsonTextId"})
        if (ctx.hasColumn(t, c))
            payloadTest += std::string(payloadTest.empty() ? "" : " OR ") + "\"" + c + "\" IS NOT NULL";
    sql::Statement st(ctx.db, "SELECT " + ctx.column(t, "globalTid", "0") + ", " + ctx.column(t, "start", "0") + ", " +
                                  (ctx.hasColumn(t, "end") ? "\"end\"" : "NULL") + ", " + text + ", " + textId + ", " +
                                  ctx.column(t, "domainId", "0") + ", " + (binary ? "\"binaryData\"" : "NULL") + ", " +
                                  (json ? "\"jsonText\"" : "NULL") + ", " + ctx.column(t, "jsonTextId", "-1") +
                                  " FROM " + t + " WHERE " + ctx.column(t, "eventType", "-1") + " IN (" +
                                  std::to_string(schema::kNvtxPushPop) + ", " + std::to_string(schema::kNvtxStartEnd) +
                                  ") AND (" + payloadTest + ")");
    std::map<size_t, std::vector<Call>> callsOf;  // by process
    while (st.step()) {
        st.requireIntegers(0, 3, t);
        const int64_t domain = st.int64(5);
        if (!domains.empty() && domains.count(domain) == 0) continue;
        const std::string_view name =
            st.isNull(3) ? ctx.capture.strings.at(ctx.name(st.int64(4))) : std::string_view(st.text(3));
        Call call;
        call.collective = ncclnvtx::collectiveOf(name);
        call.creates = ncclnvtx::createsCommunicator(name);
        if (call.collective.empty() && !name.starts_with("ncclComm")) continue;
        std::optional<CallValues> values;
        if (!st.isNull(7) || st.int64(8) >= 0) {
            const std::string_view doc =
                !st.isNull(7) ? std::string_view(st.text(7)) : ctx.capture.strings.at(ctx.name(st.int64(8)));
            values = ncclnvtx::decodeJson(doc);
        }
        if (!values && sqlite3_column_type(st.get(), 6) == SQLITE_BLOB) {
            const auto* bytes = static_cast<const char*>(sqlite3_column_blob(st.get(), 6));
            const std::string_view blob(bytes, static_cast<size_t>(sqlite3_column_bytes(st.get(), 6)));
            values = ncclnvtx::decodeBinary(blob, static_cast<uint64_t>(domain), name, schemas);
        }
        if (!values) continue;
        call.globalTid = static_cast<uint64_t>(st.int64(0));
        call.start = st.int64(1);
        call.end = st.isNull(2) ? call.start : st.int64(2);
        call.values = *values;
        callsOf[ctx.processIndex(call.globalTid)].push_back(call);
    }
    for (auto& [process, calls] : callsOf) {
        Process& p = ctx.capture.processes[process];
        // Plugin rows, where a file has them, say more (algorithm, protocol, GPU times of their own).
        if (p.collectives.size() > 0) continue;
        std::stable_sort(calls.begin(), calls.end(), [](const Call& a, const Call& b) { return a.start < b.start; });
        appendRows(ctx.capture, p, calls);
    }
}

}  // namespace osc::sqlread
