#include "analyzer/report/json_members.h"
#include "analyzer/report/json_or_null.h"
#include "analyzer/report/rendered_ahead.h"
#include "analyzer/report/report_format.h"
#include "analyzer/report/report_json.h"
#include "analyzer/report/report_patterns.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <ostream>
#include <sstream>

namespace osc::report {
namespace {

// Names come from files and may be broken UTF-8: replaced (U+FFFD), not thrown on.
constexpr auto kInvalidUtf8 = nlohmann::json::error_handler_t::replace;

using nlohmann::ordered_json;

// "0x" and 16 lowercase hex digits ("0x%016llx"), into `out`: once per
// collective, where snprintf and a string on the heap were 2 % of a report.
constexpr size_t kHexLength = 18;
void hexDigits(uint64_t v, char* out) {
    static constexpr char kDigits[] = "0123456789abcdef";
    out[0] = '0';
    out[1] = 'x';
    for (size_t i = kHexLength; i > 2; --i, v >>= 4) out[i - 1] = kDigits[v & 0xf];
}

// As text: 64-bit hashes exceed what JSON readers in JavaScript keep exactly.
std::string hexText(uint64_t v) {
    char buf[kHexLength];
    hexDigits(v, buf);
    return std::string(buf, kHexLength);
}

ordered_json hexOrNull(const std::optional<uint64_t>& v) { return v ? ordered_json(hexText(*v)) : nullptr; }

// The members below are most of a device's object besides its collectives
// (a step has about sixty): written member by member (JsonMembers), not
// through a json tree, the same bytes.
void metricsMembers(JsonMembers& j, const OverlapMetrics& m) {
    j.integer("window_ns", m.window_ns);
    j.integer("compute_ns", m.compute_ns);
    j.integer("comm_ns", m.comm_ns);
    j.integer("overlap_ns", m.overlap_ns);
    j.integer("exposed_comm_ns", m.exposed_comm_ns);
    j.integer("busy_ns", m.busy_ns);
    j.integer("idle_ns", m.idle_ns);
    j.number("overlap_ratio", m.overlap_ratio);
    j.number("achieved_speedup", m.achieved_speedup);
    j.number("ideal_speedup", m.ideal_speedup);
}

// docs/design.md 4b and 4c fields of one window; 4c ones are null with one
// device, and where SendRecv kernels without a peer make waiting unknown.
void interferenceAndWaitMembers(JsonMembers& j, const InterferenceMetrics& i,
                                const std::optional<WaitTransferMetrics>& w) {
    // Compute ran under communication but none of it has a baseline: what
    // overlap cost it is unknown, not 0 (then the net gain is unknown too).
    const bool measured = i.overlapped_compute_ns == 0 || i.interfered_compute_ns > 0;
    const auto when = [](bool known, TimeNs v) { return known ? std::optional<int64_t>(v) : std::nullopt; };
    j.integer("overlapped_compute_ns", i.overlapped_compute_ns);
    j.integer("interfered_compute_ns", i.interfered_compute_ns);
    j.integerOrNull("interference_ns", when(measured, i.interference_ns));
    j.number("interference_coverage", i.interference_coverage);
    j.number("compute_slowdown", i.compute_slowdown);
    j.integerOrNull("net_overlap_gain_ns", when(measured, i.net_overlap_gain_ns));
    const bool known = w && w->known();
    j.integerOrNull("comm_wait_ns", when(known, known ? w->comm_wait_ns : 0));
    j.integerOrNull("exposed_wait_ns", when(known, known ? w->exposed_wait_ns : 0));
    j.integerOrNull("exposed_transfer_ns", when(known, known ? w->exposed_transfer_ns : 0));
    // Why the three are null: with a count, peers were missing (the text
    // names it); null, one device. A report read back says the same.
    j.integerOrNull("kernels_without_peer", when(w.has_value(), w ? w->kernels_without_peer : 0));
}

// Pipeline bubble fields (docs/metrics.md 7e), null without a pipeline;
// a step also carries its stage, the pipeline's shape and whether it is slowest.
void pipelineMembers(JsonMembers& j, const std::optional<PipelineStageMetrics>& m, bool step) {
    const auto time = [&](TimeNs PipelineStageMetrics::*f) {
        return m ? std::optional<int64_t>((*m).*f) : std::nullopt;
    };
    j.integerOrNull("pipeline_window_ns", time(&PipelineStageMetrics::window_ns));
    j.integerOrNull("bubble_ns", time(&PipelineStageMetrics::bubble_ns));
    j.number("bubble_share", m ? m->bubble_share : std::nullopt);
    j.number("theoretical_bubble_share", m ? m->theoretical_bubble_share : std::nullopt);
    j.integerOrNull("fill_ns", time(&PipelineStageMetrics::fill_ns));
    j.integerOrNull("drain_ns", time(&PipelineStageMetrics::drain_ns));
    j.integerOrNull("stall_ns", time(&PipelineStageMetrics::stall_ns));
    if (!step) return;
    const auto count = [&](int PipelineStageMetrics::*f) { return m ? std::optional<int64_t>((*m).*f) : std::nullopt; };
    j.integerOrNull("pipeline_stage", count(&PipelineStageMetrics::stage));
    j.integerOrNull("pipeline_stages", count(&PipelineStageMetrics::stages));
    j.integerOrNull("microbatches", count(&PipelineStageMetrics::microbatches));
    if (m)
        j.boolean("slowest_stage", m->slowest);
    else
        j.null("slowest_stage");
}

// All-to-all fields (docs/metrics.md 7f), null without all-to-all.
void allToAllMembers(JsonMembers& j, const std::optional<AllToAllMetrics>& m) {
    const auto v = [&](auto AllToAllMetrics::*f) { return m ? std::optional<int64_t>((*m).*f) : std::nullopt; };
    j.integerOrNull("alltoall_ops", v(&AllToAllMetrics::ops));
    j.integerOrNull("alltoall_ns", v(&AllToAllMetrics::alltoall_ns));
    j.integerOrNull("exposed_alltoall_ns", v(&AllToAllMetrics::exposed_alltoall_ns));
    j.integerOrNull("alltoall_transfer_ns", v(&AllToAllMetrics::transfer_ns));
    j.unsignedOrNull("alltoall_bytes_sent", m ? m->bytes_sent : std::nullopt);
    j.unsignedOrNull("alltoall_bytes_received", m ? m->bytes_received : std::nullopt);
}

// Values that are unknown when negative (ranks) or empty (names from files).
ordered_json rankOrNull(int rank) { return rank >= 0 ? ordered_json(rank) : ordered_json(nullptr); }
ordered_json textOrNull(const std::string& s) { return s.empty() ? ordered_json(nullptr) : ordered_json(s); }

ordered_json deviceRef(const Analysis& a, int device) {
    if (device < 0 || static_cast<size_t>(device) >= a.devices.size()) return nullptr;
    const auto& d = a.devices[static_cast<size_t>(device)];
    return {{"device_index", device}, {"rank", rankOrNull(d.rank)}, {"device", d.device}, {"label", deviceLabel(d)}};
}

ordered_json pipelineJson(const Analysis& a, const PipelineStep& p) {
    ordered_json stages = ordered_json::array();
    for (int d : p.devices) stages.push_back(deviceRef(a, d));
    return {{"step", p.step},
            {"stages", p.stages},
            {"microbatches", p.microbatches},
            {"start_ns", p.start_ns},
            {"end_ns", p.end_ns},
            {"window_ns", p.end_ns - p.start_ns},
            {"theoretical_bubble_share", orNull(p.theoretical_bubble_share)},
            {"stage_devices", stages},
            {"slowest", deviceRef(a, p.slowest)}};
}

ordered_json alltoallJson(const Analysis& a, const AllToAllStep& s) {
    ordered_json ranks = ordered_json::array(), pairs = ordered_json::array();
    for (const auto& r : s.ranks)
        ranks.push_back({{"device_index", r.device},
                         {"label", deviceName(a, r.device)},
                         {"bytes", orNull(r.bytes)},
                         {"time_ns", r.time_ns},
                         {"exposed_ns", r.exposed_ns}});
    for (const auto& p : s.pairs) pairs.push_back({{"src", p.src}, {"dst", p.dst}, {"bytes", p.bytes}});
    return {{"step", s.step},
            {"exchanges", s.dispatches},
            {"bytes_imbalance", orNull(s.bytes_imbalance)},
            {"time_imbalance", orNull(s.time_imbalance)},
            {"overloaded", deviceRef(a, s.overloaded)},
            {"exposed_ns", s.exposed_ns},
            {"ranks", ranks},
            {"pairs", pairs}};
}

ordered_json signatureJson(const SignatureInterference& s) {
    ordered_json j;
    j["name"] = s.name;
    j["grid"] = {s.grid[0], s.grid[1], s.grid[2]};
    j["block"] = {s.block[0], s.block[1], s.block[2]};
    j["isolated"] = s.isolated;
    j["overlapped"] = s.overlapped;
    j["baseline_ns"] = orNull(s.baseline_ns);
    j["median_overlapped_ns"] = orNull(s.median_overlapped_ns);
    j["slowdown_ns"] = orNull(s.slowdown_ns);
    return j;
}

ordered_json busBandwidthJson(const std::optional<BusBandwidth>& b) {
    if (!b) return nullptr;
    ordered_json classes = ordered_json::array();
    for (const auto& c : b->classes)
        classes.push_back({{"collective", c.collective},
                           {"size_class_bytes", c.size_class},
                           {"count", c.count},
                           {"median_algbw_gbps", orNull(c.median_algbw_gbps)},
                           {"median_busbw_gbps", orNull(c.median_busbw_gbps)},
                           {"median_busbw_fraction", orNull(c.median_busbw_fraction)}});
    return {{"peak_busbw_gbps", orNull(b->peak_busbw_gbps)},
            {"link", b->link.empty() ? ordered_json(nullptr) : ordered_json(b->link)},
            {"measured", b->measured},
            {"median_algbw_gbps", orNull(b->median_algbw_gbps)},
            {"median_busbw_gbps", orNull(b->median_busbw_gbps)},
            {"median_busbw_fraction", orNull(b->median_busbw_fraction)},
            {"bandwidth_limit_exposed_ns", b->bandwidth_limit_exposed_ns},
            {"schedule_limit_exposed_ns", b->schedule_limit_exposed_ns},
            {"by_size", classes}};
}

ordered_json namedTimesJson(const std::vector<NamedTime>& v) {
    ordered_json arr = ordered_json::array();
    for (const auto& n : v) arr.push_back({{"name", n.name}, {"ns", n.ns}});
    return arr;
}

ordered_json stragglerJson(const std::optional<StragglerMetrics>& s) {
    if (!s) return nullptr;
    const LateArrival& w = s->worst;
    const ordered_json worst = {{"collective", w.collective},
                                {"comm_hash", hexOrNull(w.commHash)},
                                {"number", w.number},
                                {"collective_index", w.collectiveIndex},
                                {"step", w.step.empty() ? ordered_json(nullptr) : ordered_json(w.step)},
                                {"median_device_index", w.medianDevice},
                                {"median_label", w.medianLabel},
                                {"late_ns", w.late_ns},
                                {"delay_ns", w.delay_ns},
                                {"late_start_ns", orNull(w.late_start_ns)},
                                {"compute_ns", orNull(w.compute_ns)},
                                {"host_idle_ns", orNull(w.host_idle_ns)},
                                {"other_ns", orNull(w.other_ns)},
                                {"kernels", namedTimesJson(w.kernels)},
                                {"host", namedTimesJson(w.host)}};
    return {{"late_arrivals", s->late_arrivals},
            {"late_ns", s->late_ns},
            {"late_start_ns", s->late_start_ns},
            {"compute_ns", s->compute_ns},
            {"host_idle_ns", s->host_idle_ns},
            {"other_ns", s->other_ns},
            {"worst", worst}};
}

void findingMembers(JsonMembers& j, const Finding& f) {
    j.string("kind", toString(f.kind));
    j.string("message", f.message);
    j.integer("exposed_ns", f.exposed_ns);
}

void findingsMember(JsonMembers& j, const std::vector<Finding>& findings) {
    j.objects("findings", findings.size(), [&](size_t i, JsonMembers& f) { findingMembers(f, findings[i]); });
}

void stepMembers(JsonMembers& j, const DeviceAnalysis& d, const StepAnalysis& s) {
    j.string("name", s.name);
    j.integer("start_ns", s.start_ns);
    j.integer("end_ns", s.end_ns);
    metricsMembers(j, s.metrics);
    interferenceAndWaitMembers(j, s.interference, s.wait);
    pipelineMembers(j, s.pipeline, true);
    allToAllMembers(j, s.alltoall);
    const auto& b = s.bottleneck;
    j.object("bottleneck", [&](JsonMembers& bj) {
        const bool has = b.collective >= 0 && static_cast<size_t>(b.collective) < d.collectives.size();
        if (has) {
            bj.integer("collective", b.collective);
            bj.string("name", describeCollective(d.collectives[static_cast<size_t>(b.collective)]));
        } else {
            bj.null("collective");
            bj.null("name");
        }
        bj.integer("exposed_ns", b.exposed_ns);
        bj.number("share", b.share);
        bj.string("verdict", b.communicationBound ? "communication-bound" : "compute-bound");
        findingsMember(bj, b.findings);
    });
}

// The hot path of big reports (millions of collectives and as many matched
// instances): one object appended member by member (fill(JsonMembers&)) in
// exactly the layout nlohmann::json::dump(2) gives (dump(-1)'s with a
// negative indent), without building a tree or a json value, into a buffer
// each thread keeps, then written at once.
template <class Fill>
void writeObject(std::ostream& os, int indent, Fill fill) {
    thread_local std::string text;
    text.clear();
    JsonMembers m(text, indent);
    fill(m);
    m.close();
    os.write(text.data(), static_cast<std::streamsize>(text.size()));
}

void hexMember(JsonMembers& m, std::string_view key, const std::optional<uint64_t>& v) {
    if (!v) return m.null(key);
    char buf[kHexLength];
    hexDigits(*v, buf);
    m.string(key, std::string_view(buf, kHexLength));
}

void collectiveMembers(JsonMembers& m, const CollectiveInstance& c) {
    m.string("name", c.name);
    // Unknown (a Generic kernel without plugin rows) or inapplicable (an
    // AllGather's element type): null, not "".
    m.stringOrNull("collective", c.collective);
    m.stringOrNull("datatype", c.datatype);
    m.integer("start_ns", c.start_ns);
    m.integer("end_ns", c.end_ns);
    m.integer("stream", c.stream);
    m.integer("duration_ns", c.duration_ns);
    m.integer("overlapped_ns", c.overlapped_ns);
    m.integer("exposed_ns", c.exposed_ns);
    m.unsignedOrNull("bytes", c.bytes);
    m.number("bandwidth_gbps", c.bandwidth_gbps);
    hexMember(m, "comm_hash", c.commHash);
    m.unsignedOrNull("seq_number", c.seqNumber);
    m.stringOrNull("algo", c.algo);
    m.stringOrNull("proto", c.proto);
    if (c.step >= 0)
        m.integer("step", c.step);
    else
        m.null("step");
    m.number("algbw_gbps", c.algbw_gbps);
    m.number("busbw_gbps", c.busbw_gbps);
    if (c.busbw_basis == BusBwBasis::None)
        m.null("busbw_basis");
    else
        m.string("busbw_basis", toString(c.busbw_basis));
    m.number("busbw_fraction", c.busbw_fraction);
}

void writeCollective(std::ostream& os, int indent, const CollectiveInstance& c) {
    writeObject(os, indent, [&](JsonMembers& m) { collectiveMembers(m, c); });
}

// Writes the document piece by piece: per-collective and per-step objects are
// built and dumped one at a time, so a capture with millions of collectives
// never holds the whole JSON tree in memory. Output matches dump(2), or with
// a negative indent dump(-1) (one line: analyzer/partial's partial results).
class ObjectWriter {
public:
    ObjectWriter(std::ostream& os, int indent) : os_(os), indent_(indent), compact_(indent < 0) { os_ << "{"; }

    void field(const std::string& key, const ordered_json& value) {
        next(key);
        os_ << (compact_ ? value.dump(-1, ' ', false, kInvalidUtf8)
                         : reindent(value.dump(2, ' ', false, kInvalidUtf8), indent_ + 2));
    }
    template <typename Item>
    void arrayField(const std::string& key, size_t n, Item item) {
        next(key);
        os_ << "[";
        for (size_t i = 0; i < n; ++i) {
            if (compact_)
                os_ << (i ? "," : "") << item(i).dump(-1, ' ', false, kInvalidUtf8);
            else
                os_ << (i ? ",\n" : "\n") << pad(indent_ + 4)
                    << reindent(item(i).dump(2, ' ', false, kInvalidUtf8), indent_ + 4);
        }
        if (n && !compact_) os_ << "\n" << pad(indent_ + 2);
        os_ << "]";
    }
    // An array whose items write themselves: item(ostream&, indent of the item, i).
    template <typename Item>
    void rawArrayField(const std::string& key, size_t n, Item item) {
        itemsArrayField(key, n, [&](std::ostream& os, int indent) {
            for (size_t i = 0; i < n; ++i) {
                itemStart(os, indent, i);
                item(os, indent, i);
            }
        });
    }
    // An array of n items that items(ostream&, indent of an item) writes,
    // each after its itemStart().
    template <typename Items>
    void itemsArrayField(const std::string& key, size_t n, Items items) {
        next(key);
        os_ << "[";
        items(os_, compact_ ? -1 : indent_ + 4);
        if (n && !compact_) os_ << "\n" << pad(indent_ + 2);
        os_ << "]";
    }
    // What comes before item i of an array whose items are indented `indent`.
    static void itemStart(std::ostream& os, int indent, size_t i) {
        if (indent < 0) {
            if (i) os << ',';
            return;
        }
        os << (i ? ",\n" : "\n") << pad(indent);
    }
    // An array of objects each written field by field: body(ObjectWriter&, i).
    template <typename Body>
    void objectArrayField(const std::string& key, size_t n, Body body) {
        next(key);
        os_ << "[";
        for (size_t i = 0; i < n; ++i) {
            if (compact_)
                os_ << (i ? "," : "");
            else
                os_ << (i ? ",\n" : "\n") << pad(indent_ + 4);
            ObjectWriter inner(os_, compact_ ? -1 : indent_ + 4);
            body(inner, i);
            inner.close();
        }
        if (n && !compact_) os_ << "\n" << pad(indent_ + 2);
        os_ << "]";
    }
    // A member whose value is an object written member by member: fill(JsonMembers&).
    template <typename Fill>
    void membersField(const std::string& key, Fill fill) {
        next(key);
        writeObject(os_, compact_ ? -1 : indent_ + 2, fill);
    }
    // An array of objects, each written member by member: fill(i, JsonMembers&).
    template <typename Fill>
    void membersArrayField(const std::string& key, size_t n, Fill fill) {
        rawArrayField(key, n, [&](std::ostream& os, int indent, size_t i) {
            writeObject(os, indent, [&](JsonMembers& m) { fill(i, m); });
        });
    }
    void close() { os_ << (first_ || compact_ ? "" : "\n" + pad(indent_)) << "}"; }

private:
    static std::string pad(int n) { return std::string(static_cast<size_t>(n), ' '); }
    static std::string reindent(const std::string& text, int by) {
        if (text.find('\n') == std::string::npos) return text;
        std::string out;
        out.reserve(text.size() + 64);
        const std::string p = pad(by);
        for (char c : text) {
            out += c;
            if (c == '\n') out += p;
        }
        return out;
    }
    void next(const std::string& key) {
        std::string text = compact_ ? (first_ ? "" : ",") : (first_ ? "\n" : ",\n") + pad(indent_ + 2);
        appendJsonString(text, key);
        text += compact_ ? ":" : ": ";
        os_ << text;
        first_ = false;
    }
    std::ostream& os_;
    int indent_;
    bool compact_;
    bool first_ = true;
};

// Collectives rendered per run on the writer's threads: one device's are
// most of a large report (a 1 GB PyTorch trace: 135 of its 198 MB).
constexpr size_t kCollectivesPerRun = 2048;

// A device's collectives as items of an array indented `indent`, those of
// a device of many on `threads` threads, run by run.
void writeCollectives(std::ostream& os, int indent, const std::vector<CollectiveInstance>& c, int threads) {
    const auto writeRun = [&](std::ostream& out, size_t from, size_t to) {
        for (size_t i = from; i < to; ++i) {
            ObjectWriter::itemStart(out, indent, i);
            writeCollective(out, indent, c[i]);
        }
    };
    const size_t runs = (c.size() + kCollectivesPerRun - 1) / kCollectivesPerRun;
    if (threads <= 1 || runs < 4) return writeRun(os, 0, c.size());
    RenderedAhead ahead(
        runs,
        [&](std::ostream& out, size_t run) {
            writeRun(out, run * kCollectivesPerRun, std::min(c.size(), (run + 1) * kCollectivesPerRun));
        },
        threads);
    for (size_t run = 0; run < runs; ++run) ahead.write(os, run);
}

ordered_json settingsJson(const AnalysisSettings& s) {
    return {{"comm_kernel_patterns", s.commKernelPatterns},
            {"comm_copies", s.commCopies},
            {"step_pattern", s.stepPattern},
            {"small_collective_bytes", s.smallCollectiveBytes},
            {"small_collective_count", s.smallCollectiveCount},
            {"idle_gap_ns", s.idleGapNs},
            {"align", s.alignCollectives ? "collectives" : "session-start"},
            {"microbatch_pattern", s.microbatchPattern},
            {"pipeline_stages", s.pipelineStages},
            {"peak_busbw_gbps", orNull(s.peakBusBwGbps)},
            {"straggler_late_ns", s.stragglerLateNs}};
}

// The device object. analyzer/partial's merge writes these objects again
// with the cross-rank fields filled in (partial_device_json.cpp): every
// absolute time inside must be a field named start_ns or end_ns, and
// clock_shift_ns stays the last field.
void writeDevice(ObjectWriter& w, const DeviceAnalysis& d, int threads) {
    w.field("rank", rankOrNull(d.rank));
    w.field("host", textOrNull(d.host));
    w.field("pid", d.pid > 0 ? ordered_json(d.pid) : ordered_json(nullptr));  // 0: the file named no process
    w.field("device", d.device);
    w.membersField("totals", [&](JsonMembers& totals) {
        metricsMembers(totals, d.totals);
        interferenceAndWaitMembers(totals, d.interference, d.wait);
        totals.integerOrNull("last_arrivals", d.last_arrivals);
        totals.integerOrNull("delay_caused_ns", d.delay_caused_ns);
        pipelineMembers(totals, d.pipeline, false);
        allToAllMembers(totals, d.alltoall);
    });
    w.membersArrayField("steps", d.steps.size(), [&](size_t i, JsonMembers& m) { stepMembers(m, d, d.steps[i]); });
    w.itemsArrayField("collectives", d.collectives.size(),
                      [&](std::ostream& os, int indent) { writeCollectives(os, indent, d.collectives, threads); });
    // Added fields (version 1 allows additions).
    w.field("label", deviceLabel(d));
    w.field("verdict", verdict(d.totals));
    const auto b = deviceBottleneck(d);
    w.field("bottleneck",
            b.found ? ordered_json{{"name", b.label},
                                   {"position", b.position >= 0 ? ordered_json(b.position) : ordered_json(nullptr)},
                                   {"collective", b.collective},
                                   {"exposed_ns", b.exposed_ns},
                                   {"share", orNull(b.share)}}
                    : ordered_json(nullptr));
    w.membersArrayField("findings", d.findings.size(),
                        [&](size_t i, JsonMembers& f) { findingMembers(f, d.findings[i]); });
    // The capture's completeness (its process's counts; null when the file does not say).
    w.field("dropped_records", orNull(d.droppedRecords));
    w.field("end_reason", d.endReason ? ordered_json(*d.endReason) : ordered_json(nullptr));
    w.arrayField("interference", d.signatures.size(), [&](size_t i) { return signatureJson(d.signatures[i]); });
    // docs/design.md 4d: the GPU (its link's peak), bus bandwidth, and why it was late.
    w.field("gpu", d.gpu.empty() ? ordered_json(nullptr) : ordered_json(d.gpu));
    w.field("gpu_uuid", d.gpuUuid.empty() ? ordered_json(nullptr) : ordered_json(d.gpuUuid));
    w.field("busbw", busBandwidthJson(d.busbw));
    w.field("straggler", stragglerJson(d.straggler));
    if (d.clock_shift_ns) w.field("clock_shift_ns", *d.clock_shift_ns);
}

}  // namespace

void writeJsonReport(std::ostream& os, const Analysis& a, const ReportOptions& o) {
    StreamedReportBody body;
    body.deviceCount = a.devices.size();
    body.writeDevice = [&](std::ostream& out, int indent, size_t i) { writeDeviceJson(out, a.devices[i], indent); };
    body.matchedCount = a.matched.size();
    body.matched = [&](size_t i) { return a.matched[i]; };
    writeJsonReport(os, a, o, body);
}

void writeDeviceJson(std::ostream& os, const DeviceAnalysis& d, int indent, int threads) {
    ObjectWriter w(os, indent);
    writeDevice(w, d, threads);
    w.close();
}

void writeJsonReport(std::ostream& os, const Analysis& a, const ReportOptions& o, const StreamedReportBody& body) {
    ObjectWriter w(os, 0);
    w.field("format", "overlapscope-report");
    w.field("version", kReportVersion);
    if (!o.toolVersion.empty()) w.field("generator", "overlapscope " + o.toolVersion);
    w.field("inputs", o.inputs);
    w.field("settings", settingsJson(a.settings));
    w.rawArrayField("devices", body.deviceCount,
                    [&](std::ostream& out, int indent, size_t i) { body.writeDevice(out, indent, i); });

    w.membersField("summary", [&](JsonMembers& summary) {
        metricsMembers(summary, a.summary);
        summary.integer("device_count", static_cast<int64_t>(body.deviceCount));
        summary.string("verdict", verdict(a.summary));
        summary.unsignedOrNull("dropped_records", a.droppedRecords);
        pipelineMembers(summary, pipelineSummary(a), false);
        summary.integerOrNull("exposed_alltoall_ns", exposedAllToAll(a));
        double worst = 0;
        summary.number("alltoall_imbalance", worstAllToAll(a, &worst) ? std::optional<double>(worst) : std::nullopt);
    });

    w.rawArrayField("matched_collectives", body.matchedCount, [&](std::ostream& out, int indent, size_t i) {
        const MatchedCollective m = body.matched(i);
        writeObject(out, indent, [&](JsonMembers& j) {
            j.string("collective", m.collective);
            hexMember(j, "comm_hash", m.commHash);
            j.unsignedOrNull("seq_number", m.seqNumber);
            j.pairs("instances", m.instances, "device", "collective");
            j.integer("skew_ns", m.skew_ns);
            j.integer("transfer_ns", m.transfer_ns);
            j.boolean("point_to_point", m.pointToPoint);
        });
    });
    // Nothing matched across ranks (one device, or no common collective): no skew was measured.
    w.field("total_skew_ns", body.matchedCount > 0 ? ordered_json(a.total_skew_ns) : ordered_json(nullptr));
    if (a.spread) {
        const auto& sp = *a.spread;
        w.field("spread", {{"step_time_min_ns", orNull(sp.step_time_min_ns)},
                           {"step_time_median_ns", orNull(sp.step_time_median_ns)},
                           {"step_time_max_ns", orNull(sp.step_time_max_ns)},
                           {"overlap_ratio_min", orNull(sp.overlap_ratio_min)},
                           {"overlap_ratio_median", orNull(sp.overlap_ratio_median)},
                           {"overlap_ratio_max", orNull(sp.overlap_ratio_max)}});
    } else {
        w.field("spread", nullptr);
    }
    w.arrayField("p2p_transfers", a.p2p.size(), [&](size_t i) {
        const auto& t = a.p2p[i];
        return ordered_json{{"sender", {{"device", t.sender.first}, {"collective", t.sender.second}}},
                            {"receiver", {{"device", t.receiver.first}, {"collective", t.receiver.second}}},
                            {"comm_hash", hexOrNull(t.commHash)},
                            {"bytes", t.bytes}};
    });
    w.arrayField("pipeline", a.pipeline.size(), [&](size_t i) { return pipelineJson(a, a.pipeline[i]); });
    w.arrayField("alltoall", a.alltoall.size(), [&](size_t i) { return alltoallJson(a, a.alltoall[i]); });
    std::vector<std::string> warnings = o.inputWarnings;
    warnings.insert(warnings.end(), a.warnings.begin(), a.warnings.end());
    w.field("warnings", warnings);
    w.close();
    os << "\n";
}

std::string busBandwidthJsonText(const std::optional<BusBandwidth>& b) {
    return busBandwidthJson(b).dump(-1, ' ', false, kInvalidUtf8);
}

std::string stragglerJsonText(const std::optional<StragglerMetrics>& s) {
    return stragglerJson(s).dump(-1, ' ', false, kInvalidUtf8);
}

std::string formatJsonReport(const Analysis& a, const ReportOptions& o) {
    std::ostringstream os;
    writeJsonReport(os, a, o);
    return os.str();
}

}  // namespace osc::report
