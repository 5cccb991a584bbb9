#include "analyzer/capture/schema.h"

namespace osc::schema {

// Column names and order follow the Nsight Systems export so that scripts
// written for nsys exports run on our files. Columns nsys has and we never
// fill are left out: readers treat absent columns as empty anyway. The
// high-volume activity tables have no NOT NULL constraints (nsys declares
// some): each is a check per column per row, about 10% of an insert.
const char* const kCreateTables[] = {
    "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL)",

    "CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, "
    "label TEXT NOT NULL)",
    "CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, "
    "label TEXT NOT NULL)",
    "CREATE TABLE ENUM_CUPTI_SYNC_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, "
    "label TEXT NOT NULL)",
    "CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, "
    "label TEXT NOT NULL)",
    "CREATE TABLE ENUM_NSYS_EVENT_CLASS (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, "
    "label TEXT NOT NULL)",

    "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT)",
    "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER NOT NULL)",
    "CREATE TABLE TARGET_INFO_GPU (id INTEGER NOT NULL PRIMARY KEY, name TEXT, busLocation TEXT, "
    "uuid TEXT, totalMemory INTEGER, smCount INTEGER, computeMajor INTEGER, "
    "computeMinor INTEGER)",
    "CREATE TABLE PROCESSES (globalPid INTEGER NOT NULL, pid INTEGER NOT NULL, name TEXT)",

    // Kernels (format version 2): what changes with every launch (times,
    // device, correlation id) is one narrow row in OVERLAPSCOPE_KERNEL; what
    // repeats (stream, names, launch configuration, graph node) is stored
    // once per distinct combination in OVERLAPSCOPE_KERNEL_LAUNCH. nsys's
    // CUPTI_ACTIVITY_KIND_KERNEL is a view joining the two, with nsys's
    // column names, so scripts written for nsys exports read it unchanged.
    // Why: a 5-column row inserts twice as fast as the 20-column one
    // (measured: 2.8-3.0 vs 1.45-1.66 M rows per CPU second), which is what
    // lets the agent's writer keep up with 2 M kernels/s on two cores; and a
    // kernel takes a third of the bytes on disk.
    "CREATE TABLE OVERLAPSCOPE_KERNEL_LAUNCH (id INTEGER NOT NULL PRIMARY KEY, "
    "contextId INTEGER, streamId INTEGER, globalPid INTEGER, "
    "demangledName INTEGER REFERENCES StringIds(id), "
    "shortName INTEGER REFERENCES StringIds(id), "
    "gridX INTEGER, gridY INTEGER, gridZ INTEGER, "
    "blockX INTEGER, blockY INTEGER, blockZ INTEGER, "
    "registersPerThread INTEGER, staticSharedMemory INTEGER, "
    "dynamicSharedMemory INTEGER, graphId INTEGER, graphNodeId INTEGER)",

    "CREATE TABLE OVERLAPSCOPE_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, "
    "correlationId INTEGER, launchId INTEGER REFERENCES OVERLAPSCOPE_KERNEL_LAUNCH(id))",

    "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS SELECT "
    "k.start AS start, k.end AS end, k.deviceId AS deviceId, l.contextId AS contextId, "
    "l.streamId AS streamId, k.correlationId AS correlationId, l.globalPid AS globalPid, "
    "l.demangledName AS demangledName, l.shortName AS shortName, "
    "l.gridX AS gridX, l.gridY AS gridY, l.gridZ AS gridZ, "
    "l.blockX AS blockX, l.blockY AS blockY, l.blockZ AS blockZ, "
    "l.registersPerThread AS registersPerThread, l.staticSharedMemory AS staticSharedMemory, "
    "l.dynamicSharedMemory AS dynamicSharedMemory, l.graphId AS graphId, "
    "l.graphNodeId AS graphNodeId "
    "FROM OVERLAPSCOPE_KERNEL AS k JOIN OVERLAPSCOPE_KERNEL_LAUNCH AS l ON l.id = k.launchId",

    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, "
    "deviceId INTEGER, contextId INTEGER, streamId INTEGER, "
    "correlationId INTEGER, globalPid INTEGER, bytes INTEGER, "
    "copyKind INTEGER REFERENCES ENUM_CUDA_MEMCPY_OPER(id), "
    "srcKind INTEGER REFERENCES ENUM_CUDA_MEM_KIND(id), "
    "dstKind INTEGER REFERENCES ENUM_CUDA_MEM_KIND(id), srcDeviceId INTEGER, dstDeviceId INTEGER)",

    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER, end INTEGER, "
    "deviceId INTEGER, contextId INTEGER, streamId INTEGER, "
    "correlationId INTEGER, globalPid INTEGER, value INTEGER, bytes INTEGER)",

    // streamId and eventId are NULL where CUPTI says "not applicable".
    "CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER, "
    "end INTEGER, deviceId INTEGER, contextId INTEGER, "
    "streamId INTEGER, correlationId INTEGER, globalPid INTEGER, "
    "syncType INTEGER REFERENCES ENUM_CUPTI_SYNC_TYPE(id), eventId INTEGER)",

    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, "
    "eventClass INTEGER REFERENCES ENUM_NSYS_EVENT_CLASS(id), "
    "globalTid INTEGER, correlationId INTEGER, nameId INTEGER REFERENCES StringIds(id), "
    "returnValue INTEGER)",

    // overlapscopeOnGpu is ours: 1 for annotations already on GPU time
    // (Kineto gpu_user_annotation), so they survive a write/read round trip.
    "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, "
    "eventType INTEGER REFERENCES ENUM_NSYS_EVENT_TYPE(id), rangeId INTEGER, "
    "category INTEGER, color INTEGER, text TEXT, textId INTEGER REFERENCES StringIds(id), "
    "globalTid INTEGER, endGlobalTid INTEGER, domainId INTEGER, jsonText TEXT, "
    "overlapscopeOnGpu INTEGER)",

    "CREATE TABLE OVERLAPSCOPE_META (name TEXT NOT NULL PRIMARY KEY, value TEXT)",

    // func/datatype/algo/proto as text: few rows, and readable from the sqlite3 shell.
    // Times NULL where unknown; commHash is the unsigned hash stored as its
    // two's-complement signed 64-bit value.
    "CREATE TABLE OVERLAPSCOPE_NCCL_COLL (globalPid INTEGER, deviceId INTEGER, "
    "commHash INTEGER NOT NULL, rank INTEGER, nranks INTEGER, seqNumber INTEGER, func TEXT, "
    "count INTEGER, datatype TEXT, bytes INTEGER, root INTEGER, algo TEXT, proto TEXT, "
    "nChannels INTEGER, enqueue INTEGER, gpuStart INTEGER, gpuEnd INTEGER)",

    // Stream names (nvtxNameCudaStream, importers).
    "CREATE TABLE OVERLAPSCOPE_STREAM_NAME (globalPid INTEGER, deviceId INTEGER NOT NULL, "
    "streamId INTEGER NOT NULL, name TEXT NOT NULL)",

    // nsys's table of thread names (nvtxNameOsThread).
    "CREATE TABLE ThreadNames (nameId INTEGER NOT NULL REFERENCES StringIds(id), "
    "priority INTEGER, globalTid INTEGER)",

    // CUPTI CUDA_EVENT records: the stream that recorded each event, which
    // stream-wait-event sync rows (eventId) then wait for. deviceTimestamp is
    // NULL unless CUPTI collected it; cudaEventSyncId (CUPTI 13) tells apart
    // successive records of one event.
    "CREATE TABLE OVERLAPSCOPE_CUDA_EVENT (deviceTimestamp INTEGER, deviceId INTEGER, "
    "contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, "
    "eventId INTEGER, cudaEventSyncId INTEGER)",

    // NVTX names of processes, devices and contexts (objectKind 'process',
    // 'device', 'context'); ids that do not apply to the kind are NULL.
    "CREATE TABLE OVERLAPSCOPE_OBJECT_NAME (globalPid INTEGER, objectKind TEXT NOT NULL, "
    "deviceId INTEGER, contextId INTEGER, name TEXT NOT NULL)",
};
const int kCreateTableCount = sizeof kCreateTables / sizeof kCreateTables[0];

// Built at close: building them while rows stream in would slow every insert.
const char* const kCreateIndexes[] = {
    // Queries through the CUPTI_ACTIVITY_KIND_KERNEL view use this one too.
    "CREATE INDEX IF NOT EXISTS kernel_device_start ON OVERLAPSCOPE_KERNEL (deviceId, start)",
    "CREATE INDEX IF NOT EXISTS memcpy_device_start ON CUPTI_ACTIVITY_KIND_MEMCPY (deviceId, start)",
    "CREATE INDEX IF NOT EXISTS memset_device_start ON CUPTI_ACTIVITY_KIND_MEMSET (deviceId, start)",
    "CREATE INDEX IF NOT EXISTS sync_device_start ON CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (deviceId, start)",
};
const int kCreateIndexCount = sizeof kCreateIndexes / sizeof kCreateIndexes[0];

namespace {

const EnumValue kMemcpyOper[] = {
    {0, "CUDA_MEMCPY_KIND_UNKNOWN", "Unknown"},       {1, "CUDA_MEMCPY_KIND_HTOD", "Host-to-Device"},
    {2, "CUDA_MEMCPY_KIND_DTOH", "Device-to-Host"},   {3, "CUDA_MEMCPY_KIND_HTOA", "Host-to-Array"},
    {4, "CUDA_MEMCPY_KIND_ATOH", "Array-to-Host"},    {5, "CUDA_MEMCPY_KIND_ATOA", "Array-to-Array"},
    {6, "CUDA_MEMCPY_KIND_ATOD", "Array-to-Device"},  {7, "CUDA_MEMCPY_KIND_DTOA", "Device-to-Array"},
    {8, "CUDA_MEMCPY_KIND_DTOD", "Device-to-Device"}, {9, "CUDA_MEMCPY_KIND_HTOH", "Host-to-Host"},
    {10, "CUDA_MEMCPY_KIND_PTOP", "Peer-to-Peer"},
};

const EnumValue kMemKind[] = {
    {0, "CUDA_MEMOPR_MEMORY_KIND_UNKNOWN", "Unknown"},
    {1, "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", "Pageable"},
    {2, "CUDA_MEMOPR_MEMORY_KIND_PINNED", "Pinned"},
    {3, "CUDA_MEMOPR_MEMORY_KIND_DEVICE", "Device"},
    {4, "CUDA_MEMOPR_MEMORY_KIND_ARRAY", "Array"},
    {5, "CUDA_MEMOPR_MEMORY_KIND_MANAGED", "Managed"},
    {6, "CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC", "Device Static"},
    {7, "CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC", "Managed Static"},
};

const EnumValue kSyncType[] = {
    {0, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN", "Unknown"},
    {1, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE", "Event sync"},
    {2, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT", "Stream wait event"},
    {3, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE", "Stream sync"},
    {4, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE", "Context sync"},
};

// Only the NVTX codes we write or read.
const EnumValue kEventType[] = {
    {33, "NvtxCategory", "NVTX Category"},
    {34, "NvtxMark", "NVTX Mark"},
    {39, "NvtxThread", "NVTX Thread"},
    {59, "NvtxPushPopRange", "NVTX PushPop Range"},
    {60, "NvtxStartEndRange", "NVTX StartEnd Range"},
    {75, "NvtxDomainCreate", "NVTX Domain Create"},
    {76, "NvtxDomainDestroy", "NVTX Domain Destroy"},
};

const EnumValue kEventClass[] = {
    {kEventClassRuntime, "TRACE_PROCESS_EVENT_CUDA_RUNTIME", "CUDA Runtime API"},
    {kEventClassDriver, "TRACE_PROCESS_EVENT_CUDA_DRIVER", "CUDA Driver API"},
};

template <int N>
constexpr EnumTable table(const char* name, const EnumValue (&values)[N]) {
    return EnumTable{name, values, N};
}

}  // namespace

const EnumTable kEnumTables[] = {
    table("ENUM_CUDA_MEMCPY_OPER", kMemcpyOper), table("ENUM_CUDA_MEM_KIND", kMemKind),
    table("ENUM_CUPTI_SYNC_TYPE", kSyncType),    table("ENUM_NSYS_EVENT_TYPE", kEventType),
    table("ENUM_NSYS_EVENT_CLASS", kEventClass),
};
const int kEnumTableCount = sizeof kEnumTables / sizeof kEnumTables[0];

}  // namespace osc::schema
