#include "python/src/report_tables.h"

#include "analyzer/report/report_format.h"
#include "analyzer/report/report_json.h"
#include "analyzer/report/report_patterns.h"
#include "python/src/columns.h"

#include <cstdio>

namespace osc::python {
namespace {

// 64-bit hashes as the JSON spells them (hex: JavaScript readers lose
// integers above 2^53).
std::optional<std::string> hex(const std::optional<uint64_t>& v) {
    if (!v) return std::nullopt;
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(*v));
    return std::string(buf);
}

template <typename T, typename F>
auto field(const std::optional<T>& o, F f) -> std::optional<std::decay_t<decltype(f(*o))>> {
    if (!o) return std::nullopt;
    return f(*o);
}

// Text the JSON writes as null when empty (names the file did not give).
std::optional<std::string> textOrNull(const std::string& s) {
    return s.empty() ? std::nullopt : std::optional<std::string>(s);
}

// Rows that belong to a device (steps, collectives, ...) start with where
// the device is: its row in .devices, its rank and its GPU ordinal (the
// JSON's "device"; "gpu" is the GPU's model, as in the JSON).
struct RowOwner {
    std::vector<int> device;
    std::vector<size_t> index;  // within the device
    void push(int d, size_t i) {
        device.push_back(d);
        index.push_back(i);
    }
    size_t size() const { return device.size(); }
};

void ownerColumns(Columns& t, const Analysis& a, const RowOwner& rows, const char* indexName) {
    t.add("device_index", [&](size_t i) { return rows.device[i]; });
    t.add("rank", [&](size_t i) { return known(a.devices[static_cast<size_t>(rows.device[i])].rank); });
    t.add("device", [&](size_t i) { return a.devices[static_cast<size_t>(rows.device[i])].device; });
    if (indexName) t.add(indexName, [&](size_t i) { return rows.index[i]; });
}

// docs/design.md section 4 fields of a window, in the JSON's order.
template <typename Get>
void metricColumns(Columns& t, Get m) {
    t.add("window_ns", [&](size_t i) { return m(i).window_ns; });
    t.add("compute_ns", [&](size_t i) { return m(i).compute_ns; });
    t.add("comm_ns", [&](size_t i) { return m(i).comm_ns; });
    t.add("overlap_ns", [&](size_t i) { return m(i).overlap_ns; });
    t.add("exposed_comm_ns", [&](size_t i) { return m(i).exposed_comm_ns; });
    t.add("busy_ns", [&](size_t i) { return m(i).busy_ns; });
    t.add("idle_ns", [&](size_t i) { return m(i).idle_ns; });
    t.add("overlap_ratio", [&](size_t i) { return m(i).overlap_ratio; });
    t.add("achieved_speedup", [&](size_t i) { return m(i).achieved_speedup; });
    t.add("ideal_speedup", [&](size_t i) { return m(i).ideal_speedup; });
}

// 4b and 4c fields; the 4c ones are missing with one device.
template <typename Interference, typename Wait>
void interferenceColumns(Columns& t, Interference in, Wait w) {
    t.add("overlapped_compute_ns", [&](size_t i) { return in(i).overlapped_compute_ns; });
    t.add("interfered_compute_ns", [&](size_t i) { return in(i).interfered_compute_ns; });
    // Compute ran under communication but none of it had a baseline: what
    // overlap cost is unknown (missing), as in the JSON.
    auto measured = [&](size_t i) { return in(i).overlapped_compute_ns == 0 || in(i).interfered_compute_ns > 0; };
    t.add("interference_ns",
          [&](size_t i) { return measured(i) ? std::optional<TimeNs>(in(i).interference_ns) : std::nullopt; });
    t.add("interference_coverage", [&](size_t i) { return in(i).interference_coverage; });
    t.add("compute_slowdown", [&](size_t i) { return in(i).compute_slowdown; });
    t.add("net_overlap_gain_ns",
          [&](size_t i) { return measured(i) ? std::optional<TimeNs>(in(i).net_overlap_gain_ns) : std::nullopt; });
    // Waiting is unknown (missing) where sends or receives had no peer; the
    // count says why, as in the JSON.
    auto waitKnown = [&](size_t i) -> std::optional<WaitTransferMetrics> {
        if (w(i) && w(i)->known()) return w(i);
        return std::nullopt;
    };
    t.add("comm_wait_ns", [&](size_t i) { return field(waitKnown(i), [](const auto& x) { return x.comm_wait_ns; }); });
    t.add("exposed_wait_ns",
          [&](size_t i) { return field(waitKnown(i), [](const auto& x) { return x.exposed_wait_ns; }); });
    t.add("exposed_transfer_ns",
          [&](size_t i) { return field(waitKnown(i), [](const auto& x) { return x.exposed_transfer_ns; }); });
    t.add("kernels_without_peer",
          [&](size_t i) { return field(w(i), [](const auto& x) { return x.kernels_without_peer; }); });
}

// Pipeline bubble fields (docs/metrics.md 7e); a step's carry its stage too.
template <typename Get>
void pipelineColumns(Columns& t, Get p, bool step) {
    using M = PipelineStageMetrics;
    t.add("pipeline_window_ns", [&](size_t i) { return field(p(i), [](const M& m) { return m.window_ns; }); });
    t.add("bubble_ns", [&](size_t i) { return field(p(i), [](const M& m) { return m.bubble_ns; }); });
    t.add("bubble_share", [&](size_t i) { return p(i) ? p(i)->bubble_share : std::nullopt; });
    t.add("theoretical_bubble_share", [&](size_t i) { return p(i) ? p(i)->theoretical_bubble_share : std::nullopt; });
    t.add("fill_ns", [&](size_t i) { return field(p(i), [](const M& m) { return m.fill_ns; }); });
    t.add("drain_ns", [&](size_t i) { return field(p(i), [](const M& m) { return m.drain_ns; }); });
    t.add("stall_ns", [&](size_t i) { return field(p(i), [](const M& m) { return m.stall_ns; }); });
    if (!step) return;
    t.add("pipeline_stage", [&](size_t i) { return field(p(i), [](const M& m) { return m.stage; }); });
    t.add("pipeline_stages", [&](size_t i) { return field(p(i), [](const M& m) { return m.stages; }); });
    t.add("microbatches", [&](size_t i) { return field(p(i), [](const M& m) { return m.microbatches; }); });
    t.add("slowest_stage", [&](size_t i) { return field(p(i), [](const M& m) { return m.slowest; }); });
}

// All-to-all fields (docs/metrics.md 7f).
template <typename Get>
void alltoallColumns(Columns& t, Get a) {
    using M = AllToAllMetrics;
    t.add("alltoall_ops", [&](size_t i) { return field(a(i), [](const M& m) { return m.ops; }); });
    t.add("alltoall_ns", [&](size_t i) { return field(a(i), [](const M& m) { return m.alltoall_ns; }); });
    t.add("exposed_alltoall_ns",
          [&](size_t i) { return field(a(i), [](const M& m) { return m.exposed_alltoall_ns; }); });
    t.add("alltoall_transfer_ns", [&](size_t i) { return field(a(i), [](const M& m) { return m.transfer_ns; }); });
    t.add("alltoall_bytes_sent", [&](size_t i) { return a(i) ? a(i)->bytes_sent : std::nullopt; });
    t.add("alltoall_bytes_received", [&](size_t i) { return a(i) ? a(i)->bytes_received : std::nullopt; });
}

py::dict devicesTable(const Analysis& a) {
    const auto& ds = a.devices;
    Columns t(ds.size());
    std::vector<report::DeviceBottleneck> bottleneck;
    for (const auto& d : ds) bottleneck.push_back(report::deviceBottleneck(d));
    // The JSON device object's fields in its order; its own tables (steps,
    // collectives, findings, interference) apart.
    t.add("device_index", [&](size_t i) { return i; });
    t.add("rank", [&](size_t i) { return known(ds[i].rank); });
    // Unknown host and process (the file named none) are missing, as the JSON's null.
    t.add("host", [&](size_t i) { return textOrNull(ds[i].host); });
    t.add("pid", [&](size_t i) { return ds[i].pid > 0 ? std::optional(ds[i].pid) : std::nullopt; });
    t.add("device", [&](size_t i) { return ds[i].device; });
    metricColumns(t, [&](size_t i) -> const OverlapMetrics& { return ds[i].totals; });
    interferenceColumns(
        t, [&](size_t i) -> const InterferenceMetrics& { return ds[i].interference; },
        [&](size_t i) -> const std::optional<WaitTransferMetrics>& { return ds[i].wait; });
    t.add("last_arrivals", [&](size_t i) { return ds[i].last_arrivals; });
    t.add("delay_caused_ns", [&](size_t i) { return ds[i].delay_caused_ns; });
    pipelineColumns(
        t, [&](size_t i) -> const std::optional<PipelineStageMetrics>& { return ds[i].pipeline; }, false);
    alltoallColumns(t, [&](size_t i) -> const std::optional<AllToAllMetrics>& { return ds[i].alltoall; });
    t.add("label", [&](size_t i) { return report::deviceLabel(ds[i]); });
    t.add("verdict", [&](size_t i) { return report::verdict(ds[i].totals); });
    auto found = [&](size_t i) { return bottleneck[i].found; };
    t.add("bottleneck_name", [&](size_t i) { return found(i) ? std::optional(bottleneck[i].label) : std::nullopt; });
    t.add("bottleneck_position", [&](size_t i) {
        return found(i) && bottleneck[i].position >= 0 ? std::optional<int>(bottleneck[i].position) : std::nullopt;
    });
    t.add("bottleneck_collective",
          [&](size_t i) { return found(i) ? std::optional<int>(bottleneck[i].collective) : std::nullopt; });
    t.add("bottleneck_exposed_ns",
          [&](size_t i) { return found(i) ? std::optional<TimeNs>(bottleneck[i].exposed_ns) : std::nullopt; });
    t.add("bottleneck_share", [&](size_t i) { return found(i) ? bottleneck[i].share : std::nullopt; });
    t.add("dropped_records", [&](size_t i) { return ds[i].droppedRecords; });
    t.add("end_reason", [&](size_t i) { return ds[i].endReason; });
    t.add("gpu", [&](size_t i) { return textOrNull(ds[i].gpu); });
    t.add("gpu_uuid", [&](size_t i) { return textOrNull(ds[i].gpuUuid); });
    // Bus bandwidth and straggler objects as the JSON writer writes them (one
    // list of fields for both); overlapscope/_report.py flattens them into
    // busbw_* and straggler_* columns here.
    t.add("busbw", [&](size_t i) { return report::busBandwidthJsonText(ds[i].busbw); });
    t.add("straggler", [&](size_t i) { return report::stragglerJsonText(ds[i].straggler); });
    // The JSON has it only with --align collectives, and then on every device.
    bool shifted = false;
    for (const auto& d : ds) shifted = shifted || d.clock_shift_ns.has_value();
    if (shifted) t.add("clock_shift_ns", [&](size_t i) { return ds[i].clock_shift_ns; });
    return t.finish();
}

py::dict stepsTable(const Analysis& a) {
    RowOwner rows;
    for (size_t d = 0; d < a.devices.size(); ++d)
        for (size_t s = 0; s < a.devices[d].steps.size(); ++s) rows.push(static_cast<int>(d), s);
    auto dev = [&](size_t i) -> const DeviceAnalysis& { return a.devices[static_cast<size_t>(rows.device[i])]; };
    auto step = [&](size_t i) -> const StepAnalysis& { return dev(i).steps[rows.index[i]]; };
    Columns t(rows.size());
    ownerColumns(t, a, rows, "step_index");
    t.add("name", [&](size_t i) { return step(i).name; });
    t.add("start_ns", [&](size_t i) { return step(i).start_ns; });
    t.add("end_ns", [&](size_t i) { return step(i).end_ns; });
    metricColumns(t, [&](size_t i) -> const OverlapMetrics& { return step(i).metrics; });
    interferenceColumns(
        t, [&](size_t i) -> const InterferenceMetrics& { return step(i).interference; },
        [&](size_t i) -> const std::optional<WaitTransferMetrics>& { return step(i).wait; });
    pipelineColumns(
        t, [&](size_t i) -> const std::optional<PipelineStageMetrics>& { return step(i).pipeline; }, true);
    alltoallColumns(t, [&](size_t i) -> const std::optional<AllToAllMetrics>& { return step(i).alltoall; });
    auto has = [&](size_t i) {
        const int c = step(i).bottleneck.collective;
        return c >= 0 && static_cast<size_t>(c) < dev(i).collectives.size();
    };
    t.add("bottleneck_collective",
          [&](size_t i) { return has(i) ? std::optional<int>(step(i).bottleneck.collective) : std::nullopt; });
    t.add("bottleneck_name", [&](size_t i) {
        return has(i) ? std::optional(report::describeCollective(
                            dev(i).collectives[static_cast<size_t>(step(i).bottleneck.collective)]))
                      : std::nullopt;
    });
    t.add("bottleneck_exposed_ns", [&](size_t i) { return step(i).bottleneck.exposed_ns; });
    t.add("bottleneck_share", [&](size_t i) { return step(i).bottleneck.share; });
    t.add("bottleneck_verdict", [&](size_t i) -> std::string {
        return step(i).bottleneck.communicationBound ? "communication-bound" : "compute-bound";
    });
    return t.finish();
}

py::dict collectivesTable(const Analysis& a) {
    RowOwner rows;
    for (size_t d = 0; d < a.devices.size(); ++d)
        for (size_t c = 0; c < a.devices[d].collectives.size(); ++c) rows.push(static_cast<int>(d), c);
    auto op = [&](size_t i) -> const CollectiveInstance& {
        return a.devices[static_cast<size_t>(rows.device[i])].collectives[rows.index[i]];
    };
    Columns t(rows.size());
    ownerColumns(t, a, rows, "collective_index");
    // Millions of rows repeat a few names: categoricals, one str per name.
    CategoryColumn name, collective, datatype, algo, proto;
    for (size_t i = 0; i < rows.size(); ++i) {
        name.pushText(op(i).name);
        collective.pushTextOrNull(op(i).collective);
        datatype.pushTextOrNull(op(i).datatype);
        algo.pushTextOrNull(op(i).algo);
        proto.pushTextOrNull(op(i).proto);
    }
    t.put("name", name.finish());
    t.put("collective", collective.finish());
    t.put("datatype", datatype.finish());
    t.add("start_ns", [&](size_t i) { return op(i).start_ns; });
    t.add("end_ns", [&](size_t i) { return op(i).end_ns; });
    t.add("stream", [&](size_t i) { return op(i).stream; });
    t.add("duration_ns", [&](size_t i) { return op(i).duration_ns; });
    t.add("overlapped_ns", [&](size_t i) { return op(i).overlapped_ns; });
    t.add("exposed_ns", [&](size_t i) { return op(i).exposed_ns; });
    t.add("bytes", [&](size_t i) { return op(i).bytes; });
    t.add("bandwidth_gbps", [&](size_t i) { return op(i).bandwidth_gbps; });
    t.add("comm_hash", [&](size_t i) { return hex(op(i).commHash); });
    t.add("seq_number", [&](size_t i) { return op(i).seqNumber; });
    t.put("algo", algo.finish());
    t.put("proto", proto.finish());
    t.add("step", [&](size_t i) { return op(i).step >= 0 ? std::optional<int>(op(i).step) : std::nullopt; });
    // Bus bandwidth (docs/metrics.md 7g).
    t.add("algbw_gbps", [&](size_t i) { return op(i).algbw_gbps; });
    t.add("busbw_gbps", [&](size_t i) { return op(i).busbw_gbps; });
    t.add("busbw_basis", [&](size_t i) -> py::object {
        if (op(i).busbw_basis == BusBwBasis::None) return py::none();
        return py::str(report::toString(op(i).busbw_basis));
    });
    t.add("busbw_fraction", [&](size_t i) { return op(i).busbw_fraction; });
    return t.finish();
}

// Device findings (step_index missing) and each step's bottleneck findings.
py::dict findingsTable(const Analysis& a) {
    struct Row {
        int device;
        std::optional<size_t> step;
        const Finding* finding;
    };
    std::vector<Row> rows;
    for (size_t d = 0; d < a.devices.size(); ++d) {
        const auto& dev = a.devices[d];
        for (const auto& f : dev.findings) rows.push_back({static_cast<int>(d), std::nullopt, &f});
        for (size_t s = 0; s < dev.steps.size(); ++s)
            for (const auto& f : dev.steps[s].bottleneck.findings) rows.push_back({static_cast<int>(d), s, &f});
    }
    RowOwner owner;
    for (const auto& r : rows) owner.push(r.device, 0);
    Columns t(rows.size());
    ownerColumns(t, a, owner, nullptr);
    t.add("step_index", [&](size_t i) { return rows[i].step; });
    t.add("kind", [&](size_t i) { return report::toString(rows[i].finding->kind); });
    t.add("message", [&](size_t i) { return rows[i].finding->message; });
    t.add("exposed_ns", [&](size_t i) { return rows[i].finding->exposed_ns; });
    return t.finish();
}

py::dict matchedTable(const Analysis& a) {
    const auto& ms = a.matched;
    Columns t(ms.size());
    t.add("collective", [&](size_t i) { return ms[i].collective; });
    t.add("comm_hash", [&](size_t i) { return hex(ms[i].commHash); });
    t.add("seq_number", [&](size_t i) { return ms[i].seqNumber; });
    t.add("instances", [&](size_t i) {
        py::list pairs;
        for (const auto& [d, c] : ms[i].instances) pairs.append(py::make_tuple(d, c));
        return py::object(pairs);
    });
    t.add("skew_ns", [&](size_t i) { return ms[i].skew_ns; });
    t.add("transfer_ns", [&](size_t i) { return ms[i].transfer_ns; });
    t.add("point_to_point", [&](size_t i) { return ms[i].pointToPoint; });
    return t.finish();
}

py::dict interferenceTable(const Analysis& a) {
    RowOwner rows;
    for (size_t d = 0; d < a.devices.size(); ++d)
        for (size_t s = 0; s < a.devices[d].signatures.size(); ++s) rows.push(static_cast<int>(d), s);
    auto sig = [&](size_t i) -> const SignatureInterference& {
        return a.devices[static_cast<size_t>(rows.device[i])].signatures[rows.index[i]];
    };
    Columns t(rows.size());
    ownerColumns(t, a, rows, nullptr);
    t.add("name", [&](size_t i) { return sig(i).name; });
    t.add("grid", [&](size_t i) { return py::object(py::make_tuple(sig(i).grid[0], sig(i).grid[1], sig(i).grid[2])); });
    t.add("block",
          [&](size_t i) { return py::object(py::make_tuple(sig(i).block[0], sig(i).block[1], sig(i).block[2])); });
    t.add("isolated", [&](size_t i) { return sig(i).isolated; });
    t.add("overlapped", [&](size_t i) { return sig(i).overlapped; });
    t.add("baseline_ns", [&](size_t i) { return sig(i).baseline_ns; });
    t.add("median_overlapped_ns", [&](size_t i) { return sig(i).median_overlapped_ns; });
    t.add("slowdown_ns", [&](size_t i) { return sig(i).slowdown_ns; });
    return t.finish();
}

py::dict p2pTable(const Analysis& a) {
    const auto& ps = a.p2p;
    Columns t(ps.size());
    t.add("sender_device_index", [&](size_t i) { return ps[i].sender.first; });
    t.add("sender_collective", [&](size_t i) { return ps[i].sender.second; });
    t.add("receiver_device_index", [&](size_t i) { return ps[i].receiver.first; });
    t.add("receiver_collective", [&](size_t i) { return ps[i].receiver.second; });
    t.add("comm_hash", [&](size_t i) { return hex(ps[i].commHash); });
    t.add("bytes", [&](size_t i) { return ps[i].bytes; });
    return t.finish();
}

std::optional<int> deviceIndex(const Analysis& a, int device) {
    if (device < 0 || static_cast<size_t>(device) >= a.devices.size()) return std::nullopt;
    return device;
}

py::dict pipelineTable(const Analysis& a) {
    const auto& ps = a.pipeline;
    Columns t(ps.size());
    t.add("step", [&](size_t i) { return ps[i].step; });
    t.add("stages", [&](size_t i) { return ps[i].stages; });
    t.add("microbatches", [&](size_t i) { return ps[i].microbatches; });
    t.add("start_ns", [&](size_t i) { return ps[i].start_ns; });
    t.add("end_ns", [&](size_t i) { return ps[i].end_ns; });
    t.add("window_ns", [&](size_t i) { return ps[i].end_ns - ps[i].start_ns; });
    t.add("theoretical_bubble_share", [&](size_t i) { return ps[i].theoretical_bubble_share; });
    t.add("stage_device_indexes", [&](size_t i) {
        py::list stages;
        for (int d : ps[i].devices) stages.append(d);
        return py::object(stages);
    });
    t.add("slowest_device_index", [&](size_t i) { return deviceIndex(a, ps[i].slowest); });
    return t.finish();
}

py::dict alltoallTable(const Analysis& a) {
    const auto& ss = a.alltoall;
    Columns t(ss.size());
    t.add("step", [&](size_t i) { return ss[i].step; });
    t.add("exchanges", [&](size_t i) { return ss[i].dispatches; });
    t.add("bytes_imbalance", [&](size_t i) { return ss[i].bytes_imbalance; });
    t.add("time_imbalance", [&](size_t i) { return ss[i].time_imbalance; });
    t.add("overloaded_device_index", [&](size_t i) { return deviceIndex(a, ss[i].overloaded); });
    t.add("exposed_ns", [&](size_t i) { return ss[i].exposed_ns; });
    t.add("ranks", [&](size_t i) {
        py::list ranks;
        for (const auto& r : ss[i].ranks) {
            py::dict row;
            row["device_index"] = r.device;
            row["label"] = text(report::deviceName(a, r.device));
            row["bytes"] = r.bytes ? py::object(py::int_(*r.bytes)) : py::object(py::none());
            row["time_ns"] = r.time_ns;
            row["exposed_ns"] = r.exposed_ns;
            ranks.append(row);
        }
        return py::object(ranks);
    });
    t.add("pairs", [&](size_t i) {
        py::list pairs;
        for (const auto& p : ss[i].pairs) pairs.append(py::make_tuple(p.src, p.dst, p.bytes));
        return py::object(pairs);
    });
    return t.finish();
}

template <typename T>
py::object orNone(const std::optional<T>& v) {
    return v ? py::cast(*v) : py::object(py::none());
}

}  // namespace

py::dict reportTables(const Analysis& analysis) {
    py::dict tables;
    tables["devices"] = devicesTable(analysis);
    tables["steps"] = stepsTable(analysis);
    tables["collectives"] = collectivesTable(analysis);
    tables["findings"] = findingsTable(analysis);
    tables["matched"] = matchedTable(analysis);
    tables["interference"] = interferenceTable(analysis);
    tables["p2p"] = p2pTable(analysis);
    tables["pipeline"] = pipelineTable(analysis);
    tables["alltoall"] = alltoallTable(analysis);
    return tables;
}

py::dict deviceObjectFields() {
    // Every optional set, so each field shows its JSON type (a float, an
    // integer, text) for columns that are null on every device.
    BusBandwidth b;
    b.peak_busbw_gbps = b.median_algbw_gbps = b.median_busbw_gbps = b.median_busbw_fraction = 0.0;
    b.link = "-";
    StragglerMetrics s;
    s.worst.commHash = 0;
    s.worst.step = s.worst.medianLabel = s.worst.collective = "-";
    s.worst.late_start_ns = s.worst.compute_ns = s.worst.host_idle_ns = s.worst.other_ns = 0;
    py::dict out;
    out["busbw"] = report::busBandwidthJsonText(b);
    out["straggler"] = report::stragglerJsonText(s);
    return out;
}

py::dict reportSummary(const Analysis& a) {
    const auto& m = a.summary;
    py::dict s;
    s["window_ns"] = m.window_ns;
    s["compute_ns"] = m.compute_ns;
    s["comm_ns"] = m.comm_ns;
    s["overlap_ns"] = m.overlap_ns;
    s["exposed_comm_ns"] = m.exposed_comm_ns;
    s["busy_ns"] = m.busy_ns;
    s["idle_ns"] = m.idle_ns;
    s["overlap_ratio"] = orNone(m.overlap_ratio);
    s["achieved_speedup"] = orNone(m.achieved_speedup);
    s["ideal_speedup"] = orNone(m.ideal_speedup);
    s["device_count"] = a.devices.size();
    s["verdict"] = report::verdict(m);
    s["dropped_records"] = a.droppedRecords ? py::cast(*a.droppedRecords) : py::object(py::none());
    const auto p = report::pipelineSummary(a);
    s["pipeline_window_ns"] = p ? py::cast(p->window_ns) : py::object(py::none());
    s["bubble_ns"] = p ? py::cast(p->bubble_ns) : py::object(py::none());
    s["bubble_share"] = p ? orNone(p->bubble_share) : py::object(py::none());
    s["theoretical_bubble_share"] = p ? orNone(p->theoretical_bubble_share) : py::object(py::none());
    s["fill_ns"] = p ? py::cast(p->fill_ns) : py::object(py::none());
    s["drain_ns"] = p ? py::cast(p->drain_ns) : py::object(py::none());
    s["stall_ns"] = p ? py::cast(p->stall_ns) : py::object(py::none());
    s["exposed_alltoall_ns"] = orNone(report::exposedAllToAll(a));
    double worst = 0;
    s["alltoall_imbalance"] = report::worstAllToAll(a, &worst) ? py::cast(worst) : py::object(py::none());
    return s;
}

}  // namespace osc::python
