// docs/design.md 4d, the parts one device decides alone: how many bytes a
// collective moves in nccl-tests' terms, its bus factor, the peak bus
// bandwidth of a GPU's link, and the statistics the cross-rank half takes
// over a device's operations.
#pragma once

#include "analyzer/metrics/analysis.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace osc {

// nccl-tests' size of a collective, per rank: the larger of its send and
// receive buffers. The plugin's and PyTorch's byte counts are NCCL's `count`
// (the per-rank chunk of an AllGather, ReduceScatter or AllToAll), so those
// take n times it. Sends and receives count what the operation sent or
// received, whichever is more. Null without bytes, without n where it is
// needed, and for operations no factor describes (copies, unknown kernels).
std::optional<uint64_t> busBytes(const CollectiveInstance& op);

// nccl-tests' bus factor: AllReduce 2(n-1)/n; AllGather, ReduceScatter,
// AllToAll (n-1)/n; Broadcast, Reduce, Send, Recv, SendRecv 1. Null for
// other collectives, and where it depends on n and n is unknown (<= 0).
std::optional<double> busFactor(std::string_view collective, int ranks);
// The operation's factor: an all-to-all of grouped sends and receives
// (CollectiveInstance::allToAll) is an AllToAll, n its communicator's size.
std::optional<double> busFactor(const CollectiveInstance& op);

// A GPU model's link and its peak bus bandwidth in GB/s: the unidirectional
// bandwidth per GPU of its NVLink generation, or PCIe for PCIe boards
// (docs/metrics.md section 7g has the table). Null for a model not in it.
struct LinkPeak {
    std::string link;  // "NVLink 4 (H100 SXM)"
    double gbps = 0;
};
std::optional<LinkPeak> linkOfGpu(std::string_view gpuName);

// The size class of `bytes`: the largest power of two not above it (0 for 0).
uint64_t sizeClassOf(uint64_t bytes);

// Element floor((n-1)/2) of the sorted values (a value that occurred); null
// when empty. Reorders `values`.
std::optional<double> lowerMedianOrNull(std::vector<double>& values);

// The fraction of the peak at which an exposed collective counts as limited
// by bandwidth rather than by the schedule.
inline constexpr double kBandwidthLimitFraction = 0.8;

// The largest fraction of the peak an operation is given. NVLink SHARP lets
// an all-reduce's bus bandwidth pass the link's unidirectional peak by some
// percent; twice the peak is no measurement of that link: the peak is wrong
// (a table entry, --peak-busbw-gbps) or the transfer too short to time
// (clock skew between ranks). Such an operation has no fraction, and a
// saved report holding a larger one is refused.
inline constexpr double kMaxBusBwFraction = 2.0;

// Bandwidths no operation can show: a 64-bit byte count over a 1 ns transfer,
// times the largest bus factor, stays below this (GB/s). Larger values in a
// saved report are refused (the report reader).
inline constexpr double kMaxGbps = 1e20;

}  // namespace osc
