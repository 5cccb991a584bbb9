// The NCCL profiler plugin interface, versions 4 (NCCL 2.27) and 5 (NCCL
// 2.28), declared here from NCCL's documented layout so the agent builds
// without NCCL's plugin headers (ext-profiler/example/nccl/profiler_v4.h and
// profiler_v5.h). Only the members we read are named with care; the layout of
// every struct must match NCCL's exactly.
#pragma once

#include <sys/types.h>
#include <cstddef>
#include <cstdint>

extern "C" {

typedef int ncclResult_t;  // ncclSuccess = 0
typedef void (*ncclDebugLogger_t)(int level, unsigned long flags, const char* file, int line, const char* fmt, ...);

enum {
    ncclProfileGroup = 1 << 0,
    ncclProfileColl = 1 << 1,
    ncclProfileP2p = 1 << 2,
    ncclProfileProxyOp = 1 << 3,
    ncclProfileProxyStep = 1 << 4,
    ncclProfileProxyCtrl = 1 << 5,
    ncclProfileKernelCh = 1 << 6,
    ncclProfileNetPlugin = 1 << 7,
    ncclProfileGroupApi = 1 << 8,
    ncclProfileCollApi = 1 << 9,
    ncclProfileP2pApi = 1 << 10,
    ncclProfileKernelLaunch = 1 << 11,
};

// ncclProfilerEventState_v4_t / _v5_t: only the state we use.
typedef int ncclProfilerEventState_v4_t;
typedef int ncclProfilerEventState_v5_t;
inline constexpr int ncclProfilerKernelChStop = 22;

struct OscNcclCollDescrV4 {
    uint64_t seqNumber;
    const char* func;
    void const* sendBuff;
    void* recvBuff;
    size_t count;
    int root;
    const char* datatype;
    uint8_t nChannels;
    uint8_t nWarps;
    const char* algo;
    const char* proto;
};

struct OscNcclCollDescrV5 {
    uint64_t seqNumber;
    const char* func;
    void const* sendBuff;
    void* recvBuff;
    size_t count;
    int root;
    const char* datatype;
    uint8_t nChannels;
    uint8_t nWarps;
    const char* algo;
    const char* proto;
    void* parentGroup;
};

// A point-to-point call: one ncclSend or ncclRecv. NCCL gives it no sequence
// number; `peer` is the other rank in the communicator.
struct OscNcclP2pDescrV4 {
    const char* func;  // "Send" or "Recv"
    void* buff;
    const char* datatype;
    size_t count;
    int peer;
    uint8_t nChannels;
};

struct OscNcclP2pDescrV5 {
    const char* func;
    void* buff;
    const char* datatype;
    size_t count;
    int peer;
    uint8_t nChannels;
    void* parentGroup;  // v5 keeps the group here; parentObj is the (API) call
};

struct OscNcclKernelChDescr {
    uint8_t channelId;
    uint64_t pTimer;  // start, GPU globaltimer ns
};

// The union members we do not read, kept for the union's size and alignment.
struct OscNcclProxyOpDescr {
    pid_t pid;
    uint8_t channelId;
    int peer, nSteps, chunkSize, isSend;
};

typedef struct {
    uint8_t type;
    void* parentObj;
    int rank;
    union {
        OscNcclCollDescrV4 coll;
        OscNcclP2pDescrV4 p2p;
        OscNcclProxyOpDescr proxyOp;
        OscNcclKernelChDescr kernelCh;
        struct {
            int64_t id;
            void* data;
        } netPlugin;
    };
} ncclProfilerEventDescr_v4_t;

typedef struct {
    uint64_t type;
    void* parentObj;
    int rank;
    union {
        OscNcclCollDescrV5 coll;
        OscNcclP2pDescrV5 p2p;
        OscNcclProxyOpDescr proxyOp;
        OscNcclKernelChDescr kernelCh;
        struct {
            const char* func;
            size_t count;
            const char* datatype;
            int root;
            void* stream;
            bool graphCaptured;
        } collApi;
        struct {
            int64_t id;
            void* data;
        } netPlugin;
    };
} ncclProfilerEventDescr_v5_t;

typedef union {
    struct {
        size_t transSize;
    } proxyStep;
    struct {
        int appendedProxyOps;
    } proxyCtrl;
    struct {
        void* data;
    } netPlugin;
    struct {
        uint64_t pTimer;
    } kernelCh;
} ncclProfilerEventStateArgs_v4_t;
typedef ncclProfilerEventStateArgs_v4_t ncclProfilerEventStateArgs_v5_t;

typedef struct {
    const char* name;
    ncclResult_t (*init)(void** context, int* eActivationMask, const char* commName, uint64_t commHash, int nNodes,
                         int nranks, int rank, ncclDebugLogger_t logfn);
    ncclResult_t (*startEvent)(void* context, void** eHandle, ncclProfilerEventDescr_v4_t* eDescr);
    ncclResult_t (*stopEvent)(void* eHandle);
    ncclResult_t (*recordEventState)(void* eHandle, ncclProfilerEventState_v4_t eState,
                                     ncclProfilerEventStateArgs_v4_t* eStateArgs);
    ncclResult_t (*finalize)(void* context);
} ncclProfiler_v4_t;

typedef struct {
    const char* name;
    ncclResult_t (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName, int nNodes,
                         int nranks, int rank, ncclDebugLogger_t logfn);
    ncclResult_t (*startEvent)(void* context, void** eHandle, ncclProfilerEventDescr_v5_t* eDescr);
    ncclResult_t (*stopEvent)(void* eHandle);
    ncclResult_t (*recordEventState)(void* eHandle, ncclProfilerEventState_v5_t eState,
                                     ncclProfilerEventStateArgs_v5_t* eStateArgs);
    ncclResult_t (*finalize)(void* context);
} ncclProfiler_v5_t;

}  // extern "C"

namespace osc::agent::nccl {
// Which of the two tables NCCL calls us through (2.27: v4, 2.28: v5).
enum class Abi { V4, V5 };
}  // namespace osc::agent::nccl

// Layout checks against the offsets of NCCL's own headers (x86-64 / aarch64 LP64).
// The v5 Coll and P2p offsets are also where NCCL 2.28.9's libnccl.so writes
// (its ncclProfilerStartTaskEvents, disassembled): for a P2p event func, buff,
// datatype, count, peer, nChannels and parentGroup at 24, 32, 40, 48, 56, 60
// and 64 from the descriptor's start, parentObj being the P2pApi event; and
// (ncclProfilerStart/StopKernelChEvent) a KernelCh event's channelId and
// pTimer at 24 and 32, its stop as state 22 with the timer at offset 0 of
// the arguments.
static_assert(offsetof(ncclProfilerEventDescr_v4_t, parentObj) == 8);
static_assert(offsetof(ncclProfilerEventDescr_v4_t, rank) == 16);
static_assert(offsetof(ncclProfilerEventDescr_v4_t, coll) == 24);
static_assert(offsetof(ncclProfilerEventDescr_v4_t, p2p) == 24);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, parentObj) == 8);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, rank) == 16);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll) == 24);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, p2p) == 24);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, kernelCh) == 24);
static_assert(offsetof(OscNcclCollDescrV5, nChannels) == 56);
static_assert(offsetof(OscNcclCollDescrV5, algo) == 64);
static_assert(offsetof(OscNcclCollDescrV5, parentGroup) == 80);
static_assert(offsetof(OscNcclP2pDescrV4, count) == 24);
static_assert(offsetof(OscNcclP2pDescrV4, peer) == 32);
static_assert(offsetof(OscNcclP2pDescrV4, nChannels) == 36);
static_assert(offsetof(OscNcclP2pDescrV5, nChannels) == 36);
static_assert(offsetof(OscNcclP2pDescrV5, parentGroup) == 40);
static_assert(sizeof(OscNcclKernelChDescr) == 16);
