#include "analyzer/capture/model.h"

#include <algorithm>
#include <numeric>

namespace osc {
namespace {

// Sorting a columnar table: compute one permutation, then apply it to every
// column. Skips all work when the rows are already ordered (the common case
// for CUPTI buffers, which arrive mostly sorted per stream).
template <typename Key>
std::vector<uint32_t> sortPermutation(const std::vector<Key>& key) {
    std::vector<uint32_t> perm;
    if (std::is_sorted(key.begin(), key.end())) return perm;
    perm.resize(key.size());
    std::iota(perm.begin(), perm.end(), 0u);
    std::stable_sort(perm.begin(), perm.end(), [&](uint32_t a, uint32_t b) { return key[a] < key[b]; });
    return perm;
}

template <typename T>
void applyPermutation(std::vector<T>& column, const std::vector<uint32_t>& perm) {
    if (perm.empty() || column.size() != perm.size()) return;
    std::vector<T> sorted(column.size());
    for (size_t i = 0; i < perm.size(); ++i) sorted[i] = column[perm[i]];
    column.swap(sorted);
}

template <typename... Columns>
void permuteAll(const std::vector<uint32_t>& perm, Columns&... columns) {
    (applyPermutation(columns, perm), ...);
}

}  // namespace

void KernelTable::reserve(size_t n) {
    for (auto* c : {&start, &end}) c->reserve(n);
    for (auto* c : {&stream, &correlation, &name, &shortName, &gridX, &gridY, &gridZ, &blockX, &blockY, &blockZ,
                    &registersPerThread, &staticSharedMemory, &dynamicSharedMemory, &graphId})
        c->reserve(n);
    graphNodeId.reserve(n);
}

void KernelTable::sortByStart() {
    const auto perm = sortPermutation(start);
    permuteAll(perm, start, end, stream, correlation, name, shortName, gridX, gridY, gridZ, blockX, blockY, blockZ,
               registersPerThread, staticSharedMemory, dynamicSharedMemory, graphId, graphNodeId, shape);
}

LaunchShape KernelTable::launchShape(size_t i) const {
    if (i < shape.size() && shape[i] < shapes.size()) return shapes[shape[i]];
    const auto at = [i](const std::vector<uint32_t>& column) { return i < column.size() ? column[i] : 0u; };
    return {at(gridX), at(gridY), at(gridZ), at(blockX), at(blockY), at(blockZ)};
}

void CopyTable::sortByStart() {
    const auto perm = sortPermutation(start);
    permuteAll(perm, start, end, stream, correlation, bytes, copyKind, srcKind, dstKind, srcDevice, dstDevice);
}

void MemsetTable::sortByStart() {
    const auto perm = sortPermutation(start);
    permuteAll(perm, start, end, stream, correlation, bytes, value);
}

void SyncTable::sortByStart() {
    const auto perm = sortPermutation(start);
    permuteAll(perm, start, end, stream, correlation, type, eventId);
}

void ApiCallTable::sortByStart() {
    const auto perm = sortPermutation(start);
    permuteAll(perm, start, end, globalTid, correlation, name, returnValue, kind);
}

void RangeTable::sortByStart() {
    const auto perm = sortPermutation(start);
    permuteAll(perm, start, end, name, globalTid, domain, category, color, kind, onGpu);
}

void CpuOpTable::sortByStart() {
    const auto perm = sortPermutation(start);
    permuteAll(perm, start, end, name, globalTid);
}

void CollectiveTable::sortByEnqueue() {
    const auto perm = sortPermutation(enqueue);
    permuteAll(perm, commHash, rank, nranks, seqNumber, func, datatype, algo, proto, count, bytes, root, nChannels,
               device, enqueue, gpuStart, gpuEnd);
}

std::pair<TimeNs, TimeNs> Device::span() const {
    bool any = false;
    TimeNs lo = 0, hi = 0;
    auto take = [&](const std::vector<TimeNs>& s, const std::vector<TimeNs>& e) {
        for (size_t i = 0; i < s.size(); ++i) {
            if (!any) {
                lo = s[i];
                hi = e[i];
                any = true;
            }
            lo = std::min(lo, s[i]);
            hi = std::max(hi, e[i]);
        }
    };
    take(kernels.start, kernels.end);
    take(copies.start, copies.end);
    take(memsets.start, memsets.end);
    return {lo, hi};
}

Device& Process::deviceById(uint32_t id) {
    auto it =
        std::lower_bound(devices.begin(), devices.end(), id, [](const Device& d, uint32_t v) { return d.id < v; });
    if (it != devices.end() && it->id == id) return *it;
    it = devices.insert(it, Device{});
    it->id = id;
    it->gpu.id = id;
    return *it;
}

void Process::dropDevicesWithoutWork() {
    std::erase_if(devices, [](const Device& d) {
        return d.kernels.size() == 0 && d.copies.size() == 0 && d.memsets.size() == 0;
    });
}

const Device* Process::findDevice(uint32_t id) const {
    for (const auto& d : devices)
        if (d.id == id) return &d;
    return nullptr;
}

std::string Process::label() const {
    std::string where = host.empty() ? std::to_string(pid) : host + ":" + std::to_string(pid);
    if (rank >= 0) return "rank " + std::to_string(rank) + " (" + where + ")";
    return where;
}

size_t Capture::kernelCount() const {
    size_t n = 0;
    for (const auto& p : processes)
        for (const auto& d : p.devices) n += d.kernels.size();
    return n;
}

namespace {
void shift(std::vector<TimeNs>& column, TimeNs by) {
    for (auto& t : column) t += by;
}
void shiftKnown(std::vector<TimeNs>& column, TimeNs by) {
    for (auto& t : column)
        if (t >= 0) t += by;
}
}  // namespace

void Capture::alignProcesses() {
    if (processes.empty()) return;
    int64_t origin = processes.front().sessionStartUtcNs;
    for (const auto& p : processes) origin = std::min(origin, p.sessionStartUtcNs);
    originUtcNs = origin;
    for (size_t i = 0; i < processes.size(); ++i)
        shiftProcess(i, processes[i].sessionStartUtcNs - origin - processes[i].timeOffsetNs);
}

void Capture::shiftProcess(size_t index, TimeNs by) {
    auto& p = processes[index];
    p.timeOffsetNs += by;
    if (by == 0) return;
    for (auto& d : p.devices) {
        shift(d.kernels.start, by);
        shift(d.kernels.end, by);
        shift(d.copies.start, by);
        shift(d.copies.end, by);
        shift(d.memsets.start, by);
        shift(d.memsets.end, by);
        shift(d.syncs.start, by);
        shift(d.syncs.end, by);
    }
    shift(p.apiCalls.start, by);
    shift(p.apiCalls.end, by);
    shift(p.ranges.start, by);
    shift(p.ranges.end, by);
    shift(p.cpuOps.start, by);
    shift(p.cpuOps.end, by);
    shiftKnown(p.collectives.enqueue, by);
    shiftKnown(p.collectives.gpuStart, by);
    shiftKnown(p.collectives.gpuEnd, by);
    for (auto& g : p.groupCalls) {
        g.entered += by;
        if (g.gpuStart) *g.gpuStart += by;
        if (g.gpuEnd) *g.gpuEnd += by;
    }
}

void Capture::finalize() {
    for (auto& p : processes) {
        for (auto& d : p.devices) {
            d.kernels.sortByStart();
            d.copies.sortByStart();
            d.memsets.sortByStart();
            d.syncs.sortByStart();
        }
        p.apiCalls.sortByStart();
        p.ranges.sortByStart();
        p.cpuOps.sortByStart();
        p.collectives.sortByEnqueue();
    }
    std::stable_sort(processes.begin(), processes.end(), [](const Process& a, const Process& b) {
        // Processes with a known rank first, in rank order.
        const bool ar = a.rank >= 0, br = b.rank >= 0;
        if (ar != br) return ar;
        if (a.rank != b.rank) return a.rank < b.rank;
        if (a.host != b.host) return a.host < b.host;
        return a.pid < b.pid;
    });
}

std::string savedNothingWarning(const std::string& path) {
    return path +
           ": the capture did not finish and saved nothing (its process was killed, or the disk filled up, "
           "before any GPU activity was committed)";
}

}  // namespace osc
