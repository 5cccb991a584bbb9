// CPU lanes: per process, one lane per host thread holding its CUDA runtime
// and driver API calls and, from PyTorch traces, its operators (cpu_op),
// nested by time into rows (an API call under the operator that made it),
// like Nsight Systems' thread rows and Perfetto's thread tracks.
#pragma once

#include "analyzer/capture/model.h"
#include "gui/model/event_row.h"

#include <string>
#include <vector>

namespace osc::gui {

struct HostThreadLane {
    uint64_t globalTid = 0;
    // "pt_autograd_0 · tid 1222: 5402 ops, 1049 calls", or without a
    // thread name "CPU 1222: 5402 ops, 1049 calls".
    std::string label;
    std::vector<EventRow> rows;  // one per nesting depth, finished
    size_t events = 0;
};

// Deeper operators than this share the last row (autograd stacks run deep).
inline constexpr int kMaxHostDepth = 8;

// The process's threads with API calls or operators, the busiest first.
std::vector<HostThreadLane> buildHostLanes(const Process& process);

// "pt_autograd_0 · tid 1222" when the capture names the thread, else
// "CPU 1222" (the lane's label before its counts).
std::string hostThreadTitle(const Process& process, uint64_t globalTid);

// "1222": the thread id as nsys packs it (low 24 bits).
inline uint32_t threadIdOf(uint64_t globalTid) { return static_cast<uint32_t>(globalTid & 0xFFFFFFu); }

}  // namespace osc::gui
