// Flight Recorder dumps written as PyTorch writes them (FlightRecorderDetail.hpp
// dump_json: nlohmann::json, so keys sorted; pg_status numbers as strings;
// 0 for a time not yet discovered), with the fields of each version: 2.3 and
// 2.4 (no library version), 2.5-2.9 (nccl_version), 2.10 (comm_lib_version,
// each entry's thread_name and thread_id). `pickleConverted` writes what
// json.dump of a pickled dump gives instead: None as null, numbers as numbers.
// Also: a dump per rank made from a capture's NCCL plugin rows, so that one
// job reads as both.
#pragma once

#include "analyzer/capture/model.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace osc::test {

struct FrEntrySpec {
    std::string pg = "0", desc = "default_pg";
    int64_t pgId = 0;
    int64_t seq = 0;  // collective_seq_id (p2p_seq_id for a send or receive)
    std::string op = "all_reduce";
    std::vector<std::vector<int64_t>> sizes{{1024}};
    std::string dtype = "Float";
    std::string state = "completed";  // scheduled, started, completed
    int64_t createdNs = 1, startedNs = 0, completedNs = 0;
    bool p2p = false;
};

struct FrDumpSpec {
    std::string version = "2.10";
    std::map<std::string, std::pair<std::string, std::vector<int>>> groups{{"0", {"default_pg", {0, 1}}}};
    std::vector<FrEntrySpec> entries;
    bool pickleConverted = false;
};

inline std::string frJson(const FrDumpSpec& d) {
    using json = nlohmann::json;  // std::map objects: sorted keys, as PyTorch's dump
    const int minor = std::stoi(d.version.substr(d.version.find('.') + 1));
    json top;
    top["version"] = d.version;
    if (minor >= 10)
        top["comm_lib_version"] = "2.21.5";
    else if (minor >= 5)
        top["nccl_version"] = "2.20.5";
    json config = json::object(), status = json::object();
    for (const auto& [name, g] : d.groups) {
        std::string ranks = "[";
        for (size_t i = 0; i < g.second.size(); ++i) ranks += (i ? ", " : "") + std::to_string(g.second[i]);
        config[name] = {{"name", name}, {"desc", g.first}, {"ranks", ranks + "]"}};
    }
    std::map<int64_t, int64_t> lastSeq;
    json entries = json::array();
    for (size_t i = 0; i < d.entries.size(); ++i) {
        const FrEntrySpec& e = d.entries[i];
        json j;
        j["record_id"] = static_cast<int64_t>(i);
        j["pg_id"] = e.pgId;
        j["process_group"] = {e.pg, e.desc};
        j["collective_seq_id"] = e.p2p ? 0 : e.seq;
        j["p2p_seq_id"] = e.p2p ? e.seq : 0;
        j["op_id"] = static_cast<int64_t>(i + 1);
        j["profiling_name"] = "nccl:" + e.op;
        j["time_created_ns"] = e.createdNs;
        if (e.state == "completed") j["duration_ms"] = 0.5;
        j["input_sizes"] = e.sizes;
        j["input_dtypes"] = std::vector<std::string>(e.sizes.size(), e.dtype);
        j["output_sizes"] = e.sizes;
        j["output_dtypes"] = std::vector<std::string>(e.sizes.size(), e.dtype);
        j["state"] = e.state;
        const auto time = [&](int64_t t) { return t > 0 ? json(t) : d.pickleConverted ? json(nullptr) : json(0); };
        j["time_discovered_started_ns"] = time(e.startedNs);
        j["time_discovered_completed_ns"] = time(e.completedNs);
        j["retired"] = e.state == "completed";
        j["timeout_ms"] = 600000;
        j["is_p2p"] = e.p2p;
        if (minor >= 10) {
            j["thread_name"] = "pt_main_thread";
            j["thread_id"] = "140000000000";
        }
        entries.push_back(j);
        if (!e.p2p) lastSeq[e.pgId] = std::max(lastSeq[e.pgId], e.seq);
    }
    for (const auto& [pgId, seq] : lastSeq) {
        const auto number = [&](int64_t v) { return d.pickleConverted ? json(v) : json(std::to_string(v)); };
        status[std::to_string(pgId)] = {{"last_enqueued_collective", number(seq)},
                                        {"last_started_collective", number(seq)},
                                        {"last_completed_collective", number(seq - 1)}};
    }
    top["pg_config"] = config;
    top["pg_status"] = status;
    if (!entries.empty()) top["entries"] = entries;
    return top.dump();
}

inline void writeText(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

// One dump per process of `capture` (named nccl_trace_rank_<rank> in `dir`),
// from its plugin collectives: PyTorch's collective_seq_id counts from 1,
// so the plugin's seqNumber n is entry n + 1. A collective without a GPU
// end was started and never completed.
inline std::vector<std::string> frDumpsFromCapture(const Capture& capture, const std::string& dir,
                                                   const std::string& version = "2.10") {
    std::vector<std::string> files;
    std::vector<int> ranks;
    for (const auto& p : capture.processes) ranks.push_back(p.rank);
    for (const auto& p : capture.processes) {
        FrDumpSpec d;
        d.version = version;
        d.groups = {{"0", {"default_pg", ranks}}};
        const CollectiveTable& t = p.collectives;
        std::vector<size_t> order(t.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return t.enqueue[a] < t.enqueue[b]; });
        for (size_t i : order) {
            FrEntrySpec e;
            e.seq = static_cast<int64_t>(t.seqNumber[i]) + 1;
            e.sizes = {{static_cast<int64_t>(t.bytes[i] / 4)}};
            e.state = t.gpuEnd[i] >= 0 ? "completed" : t.gpuStart[i] >= 0 ? "started" : "scheduled";
            e.createdNs = capture.originUtcNs + t.enqueue[i];
            if (t.gpuStart[i] >= 0) e.startedNs = capture.originUtcNs + t.gpuStart[i];
            if (t.gpuEnd[i] >= 0) e.completedNs = capture.originUtcNs + t.gpuEnd[i];
            d.entries.push_back(e);
        }
        files.push_back(dir + "/nccl_trace_rank_" + std::to_string(p.rank));
        writeText(files.back(), frJson(d));
    }
    return files;
}

}  // namespace osc::test
