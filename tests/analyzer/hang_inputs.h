// One synthetic job in every input `overlapscope hang` reads: in memory, our
// capture files, an Nsight Systems export (tests/analyzer/nsys_shaped.h: no
// plugin rows, kernels in order), PyTorch profiler traces (our Chrome export
// read back, with the collective arguments PyTorch writes on NCCL kernels
// added; once without "Seq", numbered by kernel order, once with PyTorch's
// record_param_comms operators and their "Process Group Name" and "Seq") and
// Flight Recorder dumps made from the plugin rows. And the answers
// `synth --stall-rank/--desync-rank` must give in each.
#pragma once

#include "analyzer/export/chrome_export.h"
#include "analyzer/hang/flight_recorder.h"
#include "analyzer/hang/hang.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/synth/workload_synth.h"
#include "tests/analyzer/flight_recorder_fixture.h"
#include "tests/analyzer/nsys_shaped.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>

namespace osc::test {

enum class HangFormat { Memory, OurFiles, Nsys, PyTorch, PyTorchSeq, FlightRecorder };

inline std::string toString(HangFormat f) {
    switch (f) {
        case HangFormat::Memory:
            return "memory";
        case HangFormat::OurFiles:
            return "our files";
        case HangFormat::Nsys:
            return "nsys";
        case HangFormat::PyTorch:
            return "pytorch";
        case HangFormat::PyTorchSeq:
            return "pytorch seq";
        case HangFormat::FlightRecorder:
            return "flight recorder";
    }
    return "?";
}

inline constexpr HangFormat kHangFormats[] = {HangFormat::Memory,  HangFormat::OurFiles,   HangFormat::Nsys,
                                              HangFormat::PyTorch, HangFormat::PyTorchSeq, HangFormat::FlightRecorder};

// PyTorch writes a collective's arguments on its NCCL kernel; our export
// writes them for sends and receives only, so they are added here from the
// plugin row that started with the kernel (same device: rank r is GPU r).
inline void addPyTorchCollectiveArgs(const Capture& capture, const std::string& tracePath) {
    std::map<std::pair<int64_t, int64_t>, uint64_t> bytesOf;  // (device, correlation) -> bytes
    for (const auto& p : capture.processes)
        for (const auto& d : p.devices)
            for (size_t k = 0; k < d.kernels.size(); ++k)
                for (size_t r = 0; r < p.collectives.size(); ++r)
                    if (p.collectives.gpuStart[r] == d.kernels.start[k] && p.collectives.device[r] == d.id)
                        bytesOf[{d.id, d.kernels.correlation[k]}] = p.collectives.bytes[r];
    nlohmann::json trace;
    std::ifstream(tracePath) >> trace;
    for (auto& e : trace["traceEvents"]) {
        if (e.value("cat", "") != "kernel" || e.value("name", "").find("AllReduce") == std::string::npos) continue;
        const auto it = bytesOf.find({e["args"].value("device", -1), e["args"].value("correlation", -1)});
        if (it == bytesOf.end()) continue;
        e["args"]["Collective name"] = "allreduce";
        e["args"]["In msg nelems"] = it->second / 4;
        e["args"]["Out msg nelems"] = it->second / 4;
        e["args"]["dtype"] = "Float";
        e["args"]["Group size"] = capture.processes.size();
    }
    std::ofstream(tracePath) << trace.dump();
}

// PyTorch's record_param_comms operator around each collective's launch
// call, on its thread, with the group ("0", every rank) and its Seq (from 1;
// the synthetic jobs' collectives are all AllReduces, so NCCL's count per
// type is the group's count). A launch whose kernel never came keeps its
// operator: that is what says a waiting rank entered the hung call.
inline void addPyTorchSeqOperators(const Capture& capture, const std::string& tracePath) {
    std::map<std::pair<int, int64_t>, size_t> rowOf;  // (rank, launch correlation) -> plugin row
    std::map<int, const Process*> byRank;
    for (const auto& p : capture.processes) {
        byRank[p.rank] = &p;
        for (size_t r = 0; r < p.collectives.size(); ++r)
            for (size_t a = 0; a < p.apiCalls.size(); ++a)
                if (p.apiCalls.start[a] == p.collectives.enqueue[r]) rowOf[{p.rank, p.apiCalls.correlation[a]}] = r;
    }
    std::string members = "[";
    for (size_t r = 0; r < capture.processes.size(); ++r) members += (r ? ", " : "") + std::to_string(r);
    members += "]";
    nlohmann::json trace;
    std::ifstream(tracePath) >> trace;
    std::map<int64_t, int> rankOfPid;
    for (const auto& p : trace["overlapscopeProcesses"]) rankOfPid[p["tracePid"]] = p["rank"];
    nlohmann::json operators = nlohmann::json::array();
    for (const auto& e : trace["traceEvents"]) {
        const std::string cat = e.value("cat", "");
        if ((cat != "cuda_runtime" && cat != "cuda_driver") || !e.contains("args")) continue;  // NCCL: cuLaunchKernelEx
        const int rank = rankOfPid[e["pid"]];
        const auto it = rowOf.find({rank, e["args"].value("correlation", int64_t{-1})});
        if (it == rowOf.end()) continue;
        const CollectiveTable& t = byRank.at(rank)->collectives;
        nlohmann::json op = {{"ph", "X"},       {"cat", "cpu_op"}, {"name", "record_param_comms"},
                             {"pid", e["pid"]}, {"tid", e["tid"]}, {"ts", e["ts"]},
                             {"dur", e["dur"]}};
        op["args"] = {{"Collective name", "allreduce"},
                      {"In msg nelems", t.bytes[it->second] / 4},
                      {"Out msg nelems", t.bytes[it->second] / 4},
                      {"dtype", "Float"},
                      {"Group size", capture.processes.size()},
                      {"Process Group Name", "0"},
                      {"Process Group Ranks", members},
                      {"Seq", t.seqNumber[it->second] + 1}};
        operators.push_back(std::move(op));
    }
    for (auto& op : operators) trace["traceEvents"].push_back(std::move(op));
    std::ofstream(tracePath) << trace.dump();
}

// The job in `format`, analysed. `dir` holds whatever files it needs.
inline hang::HangAnalysis analyzeAs(HangFormat format, const synth::WorkloadSpec& spec, const std::string& dir,
                                    const hang::HangSettings& settings = {}) {
    const Capture memory = synth::synthesizeWorkload(spec);
    std::filesystem::create_directories(dir);
    switch (format) {
        case HangFormat::Memory:
            return hang::analyzeHang(&memory, {}, settings);
        case HangFormat::OurFiles: {
            synth::writeWorkload(spec, dir + "/ours", true);
            const Capture c = loadCaptures({dir + "/ours"});
            return hang::analyzeHang(&c, {}, settings);
        }
        case HangFormat::Nsys: {
            std::vector<size_t> all(memory.processes.size());
            for (size_t i = 0; i < all.size(); ++i) all[i] = i;
            {
                NsysShapedWriter w(dir + "/nsys.sqlite");
                w.write(memory, all, false, 0);
            }
            const Capture c = loadCapture(dir + "/nsys.sqlite");
            return hang::analyzeHang(&c, {}, settings);
        }
        case HangFormat::PyTorch:
        case HangFormat::PyTorchSeq: {
            {
                std::ofstream out(dir + "/job.pt.trace.json");
                writeChromeTrace(memory, out);
            }
            addPyTorchCollectiveArgs(memory, dir + "/job.pt.trace.json");
            if (format == HangFormat::PyTorchSeq) addPyTorchSeqOperators(memory, dir + "/job.pt.trace.json");
            const Capture c = loadCapture(dir + "/job.pt.trace.json");
            return hang::analyzeHang(&c, {}, settings);
        }
        case HangFormat::FlightRecorder: {
            std::filesystem::create_directories(dir + "/fr");
            std::vector<FlightRecorderDump> dumps;
            for (const auto& f : frDumpsFromCapture(memory, dir + "/fr", "2.10", FrForm::Mixed))
                dumps.push_back(readFlightRecorderDump(f));
            return hang::analyzeHang(nullptr, dumps, settings);
        }
    }
    return {};
}

// What the analysis must say about a synthetic job.
struct HangAnswer {
    hang::Verdict verdict = hang::Verdict::Healthy;
    std::string communicator;
    std::optional<uint64_t> hungSeq;
    std::string collective;
    std::set<int> stuck, waiting;
    std::map<int, std::optional<uint64_t>> lastEntered, lastCompleted;  // by rank
    std::optional<uint64_t> desyncSeq;
    std::string desyncField;
    std::map<int, uint64_t> desyncBytes;  // by rank
};

inline HangAnswer knownAnswer(HangFormat format, const synth::WorkloadSpec& s) {
    HangAnswer a;
    const bool fr = format == HangFormat::FlightRecorder, seq = format == HangFormat::PyTorchSeq;
    const bool plugin = format == HangFormat::Memory || format == HangFormat::OurFiles;
    a.communicator = plugin ? "0x5e1f0c0ffee15eed" : fr ? "pg 0 (default_pg)" : seq ? "pg 0" : "kernel order";
    a.collective = fr ? "all_reduce" : "AllReduce";
    const uint64_t perStep = static_cast<uint64_t>(s.collectivesPerStep());
    // PyTorch numbers collectives from 1, NCCL and kernel order from 0.
    const uint64_t base = fr || seq ? 1 : 0;
    const uint64_t total =
        s.stallRank >= 0 ? static_cast<uint64_t>(s.stallAtStep) * perStep : static_cast<uint64_t>(s.steps) * perStep;
    for (int r = 0; r < s.ranks; ++r) {
        const auto upTo = [&](uint64_t n) { return n == 0 ? std::nullopt : std::optional<uint64_t>(base + n - 1); };
        a.lastCompleted[r] = upTo(total);
        a.lastEntered[r] = s.stallRank >= 0 && r != s.stallRank ? std::optional<uint64_t>(base + total) : upTo(total);
    }
    if (s.desyncRank >= 0 && format != HangFormat::Nsys) {  // an Nsight export holds no sizes
        a.verdict = hang::Verdict::Desync;
        a.desyncSeq = base + static_cast<uint64_t>(s.desyncAtStep) * perStep;
        a.desyncField = "bytes";
    }
    if (s.stallRank >= 0) {
        a.verdict = hang::Verdict::Hang;
        a.hungSeq = base + total;
        a.stuck = {s.stallRank};
        for (int r = 0; r < s.ranks; ++r)
            if (r != s.stallRank) a.waiting.insert(r);
    }
    return a;
}

inline std::optional<uint64_t> lastSeq(const hang::RankProgress& r, bool completedOnly) {
    for (auto it = r.calls.rbegin(); it != r.calls.rend(); ++it)
        if (!completedOnly || it->completed) return it->slot.seq;
    return std::nullopt;
}

// Compares; returns "" when the analysis says exactly `want`, else what differs.
inline std::string compareHang(const hang::HangAnalysis& a, const HangAnswer& want) {
    std::ostringstream why;
    if (a.verdict != want.verdict)
        why << "verdict " << hang::toString(a.verdict) << ", want " << hang::toString(want.verdict) << "; ";
    const hang::CommunicatorProgress* comm = nullptr;
    int index = -1;
    for (size_t c = 0; c < a.communicators.size(); ++c)
        if (a.communicators[c].id == want.communicator) {
            comm = &a.communicators[c];
            index = static_cast<int>(c);
        }
    if (!comm || a.communicators.size() != 1) {
        why << a.communicators.size() << " communicators (";
        for (const auto& c : a.communicators) why << c.id << "; ";
        why << "), want one named " << want.communicator;
        return why.str();
    }
    std::set<int> stuck;
    for (const auto& s : a.stuck) stuck.insert(s.rank);
    if (stuck != want.stuck) why << "stuck ranks differ; ";
    const auto& hung = a.hung[static_cast<size_t>(index)];
    if (want.hungSeq) {
        if (!hung || hung->slot.seq != *want.hungSeq || hung->collective != want.collective) {
            why << "hung collective " << (hung ? hung->collective + " #" + std::to_string(hung->slot.seq) : "none")
                << ", want #" << *want.hungSeq << "; ";
        } else {
            std::set<int> waiting;
            for (int m : hung->waitingRanks) waiting.insert(comm->ranks[static_cast<size_t>(m)].rank);
            if (waiting != want.waiting) why << "waiting ranks differ; ";
            if (a.firstMissingCommunicator != index) why << "first missing elsewhere; ";
        }
    } else if (hung) {
        why << "a hung collective #" << hung->slot.seq << " where none is; ";
    }
    for (const auto& r : comm->ranks) {
        if (lastSeq(r, false) != want.lastEntered.at(r.rank)) why << "rank " << r.rank << " last entered differs; ";
        if (lastSeq(r, true) != want.lastCompleted.at(r.rank)) why << "rank " << r.rank << " last completed differs; ";
    }
    if (comm->ranks.size() != want.lastEntered.size()) why << comm->ranks.size() << " ranks in the communicator; ";
    if (want.desyncSeq) {
        if (a.desyncs.size() != 1 || a.desyncs[0].slot.seq != *want.desyncSeq || a.desyncs[0].field != want.desyncField)
            why << a.desyncs.size() << " desyncs, want one at #" << *want.desyncSeq << "; ";
    } else if (!a.desyncs.empty()) {
        why << a.desyncs.size() << " desyncs where none is; ";
    }
    return why.str();
}

}  // namespace osc::test
