// One trace event as the Kineto parser hands it over: the fields we use,
// already checked and converted (times in integer ns). Reused for every event
// so that parsing allocates nothing per event once the buffers have grown.
#pragma once

#include <cstdint>
#include <string>

namespace osc::kineto {

inline constexpr int64_t kAbsent = -1;

// The collective arguments PyTorch puts on NCCL kernels and on the
// record_param_comms / nccl:* operators that launch them (torch.profiler with
// distributed: "Collective name", "In msg nelems", "Src Rank", ...). Numbers
// may be written as JSON numbers or as strings; lists ("[0, 1]") as strings.
struct CommArgs {
    std::string collective, dtype, inSplit, outSplit, groupName, groupRanks;
    int64_t inNelems = kAbsent, outNelems = kAbsent, groupSize = kAbsent;
    int64_t srcRank = kAbsent, dstRank = kAbsent;
    int64_t seq = kAbsent;  // "Seq": the process group's count of its collectives

    void clear() {
        collective.clear();
        dtype.clear();
        inSplit.clear();
        outSplit.clear();
        groupName.clear();
        groupRanks.clear();
        inNelems = outNelems = groupSize = srcRank = dstRank = seq = kAbsent;
    }
};

struct Event {
    std::string ph, cat, name;
    // args.name: what a metadata event ("ph":"M", "thread_name") names.
    std::string argName;
    // pid/tid as numbers; kAbsent when missing or not numeric ("Spans").
    int64_t pid = kAbsent, tid = kAbsent;
    bool hasTs = false, hasDur = false;
    int64_t tsNs = 0, durNs = 0;
    // args; kAbsent when missing or not a non-negative integer.
    int64_t device = kAbsent, stream = kAbsent, correlation = kAbsent, bytes = kAbsent;
    int64_t registers = kAbsent, sharedMemory = kAbsent;
    int64_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
    CommArgs comm;

    void clear() {
        ph.clear();
        cat.clear();
        name.clear();
        argName.clear();
        pid = tid = kAbsent;
        hasTs = hasDur = false;
        tsNs = durNs = 0;
        device = stream = correlation = bytes = registers = sharedMemory = kAbsent;
        for (int i = 0; i < 3; ++i) grid[i] = block[i] = 0;
        comm.clear();
    }
};

// A GPU listed under the top-level "deviceProperties".
struct DeviceProperties {
    int64_t id = kAbsent;
    std::string name;
    int64_t totalMemory = 0, smCount = 0, computeMajor = 0, computeMinor = 0;
};

// One entry of "overlapscopeProcesses", written by our Chrome export so that a
// multi-rank export reads back as several processes (events carry the pid).
struct ProcessInfo {
    int64_t tracePid = kAbsent;
    int64_t pid = 0, rank = -1, localRank = -1, worldSize = -1;
    std::string host, name;
};

// Receives what the parser finds, in file order.
class Sink {
public:
    virtual ~Sink() = default;
    virtual void onEvent(const Event& event) = 0;
    virtual void onDistributedInfo(int64_t rank, int64_t worldSize) = 0;
    virtual void onDeviceProperties(const DeviceProperties& device) = 0;
    virtual void onProcessInfo(const ProcessInfo& process) = 0;
    virtual void onBaseTimeNs(int64_t baseTimeNs) = 0;
    virtual void onTopLevelScalar(const std::string& key, const std::string& value) = 0;
};

}  // namespace osc::kineto
