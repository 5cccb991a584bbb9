#include "analyzer/capture/capture_error.h"
#include "analyzer/metrics/bus_bandwidth.h"
#include "analyzer/report/json_member_spans.h"
#include "analyzer/report/report_format.h"
#include "analyzer/report/report_json.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>

#include <functional>

namespace osc::report {
namespace {

using nlohmann::json;

// Walks the document, naming the place of any problem ("devices[1].totals.comm_ns").
class Reader {
public:
    explicit Reader(std::string origin) : origin_(std::move(origin)) {}

    [[noreturn]] void fail(const std::string& where, const std::string& what) const {
        throw CaptureError(origin_, "not a valid overlapscope report: " + where + " " + what);
    }

    const json& field(const json& obj, const char* key, const std::string& where) const {
        if (!obj.is_object()) fail(where, "is not an object");
        auto it = obj.find(key);
        if (it == obj.end()) fail(where + "." + key, "is missing");
        return *it;
    }
    bool has(const json& obj, const char* key) const { return member(obj, key) != nullptr; }
    // The member, or nullptr when it is absent (or `obj` is no object): one
    // lookup, where has() then obj[key] made two (a report of 100,000
    // devices reads some 100 million fields).
    static const json* member(const json& obj, const char* key) {
        if (!obj.is_object()) return nullptr;
        const auto it = obj.find(key);
        return it == obj.end() ? nullptr : &*it;
    }

    int64_t integer(const json& obj, const char* key, const std::string& where) const {
        const json& v = field(obj, key, where);
        if (!v.is_number_integer()) fail(where + "." + key, "is not an integer");
        return v.get<int64_t>();
    }
    std::optional<int64_t> optInteger(const json& obj, const char* key, const std::string& where) const {
        const json* v = member(obj, key);
        if (!v || v->is_null()) return std::nullopt;
        if (!v->is_number_integer()) fail(where + "." + key, "is not an integer");
        return v->get<int64_t>();
    }
    std::optional<double> optNumber(const json& obj, const char* key, const std::string& where) const {
        const json& v = field(obj, key, where);
        if (v.is_null()) return std::nullopt;
        if (!v.is_number()) fail(where + "." + key, "is neither a number nor null");
        return v.get<double>();
    }

    // What the metrics are makes some values impossible (docs/metrics.md):
    // a duration below zero, a ratio or share outside 0 to 1, a negative
    // speed-up. A report holding one was not written by us, or was edited;
    // reading it on would pass `check` or show 700% in `diff`.
    int64_t duration(const json& obj, const char* key, const std::string& where) const {
        const int64_t v = integer(obj, key, where);
        if (v < 0) fail(where + "." + key, "is " + std::to_string(v) + ", a negative duration");
        return v;
    }
    std::optional<int64_t> optDuration(const json& obj, const char* key, const std::string& where) const {
        const auto v = optInteger(obj, key, where);
        if (v && *v < 0) fail(where + "." + key, "is " + std::to_string(*v) + ", a negative duration");
        return v;
    }
    std::optional<double> optShare(const json& obj, const char* key, const std::string& where) const {
        const auto v = optNumber(obj, key, where);
        if (v && (*v < 0 || *v > 1)) fail(where + "." + key, "is " + obj[key].dump() + ", outside 0 to 1");
        return v;
    }
    std::optional<double> optNonNegative(const json& obj, const char* key, const std::string& where) const {
        const auto v = optNumber(obj, key, where);
        if (v && *v < 0) fail(where + "." + key, "is " + obj[key].dump() + ", below zero");
        return v;
    }
    // docs/design.md 4d: bandwidths are bytes over a positive time, at most
    // a 64-bit count per ns (kMaxGbps); a fraction of the link's peak is at
    // most kMaxBusBwFraction (the analysis gives none above it).
    std::optional<double> optGbps(const json& obj, const char* key, const std::string& where) const {
        if (!has(obj, key)) return std::nullopt;
        const auto v = optNonNegative(obj, key, where);
        if (v && *v > kMaxGbps) fail(where + "." + key, "is " + obj[key].dump() + ", more GB/s than any transfer");
        return v;
    }
    std::optional<double> optFractionOfPeak(const json& obj, const char* key, const std::string& where) const {
        if (!has(obj, key)) return std::nullopt;
        const auto v = optNumber(obj, key, where);
        if (v && !(*v >= 0 && *v <= kMaxBusBwFraction))
            fail(where + "." + key, "is " + obj[key].dump() + ", outside 0 to 2 (a fraction of the link's peak)");
        return v;
    }
    int count(const json& obj, const char* key, const std::string& where) const {
        const int64_t v = integer(obj, key, where);
        if (v < 0 || v > INT32_MAX) fail(where + "." + key, "is " + std::to_string(v) + ", not a count");
        return static_cast<int>(v);
    }
    std::string text(const json& obj, const char* key, const std::string& where) const {
        const json& v = field(obj, key, where);
        if (!v.is_string()) fail(where + "." + key, "is not a string");
        return v.get<std::string>();
    }
    std::string optText(const json& obj, const char* key, const std::string& where) const {
        const json* v = member(obj, key);
        if (!v || v->is_null()) return {};
        if (!v->is_string()) fail(where + "." + key, "is not a string");
        return v->get<std::string>();
    }
    const json& array(const json& obj, const char* key, const std::string& where) const {
        const json& v = field(obj, key, where);
        if (!v.is_array()) fail(where + "." + key, "is not an array");
        return v;
    }
    std::optional<uint64_t> optHex(const json& obj, const char* key, const std::string& where) const {
        const json* found = member(obj, key);
        if (!found || found->is_null()) return std::nullopt;
        const json& v = *found;
        if (v.is_number_unsigned() || v.is_number_integer()) return v.get<uint64_t>();
        if (!v.is_string()) fail(where + "." + key, "is not a hex string");
        try {
            return std::stoull(v.get<std::string>(), nullptr, 16);
        } catch (const std::exception&) {
            fail(where + "." + key, "is not a hex string");
        }
    }

    OverlapMetrics metrics(const json& obj, const std::string& where) const {
        OverlapMetrics m;
        m.window_ns = duration(obj, "window_ns", where);
        m.compute_ns = duration(obj, "compute_ns", where);
        m.comm_ns = duration(obj, "comm_ns", where);
        m.overlap_ns = duration(obj, "overlap_ns", where);
        m.exposed_comm_ns = duration(obj, "exposed_comm_ns", where);
        m.busy_ns = duration(obj, "busy_ns", where);
        m.idle_ns = duration(obj, "idle_ns", where);
        m.overlap_ratio = optShare(obj, "overlap_ratio", where);
        m.achieved_speedup = optNonNegative(obj, "achieved_speedup", where);
        m.ideal_speedup = optNonNegative(obj, "ideal_speedup", where);
        return m;
    }

    // 4b/4c fields; reports written before them lack them (all zero / empty).
    void interferenceAndWait(const json& obj, const std::string& where, InterferenceMetrics& i,
                             std::optional<WaitTransferMetrics>& wait) const {
        i.overlapped_compute_ns = optDuration(obj, "overlapped_compute_ns", where).value_or(0);
        i.interfered_compute_ns = optDuration(obj, "interfered_compute_ns", where).value_or(0);
        i.interference_ns = optInteger(obj, "interference_ns", where).value_or(0);
        if (has(obj, "interference_coverage")) i.interference_coverage = optShare(obj, "interference_coverage", where);
        if (has(obj, "compute_slowdown")) i.compute_slowdown = optNumber(obj, "compute_slowdown", where);
        i.net_overlap_gain_ns = optInteger(obj, "net_overlap_gain_ns", where).value_or(0);
        const auto cw = optDuration(obj, "comm_wait_ns", where);
        // Reports before kernels_without_peer have waiting or nothing.
        const auto withoutPeer = optInteger(obj, "kernels_without_peer", where);
        if (withoutPeer && (*withoutPeer < 0 || *withoutPeer > INT32_MAX))
            fail(where + ".kernels_without_peer", "is not a count");
        if (cw) {
            wait = WaitTransferMetrics{*cw, optDuration(obj, "exposed_wait_ns", where).value_or(0),
                                       optDuration(obj, "exposed_transfer_ns", where).value_or(0)};
        } else if (withoutPeer && *withoutPeer > 0) {
            wait = WaitTransferMetrics{};  // unknown: the values stay unsaid
        }
        if (wait && withoutPeer) wait->kernels_without_peer = static_cast<int>(*withoutPeer);
    }

    // Pipeline fields (docs/metrics.md 7e): present and not null only for a pipeline.
    std::optional<PipelineStageMetrics> pipeline(const json& obj, const std::string& where) const {
        if (!has(obj, "bubble_ns") || obj["bubble_ns"].is_null()) return std::nullopt;
        PipelineStageMetrics m;
        m.window_ns = optDuration(obj, "pipeline_window_ns", where).value_or(0);
        m.bubble_ns = duration(obj, "bubble_ns", where);
        if (has(obj, "bubble_share")) m.bubble_share = optShare(obj, "bubble_share", where);
        if (has(obj, "theoretical_bubble_share"))
            m.theoretical_bubble_share = optShare(obj, "theoretical_bubble_share", where);
        m.fill_ns = optInteger(obj, "fill_ns", where).value_or(0);
        m.drain_ns = optInteger(obj, "drain_ns", where).value_or(0);
        m.stall_ns = optInteger(obj, "stall_ns", where).value_or(0);
        m.compute_ns = m.window_ns - m.bubble_ns;
        m.stage = static_cast<int>(optInteger(obj, "pipeline_stage", where).value_or(-1));
        m.stages = static_cast<int>(optInteger(obj, "pipeline_stages", where).value_or(0));
        m.microbatches = static_cast<int>(optInteger(obj, "microbatches", where).value_or(0));
        m.slowest = has(obj, "slowest_stage") && obj["slowest_stage"].is_boolean() && obj["slowest_stage"].get<bool>();
        return m;
    }

    std::optional<AllToAllMetrics> alltoall(const json& obj, const std::string& where) const {
        if (!has(obj, "alltoall_ns") || obj["alltoall_ns"].is_null()) return std::nullopt;
        AllToAllMetrics m;
        m.ops = static_cast<int>(optInteger(obj, "alltoall_ops", where).value_or(0));
        m.alltoall_ns = duration(obj, "alltoall_ns", where);
        m.exposed_alltoall_ns = optDuration(obj, "exposed_alltoall_ns", where).value_or(0);
        m.transfer_ns = optInteger(obj, "alltoall_transfer_ns", where).value_or(0);
        if (auto v = optInteger(obj, "alltoall_bytes_sent", where)) m.bytes_sent = static_cast<uint64_t>(*v);
        if (auto v = optInteger(obj, "alltoall_bytes_received", where)) m.bytes_received = static_cast<uint64_t>(*v);
        return m;
    }

    int deviceIndex(const json& ref) const {
        if (!ref.is_object() || !ref.contains("device_index") || !ref["device_index"].is_number_integer()) return -1;
        const auto v = ref["device_index"].get<int64_t>();
        return v < 0 || v > INT32_MAX ? -1 : static_cast<int>(v);
    }

    std::vector<Finding> findings(const json& obj, const std::string& where) const {
        std::vector<Finding> out;
        if (!has(obj, "findings")) return out;
        const json& arr = array(obj, "findings", where);
        for (size_t i = 0; i < arr.size(); ++i) {
            const std::string w = where + ".findings[" + std::to_string(i) + "]";
            Finding f{};
            try {
                f.kind = parseFindingKind(text(arr[i], "kind", w));
            } catch (const std::invalid_argument& e) {
                fail(w + ".kind", e.what());
            }
            f.message = text(arr[i], "message", w);
            f.exposed_ns = optInteger(arr[i], "exposed_ns", w).value_or(0);
            out.push_back(f);
        }
        return out;
    }

    CollectiveInstance collective(const json& c, const std::string& w) const {
        CollectiveInstance x;
        x.name = texts_.recall(text(c, "name", w));
        x.collective = texts_.recall(optText(c, "collective", w));
        x.datatype = texts_.recall(optText(c, "datatype", w));
        x.start_ns = integer(c, "start_ns", w);
        x.end_ns = integer(c, "end_ns", w);
        x.stream = static_cast<uint32_t>(optInteger(c, "stream", w).value_or(0));
        x.duration_ns = duration(c, "duration_ns", w);
        x.overlapped_ns = duration(c, "overlapped_ns", w);
        x.exposed_ns = duration(c, "exposed_ns", w);
        if (auto b = optInteger(c, "bytes", w)) x.bytes = static_cast<uint64_t>(*b);
        x.bandwidth_gbps = optGbps(c, "bandwidth_gbps", w);
        x.commHash = optHex(c, "comm_hash", w);
        if (auto s = optInteger(c, "seq_number", w)) x.seqNumber = static_cast<uint64_t>(*s);
        x.algo = texts_.recall(optText(c, "algo", w));
        x.proto = texts_.recall(optText(c, "proto", w));
        x.step = static_cast<int>(optInteger(c, "step", w).value_or(-1));
        // docs/design.md 4d; reports written before it lack them.
        x.algbw_gbps = optGbps(c, "algbw_gbps", w);
        x.busbw_gbps = optGbps(c, "busbw_gbps", w);
        x.busbw_fraction = optFractionOfPeak(c, "busbw_fraction", w);
        const std::string basis = optText(c, "busbw_basis", w);
        if (basis == "transfer")
            x.busbw_basis = BusBwBasis::Transfer;
        else if (basis == "duration")
            x.busbw_basis = BusBwBasis::Duration;
        else if (!basis.empty())
            fail(w + ".busbw_basis", "is neither transfer, duration nor null");
        return x;
    }

    // A device's bus bandwidth (docs/design.md 4d), null or absent in reports without it.
    std::optional<BusBandwidth> busBandwidth(const json& d, const std::string& where) const {
        if (!has(d, "busbw") || d["busbw"].is_null()) return std::nullopt;
        const json& b = d["busbw"];
        const std::string w = where + ".busbw";
        BusBandwidth x;
        x.peak_busbw_gbps = optGbps(b, "peak_busbw_gbps", w);
        if (x.peak_busbw_gbps && *x.peak_busbw_gbps <= 0)
            fail(w + ".peak_busbw_gbps", "is " + b["peak_busbw_gbps"].dump() + ", not a positive bandwidth");
        x.link = optText(b, "link", w);
        // Every figure against the peak names its link ("(450 GB/s, NVLink 4 (H100 SXM))").
        if (x.peak_busbw_gbps && x.link.empty()) fail(w + ".link", "is empty while peak_busbw_gbps is given");
        x.measured = count(b, "measured", w);
        x.median_algbw_gbps = optGbps(b, "median_algbw_gbps", w);
        x.median_busbw_gbps = optGbps(b, "median_busbw_gbps", w);
        x.median_busbw_fraction = optFractionOfPeak(b, "median_busbw_fraction", w);
        if (x.median_busbw_fraction && !x.peak_busbw_gbps)
            fail(w + ".median_busbw_fraction", "is given without peak_busbw_gbps");
        x.bandwidth_limit_exposed_ns = duration(b, "bandwidth_limit_exposed_ns", w);
        x.schedule_limit_exposed_ns = duration(b, "schedule_limit_exposed_ns", w);
        const json& classes = array(b, "by_size", w);
        for (size_t i = 0; i < classes.size(); ++i) {
            const std::string cw = w + ".by_size[" + std::to_string(i) + "]";
            BusBwClass c;
            c.collective = text(classes[i], "collective", cw);
            const int64_t size = integer(classes[i], "size_class_bytes", cw);
            if (size < 0) fail(cw + ".size_class_bytes", "is negative");
            c.size_class = static_cast<uint64_t>(size);
            c.count = count(classes[i], "count", cw);
            c.median_algbw_gbps = optGbps(classes[i], "median_algbw_gbps", cw);
            c.median_busbw_gbps = optGbps(classes[i], "median_busbw_gbps", cw);
            c.median_busbw_fraction = optFractionOfPeak(classes[i], "median_busbw_fraction", cw);
            x.classes.push_back(std::move(c));
        }
        return x;
    }

    std::vector<NamedTime> namedTimes(const json& obj, const char* key, const std::string& where) const {
        std::vector<NamedTime> out;
        const json& arr = array(obj, key, where);
        for (size_t i = 0; i < arr.size(); ++i) {
            const std::string w = where + "." + key + "[" + std::to_string(i) + "]";
            out.push_back({text(arr[i], "name", w), duration(arr[i], "ns", w)});
        }
        return out;
    }

    // Why the device was late where it arrived last (docs/design.md 4d).
    std::optional<StragglerMetrics> straggler(const json& d, const std::string& where) const {
        if (!has(d, "straggler") || d["straggler"].is_null()) return std::nullopt;
        const json& s = d["straggler"];
        const std::string w = where + ".straggler";
        StragglerMetrics x;
        // A straggler arrived strictly last somewhere: a count of at least
        // one, lateness above zero. Its parts are differences and may be
        // negative (docs/design.md 4d).
        x.late_arrivals = count(s, "late_arrivals", w);
        if (x.late_arrivals == 0) fail(w + ".late_arrivals", "is 0 in a straggler (null when it never arrived last)");
        x.late_ns = duration(s, "late_ns", w);
        x.late_start_ns = integer(s, "late_start_ns", w);
        x.compute_ns = integer(s, "compute_ns", w);
        x.host_idle_ns = integer(s, "host_idle_ns", w);
        x.other_ns = integer(s, "other_ns", w);
        const json& o = field(s, "worst", w);
        const std::string ow = w + ".worst";
        LateArrival& a = x.worst;
        a.collective = text(o, "collective", ow);
        a.commHash = optHex(o, "comm_hash", ow);
        const int64_t number = integer(o, "number", ow);
        if (number < 0) fail(ow + ".number", "is negative");
        a.number = static_cast<uint64_t>(number);
        a.collectiveIndex = static_cast<int>(integer(o, "collective_index", ow));
        a.step = optText(o, "step", ow);
        a.medianDevice = static_cast<int>(integer(o, "median_device_index", ow));
        a.medianLabel = text(o, "median_label", ow);
        a.late_ns = duration(o, "late_ns", ow);
        a.delay_ns = duration(o, "delay_ns", ow);
        a.late_start_ns = optInteger(o, "late_start_ns", ow);
        a.compute_ns = optInteger(o, "compute_ns", ow);
        a.host_idle_ns = optInteger(o, "host_idle_ns", ow);
        a.other_ns = optInteger(o, "other_ns", ow);
        a.kernels = namedTimes(o, "kernels", ow);
        a.host = namedTimes(o, "host", ow);
        return x;
    }

    StepAnalysis step(const json& s, const std::string& w) const {
        StepAnalysis x;
        x.name = text(s, "name", w);
        x.start_ns = integer(s, "start_ns", w);
        x.end_ns = integer(s, "end_ns", w);
        x.metrics = metrics(s, w);
        interferenceAndWait(s, w, x.interference, x.wait);
        x.pipeline = pipeline(s, w);
        x.alltoall = alltoall(s, w);
        const json& b = field(s, "bottleneck", w);
        const std::string bw = w + ".bottleneck";
        x.bottleneck.collective = static_cast<int>(optInteger(b, "collective", bw).value_or(-1));
        x.bottleneck.exposed_ns = optInteger(b, "exposed_ns", bw).value_or(0);
        if (has(b, "share")) x.bottleneck.share = optNumber(b, "share", bw);
        x.bottleneck.communicationBound = optText(b, "verdict", bw) == "communication-bound";
        x.bottleneck.findings = findings(b, bw);
        return x;
    }

    // The --interference table's rows; reports written before 4b lack them.
    std::vector<SignatureInterference> signatures(const json& d, const std::string& where) const {
        std::vector<SignatureInterference> out;
        if (!has(d, "interference")) return out;
        const json& arr = array(d, "interference", where);
        for (size_t i = 0; i < arr.size(); ++i) {
            const std::string w = where + ".interference[" + std::to_string(i) + "]";
            SignatureInterference s;
            s.name = text(arr[i], "name", w);
            const auto triple = [&](const char* key, std::array<uint32_t, 3>& into) {
                const json& v = array(arr[i], key, w);
                if (v.size() != 3) fail(w + "." + key, "does not hold three numbers");
                for (size_t k = 0; k < 3; ++k) {
                    if (!v[k].is_number_unsigned() || v[k].get<uint64_t>() > UINT32_MAX)
                        fail(w + "." + key, "holds a value that is not a 32-bit count");
                    into[k] = v[k].get<uint32_t>();
                }
            };
            triple("grid", s.grid);
            triple("block", s.block);
            s.isolated = static_cast<int>(integer(arr[i], "isolated", w));
            s.overlapped = static_cast<int>(integer(arr[i], "overlapped", w));
            s.baseline_ns = optInteger(arr[i], "baseline_ns", w);
            s.median_overlapped_ns = optInteger(arr[i], "median_overlapped_ns", w);
            s.slowdown_ns = optInteger(arr[i], "slowdown_ns", w);
            out.push_back(std::move(s));
        }
        return out;
    }

    DeviceAnalysis device(const json& d, const std::string& w) const {
        DeviceAnalysis x;
        x.rank = static_cast<int>(optInteger(d, "rank", w).value_or(-1));
        x.host = optText(d, "host", w);
        x.pid = optInteger(d, "pid", w).value_or(0);
        x.device = static_cast<uint32_t>(integer(d, "device", w));
        x.totals = metrics(field(d, "totals", w), w + ".totals");
        const json& totals = field(d, "totals", w);
        interferenceAndWait(totals, w + ".totals", x.interference, x.wait);
        if (auto v = optInteger(totals, "last_arrivals", w + ".totals")) x.last_arrivals = static_cast<int>(*v);
        x.delay_caused_ns = optDuration(totals, "delay_caused_ns", w + ".totals");
        x.pipeline = pipeline(totals, w + ".totals");
        x.alltoall = alltoall(totals, w + ".totals");
        x.clock_shift_ns = optInteger(d, "clock_shift_ns", w);
        const json& steps = array(d, "steps", w);
        for (size_t i = 0; i < steps.size(); ++i)
            x.steps.push_back(step(steps[i], w + ".steps[" + std::to_string(i) + "]"));
        const json& colls = array(d, "collectives", w);
        for (size_t i = 0; i < colls.size(); ++i)
            x.collectives.push_back(collective(colls[i], w + ".collectives[" + std::to_string(i) + "]"));
        x.findings = findings(d, w);
        if (auto n = optInteger(d, "dropped_records", w)) x.droppedRecords = static_cast<uint64_t>(*n);
        if (d.contains("end_reason") && d["end_reason"].is_string()) x.endReason = d["end_reason"].get<std::string>();
        x.signatures = signatures(d, w);
        x.gpu = optText(d, "gpu", w);
        x.gpuUuid = optText(d, "gpu_uuid", w);
        x.busbw = busBandwidth(d, w);
        x.straggler = straggler(d, w);
        return x;
    }

private:
    std::string origin_;
    mutable RecentTexts texts_;  // operations repeat a handful of names
};

// An integer field, or `fallback` when it is absent or not an integer.
int intOr(const json& obj, const char* key, int fallback) {
    if (!obj.is_object()) return fallback;
    const auto it = obj.find(key);
    if (it == obj.end() || !it->is_number_integer()) return fallback;
    const auto v = it->get<int64_t>();
    return v < INT32_MIN || v > INT32_MAX ? fallback : static_cast<int>(v);
}

// The top-level pipeline, all-to-all and point-to-point lists (absent in
// reports written before them).
void readPatterns(const Reader& r, const json& doc, Analysis& a) {
    const auto ref = [](const json& pair, const char* key) {
        const json& x = pair[key];
        return std::pair<int, int>{intOr(x, "device", -1), intOr(x, "collective", -1)};
    };
    if (r.has(doc, "p2p_transfers")) {
        const json& arr = r.array(doc, "p2p_transfers", "$");
        for (size_t i = 0; i < arr.size(); ++i) {
            const std::string w = "p2p_transfers[" + std::to_string(i) + "]";
            if (!arr[i].is_object() || !arr[i].contains("sender") || !arr[i].contains("receiver") ||
                !arr[i]["sender"].is_object() || !arr[i]["receiver"].is_object())
                r.fail(w, "needs a sender and a receiver");
            P2pTransfer t;
            t.sender = ref(arr[i], "sender");
            t.receiver = ref(arr[i], "receiver");
            t.commHash = r.optHex(arr[i], "comm_hash", w);
            t.bytes = static_cast<uint64_t>(r.optInteger(arr[i], "bytes", w).value_or(0));
            a.p2p.push_back(t);
        }
    }
    if (r.has(doc, "pipeline")) {
        const json& arr = r.array(doc, "pipeline", "$");
        for (size_t i = 0; i < arr.size(); ++i) {
            const std::string w = "pipeline[" + std::to_string(i) + "]";
            PipelineStep p;
            p.step = r.optText(arr[i], "step", w);
            p.stages = static_cast<int>(r.integer(arr[i], "stages", w));
            p.microbatches = static_cast<int>(r.integer(arr[i], "microbatches", w));
            p.start_ns = r.integer(arr[i], "start_ns", w);
            p.end_ns = r.integer(arr[i], "end_ns", w);
            p.theoretical_bubble_share = r.optNumber(arr[i], "theoretical_bubble_share", w);
            if (arr[i].contains("stage_devices") && arr[i]["stage_devices"].is_array())
                for (const auto& d : arr[i]["stage_devices"]) p.devices.push_back(r.deviceIndex(d));
            if (arr[i].contains("slowest")) p.slowest = r.deviceIndex(arr[i]["slowest"]);
            a.pipeline.push_back(p);
        }
    }
    if (r.has(doc, "alltoall")) {
        const json& arr = r.array(doc, "alltoall", "$");
        for (size_t i = 0; i < arr.size(); ++i) {
            const std::string w = "alltoall[" + std::to_string(i) + "]";
            AllToAllStep s;
            s.step = r.optText(arr[i], "step", w);
            s.dispatches = static_cast<int>(r.optInteger(arr[i], "exchanges", w).value_or(0));
            s.bytes_imbalance = r.optNumber(arr[i], "bytes_imbalance", w);
            s.time_imbalance = r.optNumber(arr[i], "time_imbalance", w);
            if (arr[i].contains("overloaded")) s.overloaded = r.deviceIndex(arr[i]["overloaded"]);
            s.exposed_ns = r.optInteger(arr[i], "exposed_ns", w).value_or(0);
            if (arr[i].contains("ranks") && arr[i]["ranks"].is_array())
                for (const auto& x : arr[i]["ranks"]) {
                    AllToAllRank rank;
                    rank.device = intOr(x, "device_index", -1);
                    rank.time_ns = r.optInteger(x, "time_ns", w).value_or(0);
                    rank.exposed_ns = r.optInteger(x, "exposed_ns", w).value_or(0);
                    if (auto b = r.optInteger(x, "bytes", w)) rank.bytes = static_cast<uint64_t>(*b);
                    s.ranks.push_back(rank);
                }
            if (arr[i].contains("pairs") && arr[i]["pairs"].is_array())
                for (const auto& x : arr[i]["pairs"])
                    if (x.is_object())
                        s.pairs.push_back({intOr(x, "src", -1), intOr(x, "dst", -1),
                                           static_cast<uint64_t>(r.optInteger(x, "bytes", w).value_or(0))});
            a.alltoall.push_back(s);
        }
    }
}

using DeviceReader = std::function<std::vector<DeviceAnalysis>(const json& doc, const Reader& r)>;

ReportFile readDocument(const json& doc, const std::string& origin, const DeviceReader& readDevices) {
    Reader r(origin);
    if (!doc.is_object() || !doc.contains("format") || doc["format"] != "overlapscope-report")
        throw CaptureError(origin, "not an overlapscope report (expected \"format\": \"overlapscope-report\")");
    ReportFile out;
    out.version = static_cast<int>(r.integer(doc, "version", "$"));
    if (out.version > kReportVersion)
        throw CaptureError(origin, "report version " + std::to_string(out.version) +
                                       " is newer than this overlapscope reads (" + std::to_string(kReportVersion) +
                                       ")");
    if (out.version < 1) r.fail("$.version", "must be at least 1");
    if (r.has(doc, "inputs"))
        for (const auto& i : r.array(doc, "inputs", "$"))
            if (i.is_string()) out.inputs.push_back(i.get<std::string>());

    Analysis& a = out.analysis;
    if (r.has(doc, "settings") && doc["settings"].is_object()) {
        const json& s = doc["settings"];
        if (s.contains("comm_kernel_patterns") && s["comm_kernel_patterns"].is_array())
            for (const auto& p : s["comm_kernel_patterns"])
                if (p.is_string()) a.settings.commKernelPatterns.push_back(p.get<std::string>());
        if (s.contains("comm_copies") && s["comm_copies"].is_boolean())
            a.settings.commCopies = s["comm_copies"].get<bool>();
        if (s.contains("step_pattern") && s["step_pattern"].is_string())
            a.settings.stepPattern = s["step_pattern"].get<std::string>();
        if (s.contains("small_collective_bytes") && s["small_collective_bytes"].is_number_unsigned())
            a.settings.smallCollectiveBytes = s["small_collective_bytes"].get<uint64_t>();
        if (s.contains("small_collective_count") && s["small_collective_count"].is_number_integer())
            a.settings.smallCollectiveCount = s["small_collective_count"].get<int>();
        if (s.contains("idle_gap_ns") && s["idle_gap_ns"].is_number_integer())
            a.settings.idleGapNs = s["idle_gap_ns"].get<int64_t>();
        if (s.contains("align") && s["align"].is_string())
            a.settings.alignCollectives = s["align"].get<std::string>() == "collectives";
        if (s.contains("microbatch_pattern") && s["microbatch_pattern"].is_string())
            a.settings.microbatchPattern = s["microbatch_pattern"].get<std::string>();
        a.settings.pipelineStages = intOr(s, "pipeline_stages", 0);
        if (s.contains("peak_busbw_gbps") && !s["peak_busbw_gbps"].is_null()) {
            a.settings.peakBusBwGbps = r.optGbps(s, "peak_busbw_gbps", "settings");
            if (!(*a.settings.peakBusBwGbps > 0))
                r.fail("settings.peak_busbw_gbps", "is " + s["peak_busbw_gbps"].dump() + ", not a positive bandwidth");
        }
        if (s.contains("straggler_late_ns") && s["straggler_late_ns"].is_number_integer())
            a.settings.stragglerLateNs = s["straggler_late_ns"].get<int64_t>();
    }
    a.devices = readDevices(doc, r);
    for (size_t i = 0; i < a.devices.size(); ++i) a.devices[i].processIndex = static_cast<int>(i);
    // With two or more devices a null wait is unknown waiting (SendRecv
    // kernels without a peer), not the one-device case.
    if (a.devices.size() >= 2) {
        const WaitTransferMetrics unknown{0, 0, 0, -1};
        for (auto& d : a.devices) {
            if (!d.wait) d.wait = unknown;
            for (auto& s : d.steps)
                if (!s.wait) s.wait = unknown;
        }
    }
    a.summary = r.metrics(r.field(doc, "summary", "$"), "summary");
    if (auto n = r.optInteger(r.field(doc, "summary", "$"), "dropped_records", "summary"))
        a.droppedRecords = static_cast<uint64_t>(*n);  // null: no capture said
    if (r.has(doc, "matched_collectives")) {
        const json& arr = r.array(doc, "matched_collectives", "$");
        for (size_t i = 0; i < arr.size(); ++i) {
            const std::string w = "matched_collectives[" + std::to_string(i) + "]";
            MatchedCollective m;
            m.collective = r.optText(arr[i], "collective", w);
            m.commHash = r.optHex(arr[i], "comm_hash", w);
            if (auto s = r.optInteger(arr[i], "seq_number", w)) m.seqNumber = static_cast<uint64_t>(*s);
            for (const auto& inst : r.array(arr[i], "instances", w))
                m.instances.emplace_back(static_cast<int>(r.integer(inst, "device", w)),
                                         static_cast<int>(r.integer(inst, "collective", w)));
            m.skew_ns = r.integer(arr[i], "skew_ns", w);
            m.transfer_ns = r.optInteger(arr[i], "transfer_ns", w).value_or(0);
            m.pointToPoint = arr[i].contains("point_to_point") && arr[i]["point_to_point"].is_boolean() &&
                             arr[i]["point_to_point"].get<bool>();
            a.matched.push_back(m);
        }
    }
    a.total_skew_ns = r.optInteger(doc, "total_skew_ns", "$").value_or(0);
    if (r.has(doc, "spread") && !doc["spread"].is_null()) {
        const json& s = doc["spread"];
        RankSpread sp;
        sp.step_time_min_ns = r.optDuration(s, "step_time_min_ns", "spread");
        sp.step_time_median_ns = r.optDuration(s, "step_time_median_ns", "spread");
        sp.step_time_max_ns = r.optDuration(s, "step_time_max_ns", "spread");
        sp.overlap_ratio_min = r.optShare(s, "overlap_ratio_min", "spread");
        sp.overlap_ratio_median = r.optShare(s, "overlap_ratio_median", "spread");
        sp.overlap_ratio_max = r.optShare(s, "overlap_ratio_max", "spread");
        a.spread = sp;
    }
    readPatterns(r, doc, a);
    if (r.has(doc, "warnings") && doc["warnings"].is_array())
        for (const auto& w : doc["warnings"])
            if (w.is_string()) a.warnings.push_back(w.get<std::string>());
    return out;
}

// The devices from the document itself.
std::vector<DeviceAnalysis> devicesOf(const json& doc, const Reader& r) {
    const json& devices = r.array(doc, "devices", "$");
    std::vector<DeviceAnalysis> out;
    out.reserve(devices.size());
    for (size_t i = 0; i < devices.size(); ++i)
        out.push_back(r.device(devices[i], "devices[" + std::to_string(i) + "]"));
    return out;
}

// Each element of "devices" parsed from its own text, on several threads.
std::vector<DeviceAnalysis> devicesOf(const std::string& text, const MemberSpans& spans, const Reader& r) {
    std::vector<DeviceAnalysis> out(spans.items.size());
    forEachItem(text, spans,
                [&](size_t i, const json& d) { out[i] = r.device(d, "devices[" + std::to_string(i) + "]"); });
    return out;
}

}  // namespace

ReportFile parseReportJson(const std::string& text, const std::string& origin) {
    // A report of many devices: the devices' text apart from the rest.
    if (text.size() >= kSplitReportBytes)
        if (const auto spans = topLevelArraySpans(text, "devices")) {
            std::string rest = text.substr(0, spans->open + 1);
            rest.append(text, spans->close, std::string::npos);
            try {
                const json doc = json::parse(rest);
                return readDocument(doc, origin,
                                    [&](const json&, const Reader& r) { return devicesOf(text, *spans, r); });
            } catch (const json::exception&) {
            } catch (const ItemNotJson&) {
                // Not JSON: read as one document below, so that the message names the place in the file.
            }
        }
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::exception& e) {
        // parse_error, and out_of_range for a number too large (1e999).
        throw CaptureError(origin, std::string("not JSON: ") + e.what());
    }
    return readDocument(doc, origin, [](const json& d, const Reader& r) { return devicesOf(d, r); });
}

DeviceAnalysis parseDeviceJson(const std::string& text, const std::string& origin) {
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::exception& e) {
        // parse_error, and out_of_range for a number too large (1e999).
        throw CaptureError(origin, std::string("not JSON: ") + e.what());
    }
    return Reader(origin).device(doc, "device");
}

ReportFile readReportJson(const std::string& path) {
    // Opened without blocking and checked to be a file: opening a FIFO to
    // read would wait for a writer forever.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        const int error = errno;
        if (error == ENOENT) throw CaptureError(path, "no such file or directory");
        throw CaptureError(path, std::string("cannot open: ") + std::strerror(error));
    }
    std::string text;
    struct stat st {};
    const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    int error = 0;
    if (regular) {
        // Its size up front: appending 900 MB in chunks copied it over and over.
        text.reserve(static_cast<size_t>(st.st_size));
        char chunk[1 << 16];
        for (;;) {
            const ssize_t n = ::read(fd, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) error = errno;
            if (n <= 0) break;
            text.append(chunk, static_cast<size_t>(n));
        }
    }
    ::close(fd);
    if (!regular) throw CaptureError(path, "not a regular file; give a saved JSON report");
    if (error != 0) throw CaptureError(path, std::string("read error: ") + std::strerror(error));
    return parseReportJson(text, path);
}

}  // namespace osc::report
