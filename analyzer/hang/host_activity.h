// What a rank's host was last seen doing: its newest runtime or driver call,
// NVTX range and CPU operator (PyTorch traces), each with its times. A stuck
// rank's last records say where it stopped: in a data loader's range, in a
// synchronisation that never returned (that call has no record, so its last
// recorded call is the one before), or nowhere at all.
#pragma once

#include "analyzer/capture/model.h"
#include "analyzer/hang/rank_sequences.h"

namespace osc::hang {

HostActivity hostActivityOf(const Capture& capture, const Process& process);

}  // namespace osc::hang
