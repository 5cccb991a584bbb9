#include "analyzer/import/flight_recorder.h"

#include "analyzer/capture/capture_error.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace osc {
namespace {

using json = nlohmann::json;

// Dumps hold a ring buffer of at most a few thousand entries (2,000 by
// default): a megabyte or two. Anything far larger is not one.
constexpr std::streamoff kMaxDumpBytes = std::streamoff{1} << 30;

class FieldReader {
public:
    FieldReader(const std::string& path, std::string where) : path_(path), where_(std::move(where)) {}

    [[noreturn]] void fail(const std::string& key, const std::string& problem) const {
        throw CaptureError(path_, where_ + (key.empty() ? "" : "\"" + key + "\" ") + problem);
    }

    const json* find(const json& object, const std::string& key) const {
        const auto it = object.find(key);
        return it == object.end() ? nullptr : &*it;
    }

    int64_t integer(const json& object, const std::string& key, bool required, int64_t fallback = -1) const {
        const json* v = find(object, key);
        if (!v || v->is_null()) {
            if (required) fail(key, "is missing");
            return fallback;
        }
        return toInteger(*v, key);
    }

    // pg_status writes its numbers as strings in JSON dumps, as numbers in
    // pickled ones: both are read.
    int64_t toInteger(const json& v, const std::string& key) const {
        if (v.is_number_integer()) return v.get<int64_t>();
        if (v.is_number_unsigned()) {
            const auto u = v.get<uint64_t>();
            if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) fail(key, "is out of range");
            return static_cast<int64_t>(u);
        }
        if (v.is_string()) {
            const std::string& s = v.get_ref<const std::string&>();
            size_t used = 0;
            try {
                const long long n = std::stoll(s, &used);
                if (used == s.size()) return n;
            } catch (const std::exception&) {}
        }
        fail(key, "is not an integer");
    }

    std::string text(const json& object, const std::string& key, bool required) const {
        const json* v = find(object, key);
        if (!v || v->is_null()) {
            if (required) fail(key, "is missing");
            return {};
        }
        if (!v->is_string()) fail(key, "is not a string");
        return v->get<std::string>();
    }

    bool boolean(const json& object, const std::string& key) const {
        const json* v = find(object, key);
        if (!v || v->is_null()) return false;
        if (!v->is_boolean()) fail(key, "is not true or false");
        return v->get<bool>();
    }

    std::vector<std::string> texts(const json& object, const std::string& key) const {
        std::vector<std::string> out;
        const json* v = find(object, key);
        if (!v || v->is_null()) return out;
        if (!v->is_array()) fail(key, "is not a list");
        for (const auto& e : *v) {
            if (!e.is_string()) fail(key, "holds something other than text");
            out.push_back(e.get<std::string>());
        }
        return out;
    }

    std::vector<std::vector<int64_t>> sizes(const json& object, const std::string& key) const {
        std::vector<std::vector<int64_t>> out;
        const json* v = find(object, key);
        if (!v || v->is_null()) return out;
        if (!v->is_array()) fail(key, "is not a list of shapes");
        for (const auto& shape : *v) {
            if (!shape.is_array()) fail(key, "is not a list of shapes");
            std::vector<int64_t> dims;
            for (const auto& d : shape) {
                if (!d.is_number_integer() && !d.is_number_unsigned())
                    fail(key, "holds a dimension that is no integer");
                dims.push_back(toInteger(d, key));
            }
            out.push_back(std::move(dims));
        }
        return out;
    }

private:
    const std::string& path_;
    std::string where_;
};

// "[0, 1, 2]" as PyTorch's ranks_str writes it; a list when converted.
std::vector<int64_t> parseRanks(const FieldReader& r, const json& v) {
    std::vector<int64_t> out;
    if (v.is_array()) {
        for (const auto& e : v) out.push_back(r.toInteger(e, "ranks"));
        return out;
    }
    if (!v.is_string()) r.fail("ranks", "is neither a list nor its text");
    std::string s = v.get<std::string>();
    for (char& c : s)
        if (c == '[' || c == ']' || c == ',') c = ' ';
    std::istringstream in(s);
    std::string token;
    while (in >> token) out.push_back(r.toInteger(json(token), "ranks"));
    return out;
}

FlightRecorderEntry::State parseState(const FieldReader& r, const std::string& s) {
    if (s == "completed") return FlightRecorderEntry::State::Completed;
    if (s == "started") return FlightRecorderEntry::State::Started;
    if (s == "scheduled") return FlightRecorderEntry::State::Scheduled;
    r.fail("state", "is \"" + s + "\", not scheduled, started or completed");
}

// JSON dumps write 0 for a time not yet seen, pickled ones None.
std::optional<int64_t> discoveredTime(const FieldReader& r, const json& e, const std::string& key) {
    const int64_t t = r.integer(e, key, false, 0);
    return t > 0 ? std::optional<int64_t>(t) : std::nullopt;
}

FlightRecorderEntry readEntry(const std::string& path, const json& e, size_t index) {
    const FieldReader r(path, "entry " + std::to_string(index) + ": ");
    if (!e.is_object()) r.fail("", "is not an object");
    FlightRecorderEntry out;
    out.recordId = r.integer(e, "record_id", true);
    out.pgId = r.integer(e, "pg_id", false);
    const json* pg = r.find(e, "process_group");
    if (!pg || !pg->is_array() || pg->empty() || !(*pg)[0].is_string() || (pg->size() > 1 && !(*pg)[1].is_string()))
        r.fail("process_group", "is not [name, description]");
    out.pgName = (*pg)[0].get<std::string>();
    if (pg->size() > 1) out.pgDesc = (*pg)[1].get<std::string>();
    out.collectiveSeqId = r.integer(e, "collective_seq_id", true);
    out.p2pSeqId = r.integer(e, "p2p_seq_id", false);
    out.opId = r.integer(e, "op_id", false);
    out.profilingName = r.text(e, "profiling_name", true);
    out.timeCreatedNs = r.integer(e, "time_created_ns", false, 0);
    if (const json* d = r.find(e, "duration_ms"); d && !d->is_null()) {
        if (!d->is_number()) r.fail("duration_ms", "is not a number");
        out.durationMs = d->get<double>();
    }
    out.inputSizes = r.sizes(e, "input_sizes");
    out.outputSizes = r.sizes(e, "output_sizes");
    out.inputDtypes = r.texts(e, "input_dtypes");
    out.outputDtypes = r.texts(e, "output_dtypes");
    out.state = parseState(r, r.text(e, "state", true));
    out.timeDiscoveredStartedNs = discoveredTime(r, e, "time_discovered_started_ns");
    out.timeDiscoveredCompletedNs = discoveredTime(r, e, "time_discovered_completed_ns");
    out.retired = r.boolean(e, "retired");
    out.isP2P = r.boolean(e, "is_p2p");
    out.timeoutMs = r.integer(e, "timeout_ms", false, 0);
    out.threadName = r.text(e, "thread_name", false);
    out.threadId = r.text(e, "thread_id", false);
    return out;
}

[[noreturn]] void pickled(const std::string& path) {
    throw CaptureError(path,
                       "a pickled Flight Recorder dump; overlapscope reads the JSON form: convert it with "
                       "python3 -c \"import json,pickle,sys; json.dump(pickle.load(open(sys.argv[1],'rb')),"
                       "open(sys.argv[2],'w'))\" DUMP DUMP.json");
}

}  // namespace

int flightRecorderRankFromName(const std::string& path) {
    std::string name = std::filesystem::path(path).filename().string();
    for (const char* ext : {".json", ".pkl", ".pickle"}) {
        const std::string e(ext);
        if (name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0) {
            name.resize(name.size() - e.size());
            break;
        }
    }
    size_t digits = 0;
    while (digits < name.size() && std::isdigit(static_cast<unsigned char>(name[name.size() - 1 - digits]))) ++digits;
    if (digits == 0 || digits > 9) return -1;
    return std::stoi(name.substr(name.size() - digits));
}

FlightRecorderDump readFlightRecorderDump(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw CaptureError(path, "cannot open");
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    in.seekg(0);
    if (size > kMaxDumpBytes) throw CaptureError(path, "too large for a Flight Recorder dump (over 1 GiB)");
    if (in.peek() == 0x80) pickled(path);

    json doc;
    try {
        doc = json::parse(in);
    } catch (const json::exception& e) {
        throw CaptureError(path, std::string("not a valid JSON Flight Recorder dump: ") + e.what());
    }
    const FieldReader top(path, "");
    if (!doc.is_object()) top.fail("", "is not a JSON object, so not a Flight Recorder dump");

    FlightRecorderDump dump;
    dump.path = path;
    dump.version = top.text(doc, "version", true);
    const size_t dot = dump.version.find('.');
    if (dot == std::string::npos || dump.version.substr(0, dot) != "2")
        throw CaptureError(path, "Flight Recorder dump version " + dump.version + " is not one overlapscope reads (" +
                                     kFlightRecorderVersionsRead + ")");
    dump.commLibVersion = top.text(doc, "comm_lib_version", false);
    if (dump.commLibVersion.empty()) dump.commLibVersion = top.text(doc, "nccl_version", false);
    dump.rank = flightRecorderRankFromName(path);
    if (dump.rank < 0)
        throw CaptureError(path,
                           "cannot tell which rank wrote this Flight Recorder dump: PyTorch names dumps with the rank "
                           "at the end (nccl_trace_rank_3); rename it so");

    if (const json* config = top.find(doc, "pg_config"); config && !config->is_null()) {
        if (!config->is_object()) top.fail("pg_config", "is not an object");
        for (const auto& [name, info] : config->items()) {
            const FieldReader r(path, "pg_config \"" + name + "\": ");
            if (!info.is_object()) r.fail("", "is not an object");
            FlightRecorderGroup g;
            g.name = r.text(info, "name", false);
            if (g.name.empty()) g.name = name;
            g.desc = r.text(info, "desc", false);
            if (const json* ranks = r.find(info, "ranks")) g.ranks = parseRanks(r, *ranks);
            dump.groups[g.name] = std::move(g);
        }
    }
    if (const json* status = top.find(doc, "pg_status"); status && !status->is_null()) {
        if (!status->is_object()) top.fail("pg_status", "is not an object");
        for (const auto& [id, info] : status->items()) {
            const FieldReader r(path, "pg_status \"" + id + "\": ");
            if (!info.is_object()) r.fail("", "is not an object");
            FlightRecorderGroupStatus s;
            s.lastEnqueued = r.integer(info, "last_enqueued_collective", false);
            s.lastStarted = r.integer(info, "last_started_collective", false);
            s.lastCompleted = r.integer(info, "last_completed_collective", false);
            dump.groupStatus[r.toInteger(json(id), "pg_status")] = s;
        }
    }
    if (const json* entries = top.find(doc, "entries"); entries && !entries->is_null()) {
        if (!entries->is_array()) top.fail("entries", "is not a list");
        dump.entries.reserve(entries->size());
        for (size_t i = 0; i < entries->size(); ++i) dump.entries.push_back(readEntry(path, (*entries)[i], i));
    }
    return dump;
}

}  // namespace osc
