// CaptureBuilder::absorb: the tables one piece's builder made, appended to
// the whole file's in file order, with the piece's string ids turned into
// the capture's. Interning the piece's strings in the order the piece first
// met them gives every string the id one builder reading all events in turn
// would have given it.
#include "analyzer/import/kineto_builder.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace osc::kineto {
namespace {

template <typename T>
void append(std::vector<T>& to, const std::vector<T>& from) {
    to.insert(to.end(), from.begin(), from.end());
}

// String ids of the piece as the capture's (kNoId and other non-ids kept).
void appendIds(std::vector<uint32_t>& to, const std::vector<uint32_t>& from, const std::vector<uint32_t>& ids) {
    const size_t at = to.size();
    to.resize(at + from.size());
    for (size_t i = 0; i < from.size(); ++i) to[at + i] = from[i] < ids.size() ? ids[from[i]] : from[i];
}

void appendKernels(KernelTable& to, const KernelTable& from, const std::vector<uint32_t>& ids) {
    append(to.start, from.start);
    append(to.end, from.end);
    append(to.stream, from.stream);
    append(to.correlation, from.correlation);
    appendIds(to.name, from.name, ids);
    appendIds(to.shortName, from.shortName, ids);
    for (auto [t, f] : {std::pair{&to.gridX, &from.gridX},
                        {&to.gridY, &from.gridY},
                        {&to.gridZ, &from.gridZ},
                        {&to.blockX, &from.blockX},
                        {&to.blockY, &from.blockY},
                        {&to.blockZ, &from.blockZ},
                        {&to.registersPerThread, &from.registersPerThread},
                        {&to.staticSharedMemory, &from.staticSharedMemory},
                        {&to.dynamicSharedMemory, &from.dynamicSharedMemory},
                        {&to.graphId, &from.graphId}})
        append(*t, *f);
    append(to.graphNodeId, from.graphNodeId);
}

void appendCopies(CopyTable& to, const CopyTable& from) {
    append(to.start, from.start);
    append(to.end, from.end);
    append(to.stream, from.stream);
    append(to.correlation, from.correlation);
    append(to.bytes, from.bytes);
    append(to.copyKind, from.copyKind);
    append(to.srcKind, from.srcKind);
    append(to.dstKind, from.dstKind);
    append(to.srcDevice, from.srcDevice);
    append(to.dstDevice, from.dstDevice);
}

void appendMemsets(MemsetTable& to, const MemsetTable& from) {
    append(to.start, from.start);
    append(to.end, from.end);
    append(to.stream, from.stream);
    append(to.correlation, from.correlation);
    append(to.bytes, from.bytes);
    append(to.value, from.value);
}

void appendSyncs(SyncTable& to, const SyncTable& from) {
    append(to.start, from.start);
    append(to.end, from.end);
    append(to.stream, from.stream);
    append(to.correlation, from.correlation);
    append(to.type, from.type);
    append(to.eventId, from.eventId);
}

void appendApiCalls(ApiCallTable& to, const ApiCallTable& from, const std::vector<uint32_t>& ids) {
    append(to.start, from.start);
    append(to.end, from.end);
    append(to.globalTid, from.globalTid);
    append(to.correlation, from.correlation);
    appendIds(to.name, from.name, ids);
    append(to.returnValue, from.returnValue);
    append(to.kind, from.kind);
}

void appendRanges(RangeTable& to, const RangeTable& from, const std::vector<uint32_t>& ids) {
    append(to.start, from.start);
    append(to.end, from.end);
    appendIds(to.name, from.name, ids);
    append(to.globalTid, from.globalTid);
    appendIds(to.domain, from.domain, ids);
    append(to.category, from.category);
    append(to.color, from.color);
    append(to.kind, from.kind);
    append(to.onGpu, from.onGpu);
}

void appendCollectives(CollectiveTable& to, const CollectiveTable& from, const std::vector<uint32_t>& ids) {
    // Rows made from PyTorch's arguments are numbered by their place in the
    // table (appendArgsRow): the piece's numbers count from its first row.
    const uint64_t offset = to.size();
    append(to.commHash, from.commHash);
    append(to.rank, from.rank);
    append(to.nranks, from.nranks);
    for (const uint64_t seq : from.seqNumber) to.seqNumber.push_back(seq + offset);
    appendIds(to.func, from.func, ids);
    appendIds(to.datatype, from.datatype, ids);
    appendIds(to.algo, from.algo, ids);
    appendIds(to.proto, from.proto, ids);
    append(to.count, from.count);
    append(to.bytes, from.bytes);
    append(to.root, from.root);
    append(to.nChannels, from.nChannels);
    append(to.device, from.device);
    append(to.enqueue, from.enqueue);
    append(to.gpuStart, from.gpuStart);
    append(to.gpuEnd, from.gpuEnd);
}

// Each process's records, the whole file's first `limit` kept (as
// CaptureBuilder::keepRecord keeps them).
template <typename Record>
void appendPerProcess(std::vector<std::vector<Record>>& to, std::vector<std::vector<Record>>& from,
                      size_t limit = SIZE_MAX) {
    if (to.size() < from.size()) to.resize(from.size());
    for (size_t i = 0; i < from.size(); ++i) {
        const size_t n = std::min(from[i].size(), limit - std::min(limit, to[i].size()));
        to[i].insert(to[i].end(), std::make_move_iterator(from[i].begin()),
                     std::make_move_iterator(from[i].begin() + static_cast<std::ptrdiff_t>(n)));
    }
}

}  // namespace

void CaptureBuilder::absorb(CaptureBuilder& piece) {
    const StringTable& strings = piece.capture_.strings;
    std::vector<uint32_t> ids(strings.size());
    for (uint32_t i = 0; i < strings.size(); ++i) ids[i] = capture_.strings.intern(strings.at(i));
    if (processes_.size() < piece.processes_.size()) processes_.resize(piece.processes_.size());
    for (size_t i = 0; i < piece.processes_.size(); ++i) {
        Process& to = processes_[i];
        Process& from = piece.processes_[i];
        if (to.pid == 0 && from.pid > 0) to.pid = from.pid;  // the first event's pid, as onEvent takes it
        for (auto& [tid, name] : from.threadNames) to.threadNames[tid] = std::move(name);
        for (const Device& d : from.devices) {
            Device& into = deviceFor(to, d.id);
            appendKernels(into.kernels, d.kernels, ids);
            appendCopies(into.copies, d.copies);
            appendMemsets(into.memsets, d.memsets);
            appendSyncs(into.syncs, d.syncs);
        }
        appendApiCalls(to.apiCalls, from.apiCalls, ids);
        appendRanges(to.ranges, from.ranges, ids);
        appendRanges(to.cpuOps, from.cpuOps, ids);
        appendCollectives(to.collectives, from.collectives, ids);
    }
    appendPerProcess(pendingComm_, piece.pendingComm_);
    appendPerProcess(pendingP2pOperators_, piece.pendingP2pOperators_, kMaxGroupRecordsPerProcess);
    appendPerProcess(pendingGroup_, piece.pendingGroup_, kMaxGroupRecordsPerProcess);
    minTs_ = std::min(minTs_, piece.minTs_);
    kernels_ += piece.kernels_;
    events_ += piece.events_;
}

}  // namespace osc::kineto
