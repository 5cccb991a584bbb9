// Builds capture Processes from parsed Kineto events: the field mapping of
// docs/formats.md ("kernel" -> kernels, "gpu_memcpy" -> copies, ...), then the
// rebasing of times so the earliest event of the file is at 0.
#pragma once

#include "analyzer/capture/load_options.h"
#include "analyzer/capture/model.h"
#include "analyzer/import/kineto_comm_args.h"
#include "analyzer/import/kineto_event.h"
#include "analyzer/import/kineto_group_calls.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace osc::kineto {

// Distinct launch shapes, numbered as first met.
class LaunchShapes {
public:
    uint32_t id(const LaunchShape& shape) {
        if (!shapes_.empty() && shape == shapes_[last_]) return last_;  // kernels come in runs
        const auto [it, added] = ids_.try_emplace(shape, static_cast<uint32_t>(shapes_.size()));
        if (added) shapes_.push_back(shape);
        last_ = it->second;
        return last_;
    }
    const std::vector<LaunchShape>& shapes() const { return shapes_; }

private:
    std::unordered_map<LaunchShape, uint32_t, WordsHash> ids_;
    std::vector<LaunchShape> shapes_;
    uint32_t last_ = 0;
};

// How much of a file is still to come, as CaptureBuilder::absorb may guess it.
struct RoomAhead {
    double growth = 1;        // the file's rows over those absorbed so far, about
    double contentBytes = 0;  // the file's content, about: no column holds more bytes
};

class CaptureBuilder : public Sink {
public:
    // `tick` runs every few thousand events (progress, cancellation).
    CaptureBuilder(Capture& capture, std::string path, std::function<void()> tick);

    // Without launch details, kernels keep none of them, grid and block
    // included, as the SQLite reader leaves them (LoadOptions::launchDetails);
    // otherwise only their grid and block where asked
    // (LoadOptions::launchShapeOnly). With `analysisOnly`, the columns the
    // analysis does not read stay empty (LoadOptions::analysisOnly).
    void keep(const LoadOptions& options) {
        launchDetails_ = options.launchDetails;
        launchShapeOnly_ = options.launchShapeOnly;
        analysisOnly_ = options.analysisOnly;
    }

    void onEvent(const Event& event) override;
    void onDistributedInfo(int64_t rank, int64_t worldSize) override;
    void onDeviceProperties(const DeviceProperties& device) override;
    void onProcessInfo(const ProcessInfo& process) override;
    void onBaseTimeNs(int64_t baseTimeNs) override;
    void onTopLevelScalar(const std::string& key, const std::string& value) override;

    // Rebases times, attaches GPU properties and moves the processes into the
    // capture. Call once, after a successful parse.
    void finish();

    // For one stretch of the traceEvents array read on another thread: a
    // builder that interns into `local`'s strings and starts from what this
    // one knows now (the processes named so far, the rank), with no progress
    // of its own. absorb() then appends what it built, stretch by stretch in
    // file order, so the result is what one builder reading every event in
    // turn would have made (kineto_builder_merge.cpp).
    std::unique_ptr<CaptureBuilder> forPiece(Capture& local) const;
    // A table that must move anyway makes room for `room.growth` times its
    // rows.
    void absorb(CaptureBuilder& piece, const RoomAhead& room = {});

private:
    // Two records per collective (operator and kernel): bounded memory on hostile input.
    static constexpr size_t kMaxGroupRecordsPerProcess = 16u << 20;

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
    bool launchDetails_ = true, launchShapeOnly_ = false, analysisOnly_ = false;
    // Under analysisOnly_: every kernel's launch shape, numbered (KernelTable::shape).
    LaunchShapes shapes_;
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
