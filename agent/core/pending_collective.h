// A collective, send or receive from the NCCL plugin, as it waits to be
// written: what the plugin hands the agent, plain data.
#pragma once

#include "analyzer/capture/capture_writer.h"

#include <functional>
#include <string>
#include <vector>

namespace osc::agent {

// A collective from the NCCL plugin with its strings owned, so it can wait in
// a queue after NCCL's descriptor is gone.
struct PendingCollective {
    // String views are re-pointed at the fields below on write; times are
    // CLOCK_REALTIME ns (-1 unknown) and become capture-relative on write.
    CollectiveRow row;
    std::string func, datatype, algo, proto;

    // The row to write into a capture whose time 0 is `originUtcNs`: views
    // at this object's strings (valid while it lives), times since time 0.
    CollectiveRow rowFrom(int64_t originUtcNs) const {
        CollectiveRow r = row;
        r.func = func;
        r.datatype = datatype;
        r.algo = algo;
        r.proto = proto;
        for (TimeNs* t : {&r.enqueue, &r.gpuStart, &r.gpuEnd})
            if (*t >= 0) *t -= originUtcNs;
        return r;
    }
};

// The NCCL plugin's operations still running, as rows without a GPU end
// (their GPU start when a channel started): written when a capture closes,
// so that a capture of a hung job says which collective each rank waits in.
using OpenCollectives = std::function<std::vector<PendingCollective>()>;

}  // namespace osc::agent
