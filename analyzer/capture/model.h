// The in-memory capture model every reader fills and every consumer reads.
//
// Storage is columnar and per device (Perfetto/Tracy style): each table is a
// struct of vectors, sorted by start time once loading ends. Times are int64
// nanoseconds on the capture's common timeline: ns since Capture::originUtcNs,
// so ranks recorded in different processes line up.
#pragma once

#include "analyzer/capture/string_table.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace osc {

using TimeNs = int64_t;
inline constexpr uint32_t kNoId = 0xFFFFFFFFu;  // CUPTI's "not applicable"

// CUPTI_ACTIVITY_MEMCPY_KIND values (ENUM_CUDA_MEMCPY_OPER).
enum class CopyKind : uint8_t {
    Unknown = 0,
    HtoD = 1,
    DtoH = 2,
    HtoA = 3,
    AtoH = 4,
    AtoA = 5,
    AtoD = 6,
    DtoA = 7,
    DtoD = 8,
    HtoH = 9,
    PtoP = 10,
};
// CUPTI_ACTIVITY_MEMORY_KIND values (ENUM_CUDA_MEM_KIND).
enum class MemKind : uint8_t {
    Unknown = 0,
    Pageable = 1,
    Pinned = 2,
    Device = 3,
    Array = 4,
    Managed = 5,
    DeviceStatic = 6,
    ManagedStatic = 7,
};
// CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE values (ENUM_CUPTI_SYNC_TYPE).
enum class SyncType : uint8_t {
    Unknown = 0,
    EventSynchronize = 1,
    StreamWaitEvent = 2,
    StreamSynchronize = 3,
    ContextSynchronize = 4,
};

// A kernel's grid x, y, z and block x, y, z.
using LaunchShape = std::array<uint32_t, 6>;

// FNV-1a over a fixed run of 32-bit words: hashes launch shapes, and the
// interference signatures made of a name id and a shape.
struct WordsHash {
    template <size_t N>
    size_t operator()(const std::array<uint32_t, N>& words) const {
        uint64_t h = 1469598103934665603ull;
        for (const uint32_t v : words) h = (h ^ v) * 1099511628211ull;
        return static_cast<size_t>(h);
    }
};

struct KernelTable {
    std::vector<TimeNs> start, end;
    std::vector<uint32_t> stream, correlation;
    std::vector<uint32_t> name;       // StringTable id of the demangled name
    std::vector<uint32_t> shortName;  // StringTable id
    std::vector<uint32_t> gridX, gridY, gridZ, blockX, blockY, blockZ;
    std::vector<uint32_t> registersPerThread, staticSharedMemory, dynamicSharedMemory;
    std::vector<uint32_t> graphId;
    std::vector<uint64_t> graphNodeId;
    // Loaded for the analysis only (LoadOptions::analysisOnly), a reader may
    // leave the grid and block columns empty and give each kernel's shape
    // here, as an index into `shapes`: a trace launches a few hundred
    // distinct shapes, and 24 bytes a kernel become 4.
    std::vector<uint32_t> shape;
    std::vector<LaunchShape> shapes;

    size_t size() const { return start.size(); }
    // Kernel i's grid and block from whichever columns hold them; 0 where
    // none does.
    LaunchShape launchShape(size_t i) const;
    void reserve(size_t n);
    void sortByStart();
};

struct CopyTable {
    std::vector<TimeNs> start, end;
    std::vector<uint32_t> stream, correlation;
    std::vector<uint64_t> bytes;
    std::vector<CopyKind> copyKind;
    std::vector<MemKind> srcKind, dstKind;
    std::vector<uint32_t> srcDevice, dstDevice;

    size_t size() const { return start.size(); }
    void sortByStart();
};

struct MemsetTable {
    std::vector<TimeNs> start, end;
    std::vector<uint32_t> stream, correlation;
    std::vector<uint64_t> bytes;
    std::vector<uint32_t> value;

    size_t size() const { return start.size(); }
    void sortByStart();
};

struct SyncTable {
    std::vector<TimeNs> start, end;
    std::vector<uint32_t> stream, correlation;  // stream kNoId for context/event syncs
    std::vector<SyncType> type;
    std::vector<uint32_t> eventId;

    size_t size() const { return start.size(); }
    void sortByStart();
};

// Host-side runtime and driver API calls (CUPTI_ACTIVITY_KIND_RUNTIME).
enum class ApiKind : uint8_t { Runtime = 0, Driver = 1 };
struct ApiCallTable {
    std::vector<TimeNs> start, end;
    std::vector<uint64_t> globalTid;
    std::vector<uint32_t> correlation;
    std::vector<uint32_t> name;  // StringTable id
    std::vector<int32_t> returnValue;
    std::vector<ApiKind> kind;

    size_t size() const { return start.size(); }
    void sortByStart();
};

// NVTX ranges and marks (NVTX_EVENTS). Marks have end == start.
enum class RangeKind : uint8_t { PushPop = 0, StartEnd = 1, Mark = 2 };
struct RangeTable {
    std::vector<TimeNs> start, end;
    std::vector<uint32_t> name;  // StringTable id
    std::vector<uint64_t> globalTid;
    std::vector<uint32_t> domain;  // StringTable id of the domain name, kNoId = default
    std::vector<uint32_t> category, color;
    std::vector<RangeKind> kind;
    // Ranges from a GPU-side source (Kineto gpu_user_annotation): already on GPU time.
    std::vector<uint8_t> onGpu;

    size_t size() const { return start.size(); }
    void sortByStart();
};

// Host-side operators of a PyTorch trace (Kineto "cpu_op"): a RangeTable
// without the NVTX columns (domain, category, color, kind, side), which no
// operator has: a large trace holds one operator per kernel launch, and
// those columns were 14 of its 42 bytes.
struct CpuOpTable {
    std::vector<TimeNs> start, end;
    std::vector<uint32_t> name;  // StringTable id
    std::vector<uint64_t> globalTid;

    size_t size() const { return start.size(); }
    void sortByStart();
};

// One row per collective from the NCCL profiler plugin (OVERLAPSCOPE_NCCL_COLL).
// Times are -1 where unknown.
struct CollectiveTable {
    std::vector<uint64_t> commHash;
    std::vector<int32_t> rank, nranks;
    std::vector<uint64_t> seqNumber;
    std::vector<uint32_t> func, datatype, algo, proto;  // StringTable ids
    std::vector<uint64_t> count, bytes;
    std::vector<int32_t> root, nChannels;
    std::vector<uint32_t> device;  // CUDA device ordinal, kNoId if unknown
    std::vector<TimeNs> enqueue, gpuStart, gpuEnd;
    // Whether Send/Recv rows' seqNumber counts per communicator, peer and
    // direction (the agent's plugin, synth): false for rows made from
    // PyTorch trace arguments, which number nothing (docs/metrics.md 7d).
    bool p2pNumbered = true;

    size_t size() const { return commHash.size(); }
    void sortByEnqueue();
};

// One collective as PyTorch numbers it (profiler traces: "Process Group
// Name" and "Seq" on its record_param_comms / nccl:* operator or kernel).
// Seq counts every collective of the group, from 1, on every member alike,
// so it names the same call on each rank wherever their traces begin;
// without it (seqFromOrder) the group's calls are numbered in trace order.
struct GroupCall {
    uint32_t group = 0;       // StringTable id: the group's name, else its rank list
    uint32_t collective = 0;  // StringTable id: PyTorch's name ("allreduce")
    uint32_t dtype = 0;       // StringTable id; "" unknown
    uint64_t seq = 0;
    // The trace carried no "Seq" (PyTorch 2.11 writes none): `seq` is the
    // call's place among the group's calls in this trace, from 0.
    bool seqFromOrder = false;
    uint64_t bytes = 0;  // 0 unknown
    int32_t groupSize = -1;
    int32_t groupRank = -1;  // this process's rank in the group; -1 unknown
    TimeNs entered = 0;      // the operator's start, else the kernel's
    // Its kernel, where one ran (none: launched, never finished, or lost).
    uint32_t device = kNoId;
    std::optional<TimeNs> gpuStart, gpuEnd;
};

struct GpuInfo {
    uint32_t id = 0;  // CUDA device ordinal inside the process
    std::string name, busLocation, uuid;
    uint64_t totalMemory = 0;
    int smCount = 0, computeMajor = 0, computeMinor = 0;
};

// One GPU as seen by one process: the unit every metric is computed on.
struct Device {
    uint32_t id = 0;  // deviceId in the capture
    GpuInfo gpu;
    KernelTable kernels;
    CopyTable copies;
    MemsetTable memsets;
    SyncTable syncs;
    // Stream names set through NVTX (nvtxNameCudaStream) or by an importer.
    std::map<uint32_t, std::string> streamNames;

    // [first start, last end] of all GPU activity; {0,0} when empty.
    std::pair<TimeNs, TimeNs> span() const;
};

// One process (one rank): one capture file, or one process inside an nsys export.
struct Process {
    std::string sourcePath;  // file it came from
    std::string host;
    int64_t pid = 0;
    int rank = -1, localRank = -1, worldSize = -1;
    std::string name;  // executable or command line
    // Wall-clock ns of this file's time 0, as read. loadCaptures() shifts every
    // timestamp by (sessionStartUtcNs - Capture::originUtcNs) and records that
    // shift in timeOffsetNs.
    int64_t sessionStartUtcNs = 0;
    TimeNs timeOffsetNs = 0;
    std::map<std::string, std::string> meta;  // OVERLAPSCOPE_META / META_DATA_EXPORT
    std::vector<Device> devices;              // sorted by id
    ApiCallTable apiCalls;
    RangeTable ranges;
    // Host-side operators of a PyTorch trace (Kineto "cpu_op": aten::mm,
    // autograd nodes), per thread, for the GUI's CPU lanes and to name idle
    // time (lead_up.h); steps still come from `ranges` only.
    CpuOpTable cpuOps;
    CollectiveTable collectives;
    // Host thread names by globalTid (nsys ThreadNames, which our captures
    // copy; PyTorch "thread_name" metadata), for the GUI's CPU lanes only.
    std::map<uint64_t, std::string> threadNames;
    std::vector<GroupCall> groupCalls;  // PyTorch traces naming process groups; by (group, seq)

    Device& deviceById(uint32_t id);  // creates it when absent
    // A device is a GPU the process ran work on (a kernel, copy or memset).
    // Exports also hold rows of GPUs a process only touched: a context made
    // on GPU 0 before the rank picked its own GPU leaves synchronisations
    // there. Such a device would be reported with no work, take the
    // process's host lanes and count in every total over devices.
    void dropDevicesWithoutWork();
    const Device* findDevice(uint32_t id) const;
    std::string label() const;  // "rank 3 (host:pid)" or "host:pid"
};

struct Capture {
    std::vector<std::string> sourcePaths;
    int64_t originUtcNs = 0;  // wall-clock ns of time 0 on the capture timeline
    StringTable strings;      // shared by all processes
    std::vector<Process> processes;
    std::vector<std::string> warnings;  // shown to the user once, after loading
    // Our capture files that did not finish and saved nothing (killed, or
    // the disk filled up, before any activity was committed): a report names
    // them, and has nothing to say when every input is one.
    std::vector<std::string> savedNothing;

    size_t kernelCount() const;
    // Puts every process on the common timeline: origin = earliest session start.
    void alignProcesses();
    // Moves every time of process `index` by `by` (recorded in its timeOffsetNs).
    void shiftProcess(size_t index, TimeNs by);
    // Sorts every table and orders processes by rank, then host and pid.
    void finalize();
};

// What the reader, and a report, say of a file in Capture::savedNothing.
std::string savedNothingWarning(const std::string& path);

}  // namespace osc
