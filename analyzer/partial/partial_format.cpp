#include "analyzer/partial/partial_format.h"

#include "analyzer/crossrank/device_records.h"
#include "analyzer/report/json_or_null.h"
#include "analyzer/report/report_json.h"

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>

namespace osc::partial {
namespace {

using nlohmann::ordered_json;
constexpr auto kReplace = nlohmann::json::error_handler_t::replace;

std::string str(const std::string& s) { return ordered_json(s).dump(-1, ' ', false, kReplace); }

template <typename T, typename Get>
void column(std::ostream& out, const char* name, const std::vector<T>& rows, Get get, bool first = false) {
    out << (first ? "" : ",") << '"' << name << "\":[";
    for (size_t i = 0; i < rows.size(); ++i) {
        if (i) out << ',';
        get(out, rows[i]);
    }
    out << ']';
}

template <typename T>
void optionalNumber(std::ostream& o, const std::optional<T>& v) {
    if (v)
        o << *v;
    else
        o << "null";
}

// The communicators the device belongs to, as (hash, rank) pairs, and the
// sends and receives of its point-to-point operations (docs/metrics.md 7d;
// SendRecv kernels without any count in a warning): per operation its
// communicator, rank and number of parts, then the parts' columns.
void writePointToPoint(std::ostream& out, const DeviceAnalysis& d) {
    using crossrank::P2pPartRecord;
    const std::vector<P2pPartRecord> records = crossrank::p2pRecordsOf(d);
    std::vector<const P2pPartRecord*> ops, parts;
    std::vector<size_t> partsOf;
    for (const auto& r : records) {
        if (ops.empty() || ops.back()->op != r.op) {
            ops.push_back(&r);
            partsOf.push_back(0);
        }
        if (r.parts == 0) continue;
        parts.push_back(&r);
        ++partsOf.back();
    }
    out << ",\"comm_ranks\":[";
    bool first = true;
    for (const auto& [hash, rank] : crossrank::commRanksOf(d)) {
        out << (first ? "" : ",") << hash << ',' << rank;
        first = false;
    }
    out << "],\"p2p\":{";
    using R = const P2pPartRecord*;
    const auto hashOf = [](R r) { return r->hasCommHash ? std::optional<uint64_t>(r->commHash) : std::nullopt; };
    const auto seqOf = [](R r) { return r->hasSeq ? std::optional<uint64_t>(r->seq) : std::nullopt; };
    column(
        out, "op", ops, [](std::ostream& o, R r) { o << r->op; }, true);
    column(out, "comm_hash", ops, [&](std::ostream& o, R r) { optionalNumber(o, hashOf(r)); });
    column(out, "comm_rank", ops, [](std::ostream& o, R r) { o << r->commRank; });
    column(out, "parts", partsOf, [](std::ostream& o, size_t n) { o << n; });
    column(out, "send", parts, [](std::ostream& o, R r) { o << (r->send ? 1 : 0); });
    column(out, "peer", parts, [](std::ostream& o, R r) { o << r->peer; });
    column(out, "bytes", parts, [](std::ostream& o, R r) { o << r->bytes; });
    column(out, "seq", parts, [&](std::ostream& o, R r) { optionalNumber(o, seqOf(r)); });
    out << '}';
}

// All-to-all operations (docs/metrics.md 7f): what the merge needs of each
// besides its times.
void writeAllToAll(std::ostream& out, const DeviceAnalysis& d) {
    using A = crossrank::AllToAllRecord;
    const std::vector<A> ops = crossrank::allToAllRecordsOf(d);
    const auto maybe = [](bool has, uint64_t v) { return has ? std::optional<uint64_t>(v) : std::nullopt; };
    out << ",\"alltoall\":{";
    column(
        out, "op", ops, [](std::ostream& o, const A& r) { o << r.op; }, true);
    column(out, "step", ops, [](std::ostream& o, const A& r) { o << r.step; });
    column(out, "duration_ns", ops, [](std::ostream& o, const A& r) { o << r.duration_ns; });
    column(out, "exposed_ns", ops, [](std::ostream& o, const A& r) { o << r.exposed_ns; });
    column(out, "sent", ops, [&](std::ostream& o, const A& r) { optionalNumber(o, maybe(r.hasSent, r.sent)); });
    column(out, "received", ops,
           [&](std::ostream& o, const A& r) { optionalNumber(o, maybe(r.hasReceived, r.received)); });
    column(out, "total", ops, [&](std::ostream& o, const A& r) { optionalNumber(o, maybe(r.hasTotal, r.total)); });
    out << '}';
}

// Micro-batches per step and, on a device that ran them, its compute
// (docs/metrics.md 7e: the pipeline window spans all stages).
void writeMicroBatches(std::ostream& out, const DeviceIntervals& iv) {
    using MB = DeviceIntervals::MicroBatches;
    const auto& mbs = iv.microbatches;
    out << ",\"microbatches\":{";
    column(
        out, "step", mbs, [](std::ostream& o, const MB& m) { o << m.step; }, true);
    column(out, "forward", mbs, [](std::ostream& o, const MB& m) { o << m.forward; });
    column(out, "backward", mbs, [](std::ostream& o, const MB& m) { o << m.backward; });
    column(out, "start", mbs, [](std::ostream& o, const MB& m) { o << m.compute.start; });
    column(out, "end", mbs, [](std::ostream& o, const MB& m) { o << m.compute.end; });
    out << '}';
    column(out, "compute", iv.compute, [](std::ostream& o, const Interval& i) { o << i.start << ',' << i.end; });
}

// docs/design.md 4d: per operation its bus bytes and factor, exposed time
// and step (the bandwidth), and per operation in a step its lead-up with what
// filled it (why a rank was late).
void writeCollectiveHealth(std::ostream& out, const DeviceAnalysis& d, const DeviceIntervals& iv) {
    using B = crossrank::BandwidthRecord;
    const std::vector<B> bw = crossrank::bandwidthRecordsOf(d);
    const auto maybe = [](bool has, uint64_t v) { return has ? std::optional<uint64_t>(v) : std::nullopt; };
    out << ",\"gpu\":" << str(d.gpu) << ",\"gpu_uuid\":" << str(d.gpuUuid) << ",\"bandwidth\":{";
    column(
        out, "bus_bytes", bw, [&](std::ostream& o, const B& r) { optionalNumber(o, maybe(r.hasBytes, r.busBytes)); },
        true);
    column(out, "bus_factor", bw, [](std::ostream& o, const B& r) {
        if (r.hasFactor)
            o << ordered_json(r.factor).dump();
        else
            o << "null";
    });
    column(out, "exposed_ns", bw, [](std::ostream& o, const B& r) { o << r.exposed_ns; });
    column(out, "step", bw, [](std::ostream& o, const B& r) { o << r.step; });
    column(out, "alltoall", bw, [](std::ostream& o, const B& r) { o << int(r.allToAll); });
    out << '}';
    using L = DeviceIntervals::LeadUp;
    using I = DeviceIntervals::LeadUpIncrement;
    out << ",\"lead_ups\":{";
    column(
        out, "op", iv.leadUps, [](std::ostream& o, const L& l) { o << l.op; }, true);
    column(out, "step", iv.leadUps, [](std::ostream& o, const L& l) { o << l.step; });
    column(out, "from_ns", iv.leadUps, [](std::ostream& o, const L& l) { o << l.from_ns; });
    column(out, "compute_ns", iv.leadUps, [](std::ostream& o, const L& l) { o << l.compute_ns; });
    column(out, "idle_ns", iv.leadUps, [](std::ostream& o, const L& l) { o << l.idle_ns; });
    column(out, "increments", iv.leadUps, [](std::ostream& o, const L& l) { o << l.increments; });
    column(out, "name", iv.leadUpIncrements, [](std::ostream& o, const I& x) { o << x.name; });
    column(out, "host", iv.leadUpIncrements, [](std::ostream& o, const I& x) { o << int(x.host); });
    column(out, "ns", iv.leadUpIncrements, [](std::ostream& o, const I& x) { o << x.ns; });
    column(out, "names", iv.leadUpNames, [](std::ostream& o, const std::string& n) { o << str(n); });
    out << '}';
}

// Where the idle-gap findings' messages name a time (Finding::at_ns): per
// window (-1 the whole device, else its step), for the merge to move to the
// job's timeline.
void writeMessageTimes(std::ostream& out, const DeviceAnalysis& d) {
    std::vector<std::pair<int, TimeNs>> at;
    const auto collect = [&](int window, const std::vector<Finding>& findings) {
        for (const auto& f : findings)
            if (f.kind == FindingKind::IdleGap && f.at_ns) at.emplace_back(window, *f.at_ns);
    };
    collect(-1, d.findings);
    for (size_t s = 0; s < d.steps.size(); ++s) collect(static_cast<int>(s), d.steps[s].bottleneck.findings);
    using Entry = std::pair<int, TimeNs>;
    out << ",\"idle_gap_at\":{";
    column(
        out, "window", at, [](std::ostream& o, const Entry& e) { o << e.first; }, true);
    column(out, "at_ns", at, [](std::ostream& o, const Entry& e) { o << e.second; });
    out << '}';
}

void writeDeviceLine(std::ostream& out, const DeviceAnalysis& d, const DeviceIntervals& iv) {
    const IntervalSet& exposed = iv.exposed;
    out << "{\"device\":{\"process\":" << d.processIndex << ",\"rank\":" << d.rank << ",\"host\":" << str(d.host)
        << ",\"pid\":" << d.pid << ",\"device\":" << d.device;
    const auto& t = d.totals;
    out << ",\"totals\":[" << t.window_ns << ',' << t.compute_ns << ',' << t.comm_ns << ',' << t.overlap_ns << ','
        << t.exposed_comm_ns << ',' << t.busy_ns << ',' << t.idle_ns << ']';

    out << ",\"steps\":{";
    column(
        out, "name", d.steps, [](std::ostream& o, const StepAnalysis& s) { o << str(s.name); }, true);
    column(out, "start_ns", d.steps, [](std::ostream& o, const StepAnalysis& s) { o << s.start_ns; });
    column(out, "end_ns", d.steps, [](std::ostream& o, const StepAnalysis& s) { o << s.end_ns; });
    column(out, "window_ns", d.steps, [](std::ostream& o, const StepAnalysis& s) { o << s.metrics.window_ns; });
    column(out, "comm_ns", d.steps, [](std::ostream& o, const StepAnalysis& s) { o << s.metrics.comm_ns; });
    column(out, "overlap_ns", d.steps, [](std::ostream& o, const StepAnalysis& s) { o << s.metrics.overlap_ns; });
    column(out, "exposed_comm_ns", d.steps,
           [](std::ostream& o, const StepAnalysis& s) { o << s.metrics.exposed_comm_ns; });
    out << '}';

    // Collective names by index: a device has a handful of kinds.
    std::map<std::string, size_t> nameIndex;
    std::vector<std::string> names;
    std::vector<size_t> nameOf;
    nameOf.reserve(d.collectives.size());
    for (const auto& c : d.collectives) {
        const auto [it, added] = nameIndex.emplace(c.collective.str(), names.size());
        if (added) names.push_back(c.collective.str());
        nameOf.push_back(it->second);
    }
    out << ",\"ops\":{";
    column(
        out, "collective_names", names, [](std::ostream& o, const std::string& n) { o << str(n); }, true);
    column(out, "collective", nameOf, [](std::ostream& o, size_t i) { o << i; });
    column(out, "comm_hash", d.collectives, [](std::ostream& o, const CollectiveInstance& c) {
        if (c.commHash)
            o << *c.commHash;
        else
            o << "null";
    });
    column(out, "seq_number", d.collectives, [](std::ostream& o, const CollectiveInstance& c) {
        if (c.seqNumber)
            o << *c.seqNumber;
        else
            o << "null";
    });
    column(out, "start_ns", d.collectives, [](std::ostream& o, const CollectiveInstance& c) { o << c.start_ns; });
    column(out, "end_ns", d.collectives, [](std::ostream& o, const CollectiveInstance& c) { o << c.end_ns; });
    out << '}';
    column(out, "exposed_comm", exposed, [](std::ostream& o, const Interval& i) { o << i.start << ',' << i.end; });
    writePointToPoint(out, d);
    writeAllToAll(out, d);
    writeMicroBatches(out, iv);
    writeMessageTimes(out, d);
    writeCollectiveHealth(out, d, iv);
    out << "}}\n";
}

}  // namespace

std::string settingsLine(const AnalysisSettings& s, bool withAlign) {
    ordered_json j = {{"comm_kernel_patterns", s.commKernelPatterns},
                      {"comm_copies", s.commCopies},
                      {"step_pattern", s.stepPattern},
                      {"small_collective_bytes", s.smallCollectiveBytes},
                      {"small_collective_ns", s.smallCollectiveNs},
                      {"small_collective_count", s.smallCollectiveCount},
                      {"idle_gap_ns", s.idleGapNs},
                      {"microbatch_pattern", s.microbatchPattern},
                      {"pipeline_stages", s.pipelineStages},
                      {"bubble_excess_share", s.bubbleExcessShare},
                      {"alltoall_imbalance", s.alltoallImbalance},
                      {"straggler_late_ns", s.stragglerLateNs}};
    if (withAlign) {
        j["align"] = s.alignCollectives ? "collectives" : "session-start";
        j["peak_busbw_gbps"] = s.peakBusBwGbps ? ordered_json(*s.peakBusBwGbps) : ordered_json(nullptr);
    }
    return j.dump(-1, ' ', false, kReplace);
}

void writePartialHeader(std::ostream& out, const PartialHeader& h) {
    out << kPartialMagic << ",\"version\":" << kPartialVersion << ",\"generator\":" << str(h.generator)
        << ",\"inputs\":" << ordered_json(h.inputs).dump(-1, ' ', false, kReplace)
        << ",\"settings\":" << settingsLine(h.settings, true) << "}\n";
}

size_t writeFileSection(std::ostream& out, const FilePart& part) {
    const Analysis& a = part.analysis;
    ordered_json processes = ordered_json::array();
    for (const auto& p : part.processes) processes.push_back({{"rank", p.rank}, {"host", p.host}, {"pid", p.pid}});
    ordered_json warnings = ordered_json::array();
    for (size_t w = 0; w < a.warnings.size(); ++w)
        warnings.push_back(
            {{"process", w < part.warningProcess.size() ? part.warningProcess[w] : 0}, {"message", a.warnings[w]}});
    ordered_json file = {{"path", part.path},          {"origin_utc_ns", part.originUtcNs},
                         {"processes", processes},     {"load_warnings", part.loadWarnings},
                         {"warnings", warnings},       {"dropped_records", report::orNull(a.droppedRecords)},
                         {"devices", a.devices.size()}};
    if (part.savedNothing) file["saved_nothing"] = true;  // only then: older readers need not know it
    out << "{\"file\":" << file.dump(-1, ' ', false, kReplace) << "}\n";
    for (size_t d = 0; d < a.devices.size(); ++d) {
        static const DeviceIntervals kNone;
        writeDeviceLine(out, a.devices[d], d < part.intervals.size() ? part.intervals[d] : kNone);
        report::writeDeviceJson(out, a.devices[d], -1);
        out << '\n';
    }
    return a.devices.size();
}

void writePartialTrailer(std::ostream& out, size_t files, size_t devices) {
    out << "{\"end\":{\"files\":" << files << ",\"devices\":" << devices << "}}\n";
}

}  // namespace osc::partial
