// What Kineto's event names and categories mean in our model: categories to
// event kinds, "Memcpy DtoH (Device -> Pinned)" to copy and memory kinds,
// "Stream Sync" to sync types. Kept apart from the parser so the mapping can
// be read (and tested) on its own; docs/formats.md restates it.
#pragma once

#include "analyzer/capture/model.h"

#include <string_view>

namespace osc::kineto {

enum class EventKind : uint8_t {
    Ignored,
    Kernel,
    Memcpy,
    Memset,
    Runtime,
    Driver,
    CpuRange,
    GpuRange,
    Sync,
    CpuOp,
};

// `cat` of a ph:"X" event, both current ("kernel", "gpu_memcpy") and legacy
// ("Kernel", "Memcpy") spellings.
EventKind kindOfCategory(std::string_view cat);

struct CopyKinds {
    CopyKind copy = CopyKind::Unknown;
    MemKind src = MemKind::Unknown, dst = MemKind::Unknown;
};
// "Memcpy HtoD (Pageable -> Device)", "Memcpy PtoP (Device -> Device)", ...
CopyKinds parseCopyName(std::string_view name);

// "Stream Sync", "Event Sync", "Context Sync", "Stream Wait Event".
SyncType parseSyncName(std::string_view name);

// PyTorch's "Collective name" arg ("allreduce", "reduce_scatter_tensor_coalesced",
// "_allgather_base", ...) as the NCCL function our model uses ("AllReduce",
// "ReduceScatter", "AllGather", "Broadcast", "Reduce", "AllToAll", "Send",
// "Recv"); "" when unknown.
std::string_view ncclFuncOfCollective(std::string_view name);
// Bytes per element of PyTorch's "dtype" arg ("Float", "BFloat16", ...); 0 unknown.
int dtypeBytes(std::string_view dtype);
// An NCCL (or RCCL) kernel: its name, after a leading "void ", starts with "nccl".
bool isNcclKernel(std::string_view kernelName);
// An NCCL kernel that runs sends, receives and all-to-all: NCCL's SendRecv
// (ncclDevKernel_SendRecv, ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t), or
// RCCL's Generic, which runs everything.
bool isPointToPointKernel(std::string_view kernelName);

// The names used when writing a Kineto-style trace (our Chrome export), the
// inverse of the two parsers above.
std::string_view copyKindName(CopyKind kind);  // "HtoD", ...
std::string_view memKindName(MemKind kind);    // "Pageable", ...
std::string_view syncTypeName(SyncType type);  // "Stream Sync", ...

}  // namespace osc::kineto
