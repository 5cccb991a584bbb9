#include "python/src/capture_tables.h"

#include "analyzer/import/kineto_names.h"
#include "analyzer/metrics/classify.h"
#include "python/src/columns.h"

#include <stdexcept>
#include <type_traits>

namespace osc::python {
namespace {

const char* categoryName(Category c) {
    switch (c) {
        case Category::Compute:
            return "compute";
        case Category::Communication:
            return "communication";
        case Category::Memory:
            return "memory";
    }
    return "";
}

// Where a GPU row belongs: its process and device.
struct DeviceRow {
    const Process* process;
    size_t processIndex;
    const Device* device;
    size_t row;  // within the device's table
};

template <typename TableOf>
std::vector<DeviceRow> deviceRows(const Capture& c, TableOf tableOf) {
    std::vector<DeviceRow> rows;
    for (size_t p = 0; p < c.processes.size(); ++p)
        for (const auto& d : c.processes[p].devices)
            for (size_t i = 0; i < tableOf(d).size(); ++i) rows.push_back({&c.processes[p], p, &d, i});
    return rows;
}

void deviceRowColumns(Columns& t, const std::vector<DeviceRow>& rows) {
    t.add("process_index", [&](size_t i) { return rows[i].processIndex; });
    t.add("rank", [&](size_t i) { return known(rows[i].process->rank); });
    t.add("device", [&](size_t i) { return rows[i].device->id; });
}

// Start, end, duration, stream and correlation: every GPU table has them.
template <typename TableOf>
void timeColumns(Columns& t, const std::vector<DeviceRow>& rows, TableOf tableOf) {
    auto table = [&](size_t i) -> decltype(auto) { return tableOf(*rows[i].device); };
    t.add("start_ns", [&](size_t i) { return table(i).start[rows[i].row]; });
    t.add("end_ns", [&](size_t i) { return table(i).end[rows[i].row]; });
    t.add("duration_ns", [&](size_t i) { return table(i).end[rows[i].row] - table(i).start[rows[i].row]; });
}

py::dict processesTable(const Capture& c) {
    const auto& ps = c.processes;
    Columns t(ps.size());
    t.add("process_index", [&](size_t i) { return i; });
    t.add("rank", [&](size_t i) { return known(ps[i].rank); });
    t.add("local_rank", [&](size_t i) { return known(ps[i].localRank); });
    t.add("world_size", [&](size_t i) { return known(ps[i].worldSize); });
    t.add("host", [&](size_t i) { return ps[i].host; });
    t.add("pid", [&](size_t i) { return ps[i].pid; });
    t.add("name", [&](size_t i) { return ps[i].name; });
    t.add("source_path", [&](size_t i) { return ps[i].sourcePath; });
    t.add("session_start_utc_ns", [&](size_t i) { return ps[i].sessionStartUtcNs; });
    t.add("time_offset_ns", [&](size_t i) { return ps[i].timeOffsetNs; });
    t.add("label", [&](size_t i) { return ps[i].label(); });
    return t.finish();
}

py::dict devicesTable(const Capture& c) {
    std::vector<std::pair<size_t, const Device*>> rows;
    for (size_t p = 0; p < c.processes.size(); ++p)
        for (const auto& d : c.processes[p].devices) rows.emplace_back(p, &d);
    Columns t(rows.size());
    t.add("process_index", [&](size_t i) { return rows[i].first; });
    t.add("rank", [&](size_t i) { return known(c.processes[rows[i].first].rank); });
    t.add("device", [&](size_t i) { return rows[i].second->id; });
    t.add("name", [&](size_t i) { return rows[i].second->gpu.name; });
    t.add("sm_count", [&](size_t i) { return rows[i].second->gpu.smCount; });
    t.add("total_memory", [&](size_t i) { return rows[i].second->gpu.totalMemory; });
    t.add("compute_capability", [&](size_t i) {
        const auto& g = rows[i].second->gpu;
        return std::to_string(g.computeMajor) + "." + std::to_string(g.computeMinor);
    });
    t.add("kernels", [&](size_t i) { return rows[i].second->kernels.size(); });
    t.add("copies", [&](size_t i) { return rows[i].second->copies.size(); });
    return t.finish();
}

py::dict kernelsTable(const Capture& c, const AnalysisSettings& settings) {
    auto tableOf = [](const Device& d) -> const KernelTable& { return d.kernels; };
    const auto rows = deviceRows(c, tableOf);
    auto k = [&](size_t i) -> const KernelTable& { return rows[i].device->kernels; };
    Columns t(rows.size());
    deviceRowColumns(t, rows);
    t.add("stream", [&](size_t i) { return k(i).stream[rows[i].row]; });
    timeColumns(t, rows, tableOf);
    ActivityClassifier classify(c.strings, settings);
    CategoryColumn name, category;
    for (size_t i = 0; i < rows.size(); ++i) {
        const uint32_t id = k(i).name[rows[i].row];
        name.push(id, c.strings.at(id));
        const Category cat = classify.kernel(id);
        category.push(static_cast<uint32_t>(cat), categoryName(cat));
    }
    t.put("name", name.finish());
    t.put("category", category.finish());
    t.add("correlation", [&](size_t i) { return k(i).correlation[rows[i].row]; });
    // Launch details may be absent (SQLite files read without them): -1.
    auto detail = [&](const char* column, auto member) {
        t.add(column, [&, member](size_t i) -> int64_t {
            const auto& v = k(i).*member;
            return rows[i].row < v.size() ? static_cast<int64_t>(v[rows[i].row]) : -1;
        });
    };
    detail("grid_x", &KernelTable::gridX);
    detail("grid_y", &KernelTable::gridY);
    detail("grid_z", &KernelTable::gridZ);
    detail("block_x", &KernelTable::blockX);
    detail("block_y", &KernelTable::blockY);
    detail("block_z", &KernelTable::blockZ);
    detail("registers_per_thread", &KernelTable::registersPerThread);
    detail("static_shared_memory", &KernelTable::staticSharedMemory);
    detail("dynamic_shared_memory", &KernelTable::dynamicSharedMemory);
    return t.finish();
}

py::dict copiesTable(const Capture& c, const AnalysisSettings& settings) {
    auto tableOf = [](const Device& d) -> const CopyTable& { return d.copies; };
    const auto rows = deviceRows(c, tableOf);
    auto m = [&](size_t i) -> const CopyTable& { return rows[i].device->copies; };
    Columns t(rows.size());
    deviceRowColumns(t, rows);
    t.add("stream", [&](size_t i) { return m(i).stream[rows[i].row]; });
    timeColumns(t, rows, tableOf);
    t.add("correlation", [&](size_t i) { return m(i).correlation[rows[i].row]; });
    t.add("bytes", [&](size_t i) { return m(i).bytes[rows[i].row]; });
    t.add("copy_kind", [&](size_t i) { return std::string(kineto::copyKindName(m(i).copyKind[rows[i].row])); });
    t.add("src_kind", [&](size_t i) { return std::string(kineto::memKindName(m(i).srcKind[rows[i].row])); });
    t.add("dst_kind", [&](size_t i) { return std::string(kineto::memKindName(m(i).dstKind[rows[i].row])); });
    ActivityClassifier classify(c.strings, settings);
    t.add("category", [&](size_t i) { return std::string(categoryName(classify.copy(m(i).copyKind[rows[i].row]))); });
    return t.finish();
}

py::dict memsetsTable(const Capture& c) {
    auto tableOf = [](const Device& d) -> const MemsetTable& { return d.memsets; };
    const auto rows = deviceRows(c, tableOf);
    auto m = [&](size_t i) -> const MemsetTable& { return rows[i].device->memsets; };
    Columns t(rows.size());
    deviceRowColumns(t, rows);
    t.add("stream", [&](size_t i) { return m(i).stream[rows[i].row]; });
    timeColumns(t, rows, tableOf);
    t.add("correlation", [&](size_t i) { return m(i).correlation[rows[i].row]; });
    t.add("bytes", [&](size_t i) { return m(i).bytes[rows[i].row]; });
    return t.finish();
}

py::dict syncsTable(const Capture& c) {
    auto tableOf = [](const Device& d) -> const SyncTable& { return d.syncs; };
    const auto rows = deviceRows(c, tableOf);
    auto s = [&](size_t i) -> const SyncTable& { return rows[i].device->syncs; };
    Columns t(rows.size());
    deviceRowColumns(t, rows);
    t.add("stream", [&](size_t i) {
        const uint32_t v = s(i).stream[rows[i].row];
        return v == kNoId ? std::nullopt : std::optional<uint32_t>(v);
    });
    timeColumns(t, rows, tableOf);
    t.add("correlation", [&](size_t i) { return s(i).correlation[rows[i].row]; });
    t.add("type", [&](size_t i) { return std::string(kineto::syncTypeName(s(i).type[rows[i].row])); });
    return t.finish();
}

// NVTX ranges and annotations, or PyTorch operators (same table layout).
// NVTX ranges, or PyTorch's CPU operators: those have no domain, are
// push-pop and on the CPU.
template <typename Table>
py::dict rangesTable(const Capture& c, const Table Process::*member) {
    std::vector<std::pair<size_t, size_t>> rows;
    for (size_t p = 0; p < c.processes.size(); ++p)
        for (size_t i = 0; i < (c.processes[p].*member).size(); ++i) rows.emplace_back(p, i);
    auto r = [&](size_t i) -> const Table& { return c.processes[rows[i].first].*member; };
    constexpr bool kNvtx = std::is_same_v<Table, RangeTable>;
    Columns t(rows.size());
    t.add("process_index", [&](size_t i) { return rows[i].first; });
    t.add("rank", [&](size_t i) { return known(c.processes[rows[i].first].rank); });
    t.add("start_ns", [&](size_t i) { return r(i).start[rows[i].second]; });
    t.add("end_ns", [&](size_t i) { return r(i).end[rows[i].second]; });
    t.add("duration_ns", [&](size_t i) { return r(i).end[rows[i].second] - r(i).start[rows[i].second]; });
    CategoryColumn name;
    for (size_t i = 0; i < rows.size(); ++i) {
        const uint32_t id = r(i).name[rows[i].second];
        name.push(id, c.strings.at(id));
    }
    t.put("name", name.finish());
    t.add("thread", [&](size_t i) { return r(i).globalTid[rows[i].second]; });
    t.add("domain", [&](size_t i) {
        uint32_t d = kNoId;
        if constexpr (kNvtx) d = r(i).domain[rows[i].second];
        return d == kNoId ? std::nullopt : std::optional<std::string>(c.strings.at(d));
    });
    t.add("kind", [&](size_t i) -> std::string {
        RangeKind kind = RangeKind::PushPop;
        if constexpr (kNvtx) kind = r(i).kind[rows[i].second];
        switch (kind) {
            case RangeKind::PushPop:
                return "push-pop";
            case RangeKind::StartEnd:
                return "start-end";
            case RangeKind::Mark:
                return "mark";
        }
        return "";
    });
    t.add("on_gpu", [&](size_t i) {
        if constexpr (kNvtx) return r(i).onGpu[rows[i].second] != 0;
        return false;
    });
    return t.finish();
}

py::dict apiCallsTable(const Capture& c) {
    std::vector<std::pair<size_t, size_t>> rows;
    for (size_t p = 0; p < c.processes.size(); ++p)
        for (size_t i = 0; i < c.processes[p].apiCalls.size(); ++i) rows.emplace_back(p, i);
    auto a = [&](size_t i) -> const ApiCallTable& { return c.processes[rows[i].first].apiCalls; };
    Columns t(rows.size());
    t.add("process_index", [&](size_t i) { return rows[i].first; });
    t.add("rank", [&](size_t i) { return known(c.processes[rows[i].first].rank); });
    t.add("start_ns", [&](size_t i) { return a(i).start[rows[i].second]; });
    t.add("end_ns", [&](size_t i) { return a(i).end[rows[i].second]; });
    t.add("duration_ns", [&](size_t i) { return a(i).end[rows[i].second] - a(i).start[rows[i].second]; });
    CategoryColumn name;
    for (size_t i = 0; i < rows.size(); ++i) {
        const uint32_t id = a(i).name[rows[i].second];
        name.push(id, c.strings.at(id));
    }
    t.put("name", name.finish());
    t.add("thread", [&](size_t i) { return a(i).globalTid[rows[i].second]; });
    t.add("correlation", [&](size_t i) { return a(i).correlation[rows[i].second]; });
    t.add("return_value", [&](size_t i) { return a(i).returnValue[rows[i].second]; });
    t.add("kind",
          [&](size_t i) -> std::string { return a(i).kind[rows[i].second] == ApiKind::Driver ? "driver" : "runtime"; });
    return t.finish();
}

}  // namespace

py::dict captureTable(const Capture& capture, const std::string& table, const AnalysisSettings& settings) {
    if (table == "processes") return processesTable(capture);
    if (table == "devices") return devicesTable(capture);
    if (table == "kernels") return kernelsTable(capture, settings);
    if (table == "copies") return copiesTable(capture, settings);
    if (table == "memsets") return memsetsTable(capture);
    if (table == "syncs") return syncsTable(capture);
    if (table == "ranges") return rangesTable(capture, &Process::ranges);
    if (table == "cpu_ops") return rangesTable(capture, &Process::cpuOps);
    if (table == "api_calls") return apiCallsTable(capture);
    throw std::invalid_argument("no table named '" + table + "'");
}

}  // namespace osc::python
