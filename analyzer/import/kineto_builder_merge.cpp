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

// A piece's columns appended to the file's, with room made ahead
// (makeRoom) for as many rows as the whole file is expected to hold.
struct Appender {
    RoomAhead ahead;

    // Room for `adding` more rows. When the column must move anyway, room for
    // as many as the whole file is expected to hold: grown by doubling, a
    // 1 GB trace's columns were copied a dozen times each and their new pages
    // faulted in every time, while room not yet written takes no memory.
    template <typename T>
    void makeRoom(std::vector<T>& column, size_t adding) const {
        const size_t need = column.size() + adding;
        if (need <= column.capacity()) return;
        size_t room = std::max(need, 2 * column.capacity());
        // Never more than the content could fill (a guess from a first piece
        // that met the array's end is no guess).
        const double expected = static_cast<double>(need) * ahead.growth;
        if (expected > static_cast<double>(room) && expected * sizeof(T) <= ahead.contentBytes)
            room = static_cast<size_t>(expected);
        column.reserve(room);
    }

    template <typename T>
    void append(std::vector<T>& to, const std::vector<T>& from) const {
        makeRoom(to, from.size());
        to.insert(to.end(), from.begin(), from.end());
    }

    // Ids the piece gave (strings, launch shapes) as the whole file's (kNoId and
    // other non-ids kept).
    void appendIds(std::vector<uint32_t>& to, const std::vector<uint32_t>& from,
                   const std::vector<uint32_t>& ids) const {
        makeRoom(to, from.size());
        const size_t at = to.size();
        to.resize(at + from.size());
        for (size_t i = 0; i < from.size(); ++i) to[at + i] = from[i] < ids.size() ? ids[from[i]] : from[i];
    }

    // The listed columns of `from` after `to`'s.
    template <typename Table, typename... Columns>
    void appendColumns(Table& to, const Table& from, Columns... columns) const {
        (append(to.*columns, from.*columns), ...);
    }

    void appendKernels(KernelTable& to, const KernelTable& from, const std::vector<uint32_t>& ids,
                       const std::vector<uint32_t>& shapeIds) const {
        appendColumns(to, from, &KernelTable::start, &KernelTable::end, &KernelTable::stream, &KernelTable::correlation,
                      &KernelTable::gridX, &KernelTable::gridY, &KernelTable::gridZ, &KernelTable::blockX,
                      &KernelTable::blockY, &KernelTable::blockZ, &KernelTable::registersPerThread,
                      &KernelTable::staticSharedMemory, &KernelTable::dynamicSharedMemory, &KernelTable::graphId,
                      &KernelTable::graphNodeId);
        appendIds(to.name, from.name, ids);
        appendIds(to.shortName, from.shortName, ids);
        appendIds(to.shape, from.shape, shapeIds);
    }

    void appendCopies(CopyTable& to, const CopyTable& from) const {
        appendColumns(to, from, &CopyTable::start, &CopyTable::end, &CopyTable::stream, &CopyTable::correlation,
                      &CopyTable::bytes, &CopyTable::copyKind, &CopyTable::srcKind, &CopyTable::dstKind,
                      &CopyTable::srcDevice, &CopyTable::dstDevice);
    }

    void appendMemsets(MemsetTable& to, const MemsetTable& from) const {
        appendColumns(to, from, &MemsetTable::start, &MemsetTable::end, &MemsetTable::stream, &MemsetTable::correlation,
                      &MemsetTable::bytes, &MemsetTable::value);
    }

    void appendSyncs(SyncTable& to, const SyncTable& from) const {
        appendColumns(to, from, &SyncTable::start, &SyncTable::end, &SyncTable::stream, &SyncTable::correlation,
                      &SyncTable::type, &SyncTable::eventId);
    }

    void appendApiCalls(ApiCallTable& to, const ApiCallTable& from, const std::vector<uint32_t>& ids) const {
        appendColumns(to, from, &ApiCallTable::start, &ApiCallTable::end, &ApiCallTable::globalTid,
                      &ApiCallTable::correlation, &ApiCallTable::returnValue, &ApiCallTable::kind);
        appendIds(to.name, from.name, ids);
    }

    void appendRanges(RangeTable& to, const RangeTable& from, const std::vector<uint32_t>& ids) const {
        appendColumns(to, from, &RangeTable::start, &RangeTable::end, &RangeTable::globalTid, &RangeTable::category,
                      &RangeTable::color, &RangeTable::kind, &RangeTable::onGpu);
        appendIds(to.name, from.name, ids);
        appendIds(to.domain, from.domain, ids);
    }

    void appendCollectives(CollectiveTable& to, const CollectiveTable& from, const std::vector<uint32_t>& ids) const {
        // Rows made from PyTorch's arguments are numbered by their place in the
        // table (appendArgsRow): the piece's numbers count from its first row.
        const uint64_t offset = to.size();
        appendColumns(to, from, &CollectiveTable::commHash, &CollectiveTable::rank, &CollectiveTable::nranks,
                      &CollectiveTable::count, &CollectiveTable::bytes, &CollectiveTable::root,
                      &CollectiveTable::nChannels, &CollectiveTable::device, &CollectiveTable::enqueue,
                      &CollectiveTable::gpuStart, &CollectiveTable::gpuEnd);
        for (const uint64_t seq : from.seqNumber) to.seqNumber.push_back(seq + offset);
        appendIds(to.func, from.func, ids);
        appendIds(to.datatype, from.datatype, ids);
        appendIds(to.algo, from.algo, ids);
        appendIds(to.proto, from.proto, ids);
    }
};

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

void CaptureBuilder::absorb(CaptureBuilder& piece, const RoomAhead& room) {
    const Appender a{room};
    const StringTable& strings = piece.capture_.strings;
    std::vector<uint32_t> ids(strings.size());
    for (uint32_t i = 0; i < strings.size(); ++i) ids[i] = capture_.strings.intern(strings.at(i));
    std::vector<uint32_t> shapeIds;
    for (const LaunchShape& shape : piece.shapes_.shapes()) shapeIds.push_back(shapes_.id(shape));
    if (processes_.size() < piece.processes_.size()) processes_.resize(piece.processes_.size());
    for (size_t i = 0; i < piece.processes_.size(); ++i) {
        Process& to = processes_[i];
        Process& from = piece.processes_[i];
        if (to.pid == 0 && from.pid > 0) to.pid = from.pid;  // the first event's pid, as onEvent takes it
        for (auto& [tid, name] : from.threadNames) to.threadNames[tid] = std::move(name);
        for (const Device& d : from.devices) {
            Device& into = deviceFor(to, d.id);
            a.appendKernels(into.kernels, d.kernels, ids, shapeIds);
            a.appendCopies(into.copies, d.copies);
            a.appendMemsets(into.memsets, d.memsets);
            a.appendSyncs(into.syncs, d.syncs);
        }
        a.appendApiCalls(to.apiCalls, from.apiCalls, ids);
        a.appendRanges(to.ranges, from.ranges, ids);
        a.appendColumns(to.cpuOps, from.cpuOps, &CpuOpTable::start, &CpuOpTable::end, &CpuOpTable::globalTid);
        a.appendIds(to.cpuOps.name, from.cpuOps.name, ids);
        a.appendCollectives(to.collectives, from.collectives, ids);
    }
    appendPerProcess(pendingComm_, piece.pendingComm_);
    appendPerProcess(pendingP2pOperators_, piece.pendingP2pOperators_, kMaxGroupRecordsPerProcess);
    appendPerProcess(pendingGroup_, piece.pendingGroup_, kMaxGroupRecordsPerProcess);
    minTs_ = std::min(minTs_, piece.minTs_);
    kernels_ += piece.kernels_;
    events_ += piece.events_;
}

}  // namespace osc::kineto
