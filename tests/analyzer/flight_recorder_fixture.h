// Flight Recorder dumps written as PyTorch writes them, from a spec:
//  - frJson: _dump_nccl_trace_json (FlightRecorderDetail.hpp dump_json:
//    nlohmann::json, so keys sorted; pg_status numbers as strings; 0 for a
//    time not yet discovered; no stack frames; "entries" left out when
//    empty), with the fields of each version: 2.3 and 2.4 (no library
//    version), 2.5-2.9 (nccl_version), 2.10 (comm_lib_version, each
//    entry's thread_name and thread_id). `pickleConverted` writes what
//    json.dump of a pickled dump gives instead: insertion order, None as
//    null, numbers as numbers, stack frames.
//  - frPickle: the pickle the watchdog writes (dump_dict through
//    torch::jit::Pickler with tag_aggregates off, pickler.cpp): protocol 2,
//    dicts in insertion order as EMPTY_DICT MARK ... SETITEMS, lists as
//    EMPTY_LIST MARK ... APPENDS, text as BINUNICODE memoized by BINPUT and
//    fetched again by BINGET, integers as BININT1/BININT2/BININT/LONG1, floats
//    as BINFLOAT, process_group as TUPLE2, stack frames as dicts shared
//    between entries (BINPUT once, BINGET after).
// Also: a dump per rank made from a capture's NCCL plugin rows, so that one
// job reads as both.
#pragma once

#include "analyzer/capture/model.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace osc::test {

struct FrFrameSpec {
    std::string name, filename;
    int64_t line = 0;
};

struct FrEntrySpec {
    std::string pg = "0", desc = "default_pg";
    int64_t pgId = 0;
    int64_t seq = 0;  // collective_seq_id (p2p_seq_id for a send or receive)
    std::string op = "all_reduce";
    std::vector<std::vector<int64_t>> sizes{{1024}};
    std::optional<std::vector<std::vector<int64_t>>> outSizes;  // default: the inputs'
    std::string dtype = "Float";
    std::string state = "completed";  // scheduled, started, completed
    int64_t createdNs = 1, startedNs = 0, completedNs = 0;
    bool p2p = false;
    std::vector<FrFrameSpec> frames;
    std::optional<int64_t> recordId;  // default: its place in the dump
};

// One collective of the default group, at a time that follows its sequence
// id (1 ms apart from 2025-10-09), started and completed as its state says.
inline FrEntrySpec frEntry(int64_t seq, std::string state, std::string op = "all_reduce",
                           std::vector<std::vector<int64_t>> sizes = {{1024}}) {
    FrEntrySpec e;
    e.seq = seq;
    e.state = std::move(state);
    e.op = std::move(op);
    e.sizes = std::move(sizes);
    e.createdNs = 1'760'000'000'000'000'000 + seq * 1'000'000;
    if (e.state != "scheduled") e.startedNs = e.createdNs + 10'000;
    if (e.state == "completed") e.completedNs = e.createdNs + 500'000;
    return e;
}

struct FrStatusSpec {
    int64_t enqueued = -1, started = -1, completed = -1;
};

struct FrDumpSpec {
    std::string version = "2.10";
    std::map<std::string, std::pair<std::string, std::vector<int>>> groups{{"0", {"default_pg", {0, 1}}}};
    std::map<std::string, std::string> ranksText;  // a group's "ranks" as written, instead of its list
    std::vector<FrEntrySpec> entries;
    // pg_status per pg_id; by default what PyTorch would count from the
    // entries: the last collective enqueued, the last completed, none started.
    std::optional<std::map<int64_t, FrStatusSpec>> status;
    bool statusTable = true;  // false: no pg_status at all, as a dump without one
    bool pickleConverted = false;
};

inline int frMinor(const FrDumpSpec& d) { return std::stoi(d.version.substr(d.version.find('.') + 1)); }

inline std::string frRanksText(const FrDumpSpec& d, const std::string& name, const std::vector<int>& ranks) {
    if (const auto it = d.ranksText.find(name); it != d.ranksText.end()) return it->second;
    std::string s = "[";
    for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
    return s + "]";
}

inline std::map<int64_t, FrStatusSpec> frStatus(const FrDumpSpec& d) {
    if (d.status) return *d.status;
    std::map<int64_t, FrStatusSpec> out;
    for (const FrEntrySpec& e : d.entries) {
        if (e.p2p) continue;
        FrStatusSpec& s = out[e.pgId];
        s.enqueued = std::max(s.enqueued, e.seq);
        if (e.state == "completed") s.completed = std::max(s.completed, e.seq);
    }
    return out;
}

inline std::string frProfilingName(const FrEntrySpec& e) { return "nccl:" + e.op; }

inline std::string frJson(const FrDumpSpec& d) {
    using json = nlohmann::json;  // std::map objects: sorted keys, as PyTorch's dump
    using ojson = nlohmann::ordered_json;
    const int minor = frMinor(d);
    ojson top;  // insertion order, as json.dump of a pickled dump; sorted below otherwise
    top["version"] = d.version;
    ojson config = ojson::object(), status = ojson::object();
    for (const auto& [name, g] : d.groups)
        config[name] = {{"name", name}, {"desc", g.first}, {"ranks", frRanksText(d, name, g.second)}};
    top["pg_config"] = config;
    if (minor >= 10)
        top["comm_lib_version"] = "2.21.5";
    else if (minor >= 5)
        top["nccl_version"] = "2.20.5";
    for (const auto& [pgId, s] : frStatus(d)) {
        const auto number = [&](int64_t v) { return d.pickleConverted ? ojson(v) : ojson(std::to_string(v)); };
        status[std::to_string(pgId)] = {{"last_enqueued_collective", number(s.enqueued)},
                                        {"last_started_collective", number(s.started)},
                                        {"last_completed_collective", number(s.completed)}};
    }
    if (d.statusTable) top["pg_status"] = status;
    ojson entries = ojson::array();
    for (size_t i = 0; i < d.entries.size(); ++i) {
        const FrEntrySpec& e = d.entries[i];
        ojson j;
        if (d.pickleConverted && !e.frames.empty()) {
            j["frames"] = ojson::array();
            for (const auto& f : e.frames)
                j["frames"].push_back({{"name", f.name}, {"filename", f.filename}, {"line", f.line}});
        }
        j["record_id"] = e.recordId.value_or(static_cast<int64_t>(i));
        j["pg_id"] = e.pgId;
        j["process_group"] = {e.pg, e.desc};
        if (minor >= 10) {
            j["thread_name"] = "pt_main_thread";
            j["thread_id"] = "140000000000";
        }
        j["collective_seq_id"] = e.p2p ? 0 : e.seq;
        j["p2p_seq_id"] = e.p2p ? e.seq : 0;
        j["op_id"] = static_cast<int64_t>(i + 1);
        j["profiling_name"] = frProfilingName(e);
        j["time_created_ns"] = e.createdNs;
        if (e.state == "completed") j["duration_ms"] = 0.5;
        j["input_sizes"] = e.sizes;
        j["input_dtypes"] = std::vector<std::string>(e.sizes.size(), e.dtype);
        const auto& out = e.outSizes ? *e.outSizes : e.sizes;
        j["output_sizes"] = out;
        j["output_dtypes"] = std::vector<std::string>(out.size(), e.dtype);
        j["state"] = e.state;
        const auto time = [&](int64_t t) { return t > 0 ? ojson(t) : d.pickleConverted ? ojson(nullptr) : ojson(0); };
        j["time_discovered_started_ns"] = time(e.startedNs);
        j["time_discovered_completed_ns"] = time(e.completedNs);
        j["retired"] = e.state == "completed";
        j["timeout_ms"] = 600000;
        j["is_p2p"] = e.p2p;
        entries.push_back(j);
    }
    if (d.pickleConverted || !entries.empty()) top["entries"] = entries;
    if (d.pickleConverted) return top.dump();
    return json::parse(top.dump()).dump();  // sorted keys, compact, as nlohmann writes std::map
}

// torch::jit::Pickler's opcodes for the IValues of a dump.
class TorchPickler {
public:
    TorchPickler() {
        op(0x80);
        out_ += '\x02';
    }
    std::string finish() {
        op('.');
        return out_;
    }
    void text(const std::string& s) {
        if (const auto it = strings_.find(s); it != strings_.end()) return get(it->second);
        op('X');
        le(s.size(), 4);
        out_ += s;
        strings_[s] = put();
    }
    void integer(int64_t n) {
        if (n >= 0 && n <= 0xff) {
            op('K');
            le(static_cast<uint64_t>(n), 1);
        } else if (n >= 0 && n <= 0xffff) {
            op('M');
            le(static_cast<uint64_t>(n), 2);
        } else if (n >= INT32_MIN && n <= INT32_MAX) {
            op('J');
            le(static_cast<uint64_t>(static_cast<uint32_t>(static_cast<int32_t>(n))), 4);
        } else {
            op(0x8a);
            out_ += '\x08';
            le(static_cast<uint64_t>(n), 8);
        }
    }
    void real(double v) {
        op('G');
        uint64_t u = 0;
        std::memcpy(&u, &v, sizeof u);
        for (int i = 7; i >= 0; --i) out_ += static_cast<char>((u >> (8 * i)) & 0xff);
    }
    void boolean(bool b) { op(b ? 0x88 : 0x89); }
    void none() { op('N'); }
    void beginDict() {
        op('}');
        op('(');
    }
    void endDict() { op('u'); }
    void beginList() {
        op(']');
        op('(');
    }
    void endList() { op('e'); }
    void tuple2() { op(0x86); }
    // A container shared by several parents: BINPUT after its first copy.
    uint32_t put() {
        const uint32_t id = memo_++;
        if (id <= 0xff) {
            op('q');
            le(id, 1);
        } else {
            op('r');
            le(id, 4);
        }
        return id;
    }
    void get(uint32_t id) {
        if (id <= 0xff) {
            op('h');
            le(id, 1);
        } else {
            op('j');
            le(id, 4);
        }
    }

private:
    void op(int c) { out_ += static_cast<char>(c); }
    void le(uint64_t v, int bytes) {
        for (int i = 0; i < bytes; ++i) out_ += static_cast<char>((v >> (8 * i)) & 0xff);
    }
    std::string out_;
    uint32_t memo_ = 0;
    std::map<std::string, uint32_t> strings_;
};

inline std::string frPickle(const FrDumpSpec& d) {
    const int minor = frMinor(d);
    TorchPickler p;
    const auto sizes = [&](const std::vector<std::vector<int64_t>>& shapes) {
        p.beginList();
        for (const auto& s : shapes) {
            p.beginList();
            for (int64_t v : s) p.integer(v);
            p.endList();
        }
        p.endList();
    };
    const auto texts = [&](size_t n, const std::string& t) {
        p.beginList();
        for (size_t i = 0; i < n; ++i) p.text(t);
        p.endList();
    };
    p.beginDict();
    p.text("version");
    p.text(d.version);
    p.text("pg_config");
    p.beginDict();
    for (const auto& [name, g] : d.groups) {
        p.text(name);
        p.beginDict();
        p.text("name");
        p.text(name);
        p.text("desc");
        p.text(g.first);
        p.text("ranks");
        p.text(frRanksText(d, name, g.second));
        p.endDict();
    }
    p.endDict();
    if (minor >= 5) {
        p.text(minor >= 10 ? "comm_lib_version" : "nccl_version");
        p.text(minor >= 10 ? "2.21.5" : "2.20.5");
    }
    if (d.statusTable) p.text("pg_status");
    if (d.statusTable) p.beginDict();
    for (const auto& [pgId, s] : d.statusTable ? frStatus(d) : std::map<int64_t, FrStatusSpec>{}) {
        p.text(std::to_string(pgId));
        p.beginDict();
        p.text("last_enqueued_collective");
        p.integer(s.enqueued);
        p.text("last_started_collective");
        p.integer(s.started);
        p.text("last_completed_collective");
        p.integer(s.completed);
        p.endDict();
    }
    if (d.statusTable) p.endDict();
    p.text("entries");
    p.beginList();
    std::map<std::tuple<std::string, std::string, int64_t>, uint32_t> frameIds;
    for (size_t i = 0; i < d.entries.size(); ++i) {
        const FrEntrySpec& e = d.entries[i];
        p.beginDict();
        if (!e.frames.empty()) {
            p.text("frames");
            p.beginList();
            for (const auto& f : e.frames) {
                const auto key = std::tuple(f.name, f.filename, f.line);
                if (const auto it = frameIds.find(key); it != frameIds.end()) {
                    p.get(it->second);
                    continue;
                }
                p.beginDict();
                p.text("name");
                p.text(f.name);
                p.text("filename");
                p.text(f.filename);
                p.text("line");
                p.integer(f.line);
                p.endDict();
                frameIds[key] = p.put();
            }
            p.endList();
        }
        p.text("record_id");
        p.integer(e.recordId.value_or(static_cast<int64_t>(i)));
        p.text("pg_id");
        p.integer(e.pgId);
        p.text("process_group");
        p.text(e.pg);
        p.text(e.desc);
        p.tuple2();
        if (minor >= 10) {
            p.text("thread_name");
            p.text("pt_main_thread");
            p.text("thread_id");
            p.text("140000000000");
        }
        p.text("collective_seq_id");
        p.integer(e.p2p ? 0 : e.seq);
        p.text("p2p_seq_id");
        p.integer(e.p2p ? e.seq : 0);
        p.text("op_id");
        p.integer(static_cast<int64_t>(i + 1));
        p.text("profiling_name");
        p.text(frProfilingName(e));
        p.text("time_created_ns");
        p.integer(e.createdNs);
        if (e.state == "completed") {
            p.text("duration_ms");
            p.real(0.5);
        }
        const auto& out = e.outSizes ? *e.outSizes : e.sizes;
        p.text("input_sizes");
        sizes(e.sizes);
        p.text("input_dtypes");
        texts(e.sizes.size(), e.dtype);
        p.text("output_sizes");
        sizes(out);
        p.text("output_dtypes");
        texts(out.size(), e.dtype);
        p.text("state");
        p.text(e.state);
        const auto time = [&](int64_t t) { t > 0 ? p.integer(t) : p.none(); };
        p.text("time_discovered_started_ns");
        time(e.startedNs);
        p.text("time_discovered_completed_ns");
        time(e.completedNs);
        p.text("retired");
        p.boolean(e.state == "completed");
        p.text("timeout_ms");
        p.integer(600000);
        p.text("is_p2p");
        p.boolean(e.p2p);
        p.endDict();
    }
    p.endList();
    p.endDict();
    return p.finish();
}

inline void writeText(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

// One dump per process of `capture` (named nccl_trace_rank_<rank> in `dir`),
// from its plugin collectives: PyTorch's collective_seq_id counts from 1,
// so the plugin's seqNumber n is entry n + 1. A collective without a GPU
// end was started and never completed. Written as JSON, as pickles, or
// mixed (odd ranks' as pickles), as a job's dumps may come.
enum class FrForm { Json, Pickle, Mixed };
inline std::vector<std::string> frDumpsFromCapture(const Capture& capture, const std::string& dir,
                                                   const std::string& version = "2.10", FrForm form = FrForm::Json) {
    std::vector<std::string> files;
    std::vector<int> ranks;
    for (const auto& p : capture.processes) ranks.push_back(p.rank);
    std::sort(ranks.begin(), ranks.end());
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
        const bool pickle = form == FrForm::Pickle || (form == FrForm::Mixed && p.rank % 2 == 1);
        writeText(files.back(), pickle ? frPickle(d) : frJson(d));
    }
    return files;
}

}  // namespace osc::test
