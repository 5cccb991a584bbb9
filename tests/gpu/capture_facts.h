// What the GPU kit and the replay tests read off a capture of a reference
// workload: kernels against the launch calls that started them, NCCL kernels
// against the classification, steps, collectives per step and overlap. One
// definition, so a live capture on the GPU machine and its replayed
// recording in CI are judged the same way.
#pragma once

#include "analyzer/capture/model.h"
#include "analyzer/metrics/analysis.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace osc::gpukit {

struct ProcessFacts {
    int rank = -1;
    int64_t pid = 0;
    size_t kernels = 0;
    size_t graphKernels = 0;          // kernels launched from a CUDA graph (graphId != 0)
    size_t ncclKernels = 0;           // name starts with "nccl"
    size_t ncclAsCommunication = 0;   // of those, classified as communication
    size_t otherAsCommunication = 0;  // non-NCCL kernels classified as communication (should be 0)
    size_t launchCalls = 0;           // successful kernel and graph launch API calls
    size_t graphLaunchCalls = 0;
    // Launch calls made while their thread was capturing a CUDA graph: they
    // run no kernel of their own (the graph's launch does), so they are
    // counted here and not as missing.
    size_t launchesCapturedIntoGraph = 0;
    // Other launch calls with no kernel of the same correlation id, by API name.
    std::map<std::string, size_t> launchesWithoutKernel;
    std::map<std::string, std::string> meta;  // dropped_records, end_reason, cupti_version...
};

struct DeviceFacts {
    int rank = -1;
    uint32_t device = 0;
    size_t steps = 0;
    std::vector<int> collectivesPerStep;  // communication operations inside each step
    double stepOverlapMedian = 0;         // median over steps of the overlap ratio (0 when none)
    double exposedCommMsMedian = 0;
    double stepMsMedian = 0;  // GPU window of a step
};

struct CaptureFacts {
    std::vector<ProcessFacts> processes;
    std::vector<DeviceFacts> devices;
    // Point-to-point: NCCL plugin rows of sends and receives, the sends the
    // analysis paired with their receives, and SendRecv kernels no row or
    // trace argument gave a peer.
    size_t pluginP2pRows = 0;
    size_t p2pTransfers = 0;
    size_t sendRecvKernelsWithoutPeers = 0;
    double overlapMean() const;  // stepOverlapMedian averaged over devices
};

// Kernel and graph launch API names (cudaLaunchKernel_v7000, cuLaunchKernelEx, cudaGraphLaunch_v10000...),
// as the agent reads them (analyzer/capture/api_call_names.h).
bool isLaunchCall(std::string_view apiName);
bool isGraphLaunchCall(std::string_view apiName);
// cudaStreamBeginCapture_v10000, cuStreamBeginCapture_v2...; and the end of a capture.
bool isBeginCaptureCall(std::string_view apiName);
bool isEndCaptureCall(std::string_view apiName);
// The classification rule's name test, spelled out independently of the classifier.
bool looksNccl(std::string_view kernelName);

CaptureFacts captureFacts(const Capture& capture, const Analysis& analysis);

}  // namespace osc::gpukit
