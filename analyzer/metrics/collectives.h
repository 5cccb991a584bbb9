// Communication operations of one device: one CollectiveInstance per
// communication kernel or copy, with overlapped/exposed time and, where the
// NCCL profiler plugin recorded the collective, its bytes and identity.
#pragma once

#include "analyzer/metrics/coverage.h"

#include <vector>

namespace osc {

// Start-sorted communication operations of `device`, with duration,
// overlapped (|op ∩ C|) and exposed (duration − overlapped) time.
std::vector<CollectiveInstance> collectCommOps(const Capture& capture, const Device& device,
                                               ActivityClassifier& classifier, const DeviceCoverage& coverage);

// Attaches NCCL plugin rows (Process::collectives) to the device's kernel
// operations. Rule (docs/metrics.md "Matching plugin rows"):
// 1. rows of this device (row device == device id, or unknown when the process
//    has one device) with a GPU start time go to the communication kernel
//    whose [start, end] contains that GPU start;
// 2. the remaining rows go, per collective type in enqueue order, to the
//    still-unmatched kernels of that type in start order.
// Several rows on one kernel (grouped calls fused into one kernel) add bytes;
// the first row gives commHash, seqNumber, algo and proto.
void attachPluginRows(const Capture& capture, const Process& process, const Device& device,
                      std::vector<CollectiveInstance>& ops);

}  // namespace osc
