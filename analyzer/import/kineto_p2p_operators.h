// PyTorch's send, receive and all-to-all operators joined to the NCCL kernel
// that moved their data, for traces whose kernels carry no arguments
// (PyTorch 2.11 writes "Collective name", "Src Rank", "Dst Rank" and the
// sizes on record_param_comms only).
//
// An operator that launches its kernel has it inside. A batch
// (batch_isend_irecv, torch.distributed.pipelining) issues its sends and
// receives as operators that launch nothing, then one `nccl:coalesced`
// range launches the one fused kernel for all of them. So each operator goes
// with the first NCCL kernel launched on its thread from its start on, when
// that kernel is one that moves point-to-point data (SendRecv, or RCCL's
// Generic); when the first is another collective, the operator stays
// unjoined rather than lent to a later batch.
#pragma once

#include "analyzer/capture/model.h"
#include "analyzer/import/kineto_comm_args.h"
#include "analyzer/import/kineto_group_calls.h"

#include <vector>

namespace osc::kineto {

// The kernels' argument records, one per operator joined to a kernel that
// `fromKernels` (kernels' own arguments) does not already describe, with the
// kernel's device and times. Operator times as the process's tables hold
// them; an operator nested in another of `operators` on its thread is the
// same call and is skipped.
std::vector<PendingComm> commsOfOperators(const Process& process, const StringTable& strings,
                                          std::vector<PendingGroupCall> operators,
                                          const std::vector<PendingComm>& fromKernels);

}  // namespace osc::kineto
