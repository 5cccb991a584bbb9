// Correlation ids to rows, for the flow arrows (gui/model/flows.h) and the
// "launched by" line of Details: one lookup instead of a scan of every call.
#pragma once

#include "analyzer/capture/model.h"
#include "analyzer/metrics/steps.h"
#include "gui/model/event_row.h"

#include <utility>
#include <vector>

namespace osc::gui {

// Correlation ids to rows, per process (API calls) and per device (GPU
// work), built once; empty for a process without API calls.
class FlowIndex {
public:
    FlowIndex() = default;
    explicit FlowIndex(const Capture& capture);

    // API call row of the process with this correlation id, or -1.
    int32_t apiCall(size_t process, uint32_t correlation) const;
    // GPU work of a device: (source, row), or source Range when none.
    std::pair<EventSource, uint32_t> gpuWork(size_t process, size_t device, uint32_t correlation) const;

private:
    struct PerProcess {
        CorrelationMap api;
        std::vector<CorrelationMap> devices;  // value: row * 4 + source (0 kernel, 1 copy, 2 memset)
    };
    std::vector<PerProcess> processes_;
};

}  // namespace osc::gui
