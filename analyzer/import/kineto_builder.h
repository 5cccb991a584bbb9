// Builds capture Processes from parsed Kineto events: the field mapping of
// docs/formats.md ("kernel" -> kernels, "gpu_memcpy" -> copies, ...), then the
// rebasing of times so the earliest event of the file is at 0.
#pragma once

#include "analyzer/capture/model.h"
#include "analyzer/import/kineto_comm_args.h"
#include "analyzer/import/kineto_event.h"
#include "analyzer/import/kineto_group_calls.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace osc::kineto {

class CaptureBuilder : public Sink {
public:
    // `tick` runs every few thousand events (progress, cancellation).
    CaptureBuilder(Capture& capture, std::string path, std::function<void()> tick);

    void onEvent(const Event& event) override;
    void onDistributedInfo(int64_t rank, int64_t worldSize) override;
    void onDeviceProperties(const DeviceProperties& device) override;
    void onProcessInfo(const ProcessInfo& process) override;
    void onBaseTimeNs(int64_t baseTimeNs) override;
    void onTopLevelScalar(const std::string& key, const std::string& value) override;

    // Rebases times, attaches GPU properties and moves the processes into the
    // capture. Call once, after a successful parse.
    void finish();

private:
    Process& processFor(int64_t tracePid);
    Device& deviceFor(Process& process, int64_t device);
    void addCollective(Process& process, const Event& event, int64_t device, TimeNs start, TimeNs end);
    // Appends the event to `into`'s list for `process` (bounded); `device`
    // kNoId for an operator.
    void keepRecord(std::vector<std::vector<PendingGroupCall>>& into, Process& process, const Event& event,
                    uint32_t device, TimeNs start, TimeNs end);
    // A CPU operator or range: kept when it carries PyTorch's collective
    // arguments (a group call, or sends and receives to join to a kernel).
    void keepCommOperator(Process& process, const Event& event, TimeNs start, TimeNs end);
    // A CPU or GPU range, or a CPU operator (the same columns).
    void appendRange(RangeTable& table, const Event& event, TimeNs start, TimeNs end, bool onGpu);

    Capture& capture_;
    std::string path_;
    std::function<void()> tick_;
    uint64_t events_ = 0;
    std::vector<Process> processes_;
    std::map<int64_t, size_t> processByTracePid_;  // from "overlapscopeProcesses"
    std::map<int64_t, GpuInfo> gpus_;
    std::map<std::string, std::string> meta_;
    int64_t distRank_ = -1, distWorldSize_ = -1;
    int64_t baseTimeNs_ = 0;
    int64_t minTs_ = INT64_MAX;
    uint64_t kernels_ = 0;
    // Per process (index into processes_): NCCL kernels with PyTorch's
    // send/receive arguments, turned into rows once the rank is known.
    std::vector<std::vector<PendingComm>> pendingComm_;
    // Per process: send/receive and all-to-all operators, joined to their
    // kernels at the end (kineto_p2p_operators.h).
    std::vector<std::vector<PendingGroupCall>> pendingP2pOperators_;
    // Per process: operators and kernels that carry PyTorch's (group, Seq).
    std::vector<std::vector<PendingGroupCall>> pendingGroup_;
};

}  // namespace osc::kineto
