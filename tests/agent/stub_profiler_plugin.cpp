// A second NCCL profiler plugin, for the tests of chaining (issue 41,
// "beside other NCCL tools"): built as libnccl-profiler-stub.so, it exports
// ncclProfiler_v5 and ncclProfiler_v4 and keeps its own events, as NCCL
// Inspector does: its handles are pointers to its own objects, and it
// follows the parents NCCL names (a kernel channel's collective, a
// collective's launch and API call). So if the agent handed it one of the
// agent's handles, or a stale one, it would notice: every handle is looked
// up among the objects it ever made (never freed) before it is followed, and
// what is wrong is counted.
//
// Environment: STUB_PROFILER_LOG, a file that gets one line per finalized
// communicator (its counts, below); STUB_PROFILER_MASK, the events it asks
// for (default Group, Coll, P2p, KernelCh and CollApi); STUB_PROFILER_FAIL_INIT=1,
// its init fails.
#include "agent/nccl_plugin/nccl_profiler_abi.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>

namespace {

struct Context {
    uint64_t commHash = 0;
    int rank = 0;
    // starts by event type (bit index), stops, state records, and what was wrong
    std::array<uint64_t, 16> starts{};
    uint64_t stops = 0, records = 0, badHandles = 0, badParents = 0, doubleStops = 0;
};

struct Event {
    uint64_t type = 0;
    Context* context = nullptr;
    bool stopped = false;
};

std::mutex g_mutex;
std::set<const void*> g_contexts, g_events;  // all ever made: nothing is freed

int bitOf(uint64_t type) {
    for (int b = 0; b < 16; ++b)
        if (type == (uint64_t{1} << b)) return b;
    return 15;
}

// The event `p` names, if it is one of ours of one of `types`.
Event* own(const void* p, uint64_t types) {
    if (!p || !g_events.count(p)) return nullptr;
    auto* e = static_cast<Event*>(const_cast<void*>(p));
    return (e->type & types) ? e : nullptr;
}

int askedMask() {
    if (const char* m = std::getenv("STUB_PROFILER_MASK"); m && *m) return static_cast<int>(std::strtol(m, nullptr, 0));
    return ncclProfileGroup | ncclProfileColl | ncclProfileP2p | ncclProfileKernelCh | ncclProfileCollApi;
}

ncclResult_t init(void** context, int* mask, uint64_t commHash, int rank) {
    *context = nullptr;
    if (const char* f = std::getenv("STUB_PROFILER_FAIL_INIT"); f && *f == '1') return 3;  // ncclInternalError
    auto* c = new Context;
    c->commHash = commHash;
    c->rank = rank;
    std::lock_guard lock(g_mutex);
    g_contexts.insert(c);
    *context = c;
    *mask = askedMask();  // written outright, as Inspector writes it
    return 0;
}

// What each version's descriptor says; the v4 one keeps the launch in parentObj.
struct Seen {
    uint64_t type;
    const void* parentObj;
    const void* parentGroup;
    bool v5;
};

void start(void* context, void** handle, const Seen& d) {
    *handle = nullptr;
    std::lock_guard lock(g_mutex);
    if (!g_contexts.count(context)) return;
    auto* c = static_cast<Context*>(context);
    const int mask = askedMask();
    if (!(d.type & static_cast<uint64_t>(mask))) ++c->badHandles;  // an event it never asked for
    // Its parents must be its own events.
    bool ok = true;
    if (d.type == ncclProfileKernelCh) ok = own(d.parentObj, ncclProfileColl | ncclProfileP2p) != nullptr;
    if (d.type == ncclProfileColl || d.type == ncclProfileP2p) {
        const void* group = d.v5 ? d.parentGroup : d.parentObj;
        if (mask & ncclProfileGroup) ok = own(group, ncclProfileGroup) != nullptr;
        // ABI 5: the collective's API call, stopped before the launch.
        if (d.v5 && d.type == ncclProfileColl && (mask & ncclProfileCollApi))
            ok = ok && own(d.parentObj, ncclProfileCollApi) != nullptr;
    }
    if (!ok) ++c->badParents;
    auto* e = new Event{d.type, c, false};
    g_events.insert(e);
    ++c->starts[static_cast<size_t>(bitOf(d.type))];
    *handle = e;
}

ncclResult_t startV5(void* context, void** handle, ncclProfilerEventDescr_v5_t* d) {
    if (!handle || !d) return 0;
    const bool withGroup = d->type == ncclProfileColl || d->type == ncclProfileP2p;
    start(context, handle,
          {d->type, d->parentObj,
           withGroup ? (d->type == ncclProfileColl ? d->coll.parentGroup : d->p2p.parentGroup) : nullptr, true});
    return 0;
}

ncclResult_t startV4(void* context, void** handle, ncclProfilerEventDescr_v4_t* d) {
    if (!handle || !d) return 0;
    start(context, handle, {d->type, d->parentObj, nullptr, false});
    return 0;
}

ncclResult_t stop(void* handle) {
    std::lock_guard lock(g_mutex);
    Event* e = own(handle, ~uint64_t{0});
    if (!e) {
        // Not its own: nothing to count it on but every context.
        for (const void* c : g_contexts) ++static_cast<Context*>(const_cast<void*>(c))->badHandles;
        return 0;
    }
    if (e->stopped) ++e->context->doubleStops;
    e->stopped = true;
    ++e->context->stops;
    return 0;
}

ncclResult_t record(void* handle, int, ncclProfilerEventStateArgs_v5_t*) {
    std::lock_guard lock(g_mutex);
    Event* e = own(handle, ~uint64_t{0});
    if (!e || e->stopped) {
        for (const void* c : g_contexts) ++static_cast<Context*>(const_cast<void*>(c))->badHandles;
        return 0;
    }
    ++e->context->records;
    return 0;
}

ncclResult_t finalize(void* context) {
    std::lock_guard lock(g_mutex);
    if (!g_contexts.count(context)) return 0;
    const auto* c = static_cast<const Context*>(context);
    uint64_t unstopped = 0;
    for (const void* p : g_events) {
        const auto* e = static_cast<const Event*>(p);
        if (e->context == c && !e->stopped) ++unstopped;
    }
    if (const char* path = std::getenv("STUB_PROFILER_LOG"); path && *path) {
        if (FILE* f = std::fopen(path, "a")) {
            std::fprintf(f,
                         "stub comm=%llu rank=%d group=%llu coll=%llu p2p=%llu kernelch=%llu collapi=%llu stops=%llu "
                         "records=%llu bad_handles=%llu bad_parents=%llu double_stops=%llu unstopped=%llu\n",
                         static_cast<unsigned long long>(c->commHash), c->rank,
                         static_cast<unsigned long long>(c->starts[0]), static_cast<unsigned long long>(c->starts[1]),
                         static_cast<unsigned long long>(c->starts[2]), static_cast<unsigned long long>(c->starts[6]),
                         static_cast<unsigned long long>(c->starts[9]), static_cast<unsigned long long>(c->stops),
                         static_cast<unsigned long long>(c->records), static_cast<unsigned long long>(c->badHandles),
                         static_cast<unsigned long long>(c->badParents),
                         static_cast<unsigned long long>(c->doubleStops), static_cast<unsigned long long>(unstopped));
            std::fclose(f);
        }
    }
    return 0;
}

ncclResult_t initV5(void** context, uint64_t commId, int* mask, const char*, int, int, int rank, ncclDebugLogger_t) {
    return init(context, mask, commId, rank);
}

ncclResult_t initV4(void** context, int* mask, const char*, uint64_t commHash, int, int, int rank, ncclDebugLogger_t) {
    return init(context, mask, commHash, rank);
}

}  // namespace

extern "C" {
__attribute__((visibility("default")))
ncclProfiler_v5_t ncclProfiler_v5 = {"stub", initV5, startV5, stop, record, finalize};
__attribute__((visibility("default")))
ncclProfiler_v4_t ncclProfiler_v4 = {"stub", initV4, startV4, stop, record, finalize};
}
