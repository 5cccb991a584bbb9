#include "analyzer/import/kineto_names.h"

#include <array>
#include <utility>

namespace osc::kineto {
namespace {

constexpr std::array<std::pair<std::string_view, CopyKind>, 10> kCopyKinds{{
    {"HtoD", CopyKind::HtoD},
    {"DtoH", CopyKind::DtoH},
    {"HtoA", CopyKind::HtoA},
    {"AtoH", CopyKind::AtoH},
    {"AtoA", CopyKind::AtoA},
    {"AtoD", CopyKind::AtoD},
    {"DtoA", CopyKind::DtoA},
    {"DtoD", CopyKind::DtoD},
    {"HtoH", CopyKind::HtoH},
    {"PtoP", CopyKind::PtoP},
}};

constexpr std::array<std::pair<std::string_view, MemKind>, 7> kMemKinds{{
    {"Pageable", MemKind::Pageable},
    {"Pinned", MemKind::Pinned},
    {"Device", MemKind::Device},
    {"Array", MemKind::Array},
    {"Managed", MemKind::Managed},
    {"DeviceStatic", MemKind::DeviceStatic},
    {"ManagedStatic", MemKind::ManagedStatic},
}};

constexpr std::array<std::pair<std::string_view, SyncType>, 4> kSyncTypes{{
    {"Event Sync", SyncType::EventSynchronize},
    {"Stream Wait Event", SyncType::StreamWaitEvent},
    {"Stream Sync", SyncType::StreamSynchronize},
    {"Context Sync", SyncType::ContextSynchronize},
}};

MemKind memKindOf(std::string_view word) {
    while (!word.empty() && word.front() == ' ') word.remove_prefix(1);
    while (!word.empty() && word.back() == ' ') word.remove_suffix(1);
    for (const auto& [text, kind] : kMemKinds)
        if (word == text) return kind;
    return MemKind::Unknown;
}

}  // namespace

EventKind kindOfCategory(std::string_view cat) {
    if (cat == "kernel" || cat == "Kernel") return EventKind::Kernel;
    if (cat == "gpu_memcpy" || cat == "Memcpy") return EventKind::Memcpy;
    if (cat == "gpu_memset" || cat == "Memset") return EventKind::Memset;
    if (cat == "cuda_runtime" || cat == "Runtime") return EventKind::Runtime;
    if (cat == "cuda_driver") return EventKind::Driver;
    if (cat == "user_annotation") return EventKind::CpuRange;
    if (cat == "gpu_user_annotation") return EventKind::GpuRange;
    if (cat == "cuda_sync") return EventKind::Sync;
    if (cat == "cpu_op") return EventKind::CpuOp;
    return EventKind::Ignored;
}

CopyKinds parseCopyName(std::string_view name) {
    CopyKinds out;
    // "Memcpy <KIND> (<src> -> <dst>)"; older traces lack the parenthesis.
    constexpr std::string_view prefix = "Memcpy ";
    if (name.substr(0, prefix.size()) != prefix) return out;
    name.remove_prefix(prefix.size());
    const auto space = name.find(' ');
    const auto kindWord = name.substr(0, space);
    for (const auto& [text, kind] : kCopyKinds)
        if (kindWord == text) out.copy = kind;
    if (space == std::string_view::npos) return out;
    const auto open = name.find('(', space), arrow = name.find("->", space), close = name.find(')', space);
    if (open == std::string_view::npos || arrow == std::string_view::npos || close == std::string_view::npos ||
        !(open < arrow && arrow < close))
        return out;
    out.src = memKindOf(name.substr(open + 1, arrow - open - 1));
    out.dst = memKindOf(name.substr(arrow + 2, close - arrow - 2));
    return out;
}

SyncType parseSyncName(std::string_view name) {
    for (const auto& [text, type] : kSyncTypes)
        if (name == text) return type;
    return SyncType::Unknown;
}

std::string_view copyKindName(CopyKind kind) {
    for (const auto& [text, k] : kCopyKinds)
        if (k == kind) return text;
    return "Unknown";
}

std::string_view memKindName(MemKind kind) {
    for (const auto& [text, k] : kMemKinds)
        if (k == kind) return text;
    return "Unknown";
}

std::string_view syncTypeName(SyncType type) {
    for (const auto& [text, t] : kSyncTypes)
        if (t == type) return text;
    return "Sync";
}

std::string_view ncclFuncOfCollective(std::string_view n) {
    const auto has = [&](std::string_view part) { return n.find(part) != std::string_view::npos; };
    if (has("reduce_scatter") || has("reducescatter")) return "ReduceScatter";
    if (has("allreduce") || has("all_reduce")) return "AllReduce";
    if (has("allgather") || has("all_gather")) return "AllGather";
    if (has("all_to_all") || has("alltoall")) return "AllToAll";
    if (has("broadcast")) return "Broadcast";
    if (has("reduce")) return "Reduce";
    if (has("send")) return "Send";
    if (has("recv")) return "Recv";
    return "";
}

int dtypeBytes(std::string_view d) {
    if (d == "Float" || d == "Int" || d == "UInt32") return 4;
    if (d == "Double" || d == "Long" || d == "UInt64" || d == "ComplexFloat") return 8;
    if (d == "Half" || d == "BFloat16" || d == "Short" || d == "UInt16") return 2;
    if (d == "Byte" || d == "Char" || d == "Bool" || d.rfind("Float8", 0) == 0) return 1;
    if (d == "ComplexDouble") return 16;
    return 0;
}

bool isNcclKernel(std::string_view name) {
    if (name.starts_with("void ")) name.remove_prefix(5);
    return name.starts_with("nccl");
}

bool isPointToPointKernel(std::string_view name) {
    return isNcclKernel(name) &&
           (name.find("SendRecv") != std::string_view::npos || name.find("Generic") != std::string_view::npos);
}

}  // namespace osc::kineto
