// What a Flight Recorder dump's fields mean (flight_recorder.h), read from
// the trees either syntax's reader hands over (dump_readers.h): the one
// place that checks them. A field of the wrong type refuses the dump; an
// entry that cannot be placed (a negative or wrapped sequence id, a record
// id given twice) is left out and counted; a time no clock could have
// given (before 2000 or after 2100, INT64_MIN included) is dropped, so
// that no later subtraction can overflow.
#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/text_map.h"
#include "analyzer/hang/dump_readers.h"
#include "analyzer/hang/flight_recorder.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <unordered_map>

namespace osc {
namespace {

using hang::DataKind;
using hang::DataTree;

constexpr int64_t kEarliestPlausibleNs = 946'684'800'000'000'000;  // 2000-01-01
constexpr int64_t kLatestPlausibleNs = 4'102'444'800'000'000'000;  // 2100-01-01
constexpr uint64_t kMaxDumpBytes = uint64_t{64} << 30;

// Bytes per element of c10's ScalarType names (c10::toString); 0 unknown.
uint64_t dtypeBytes(std::string_view t) {
    static const std::unordered_map<std::string_view, uint64_t> sizes = {{"Float", 4},
                                                                         {"Double", 8},
                                                                         {"Half", 2},
                                                                         {"BFloat16", 2},
                                                                         {"Int", 4},
                                                                         {"Long", 8},
                                                                         {"Short", 2},
                                                                         {"Char", 1},
                                                                         {"Byte", 1},
                                                                         {"Bool", 1},
                                                                         {"ComplexHalf", 4},
                                                                         {"ComplexFloat", 8},
                                                                         {"ComplexDouble", 16},
                                                                         {"Float8_e4m3fn", 1},
                                                                         {"Float8_e5m2", 1},
                                                                         {"Float8_e4m3fnuz", 1},
                                                                         {"Float8_e5m2fnuz", 1},
                                                                         {"Float8_e8m0fnu", 1},
                                                                         {"UInt16", 2},
                                                                         {"UInt32", 4},
                                                                         {"UInt64", 8}};
    const auto it = sizes.find(t);
    return it == sizes.end() ? 0 : it->second;
}

enum class EntryKey {
    Other,
    RecordId,
    PgId,
    ProcessGroup,
    CollectiveSeqId,
    P2pSeqId,
    ProfilingName,
    TimeCreated,
    InputSizes,
    OutputSizes,
    InputDtypes,
    OutputDtypes,
    State,
    TimeCompleted,
    Retired,
    IsP2p,
    ThreadName,
    Frames,
};

// Keys by length first: a million entries of two dozen keys each are read
// without hashing a single one.
EntryKey entryKey(std::string_view k) {
    switch (k.size()) {
        case 5:
            if (k == "pg_id") return EntryKey::PgId;
            if (k == "state") return EntryKey::State;
            break;
        case 6:
            if (k == "frames") return EntryKey::Frames;
            if (k == "is_p2p") return EntryKey::IsP2p;
            break;
        case 7:
            if (k == "retired") return EntryKey::Retired;
            break;
        case 9:
            if (k == "record_id") return EntryKey::RecordId;
            break;
        case 10:
            if (k == "p2p_seq_id") return EntryKey::P2pSeqId;
            break;
        case 11:
            if (k == "input_sizes") return EntryKey::InputSizes;
            if (k == "thread_name") return EntryKey::ThreadName;
            break;
        case 12:
            if (k == "output_sizes") return EntryKey::OutputSizes;
            if (k == "input_dtypes") return EntryKey::InputDtypes;
            break;
        case 13:
            if (k == "process_group") return EntryKey::ProcessGroup;
            if (k == "output_dtypes") return EntryKey::OutputDtypes;
            break;
        case 14:
            if (k == "profiling_name") return EntryKey::ProfilingName;
            break;
        case 15:
            if (k == "time_created_ns") return EntryKey::TimeCreated;
            break;
        case 17:
            if (k == "collective_seq_id") return EntryKey::CollectiveSeqId;
            break;
        case 28:
            if (k == "time_discovered_completed_ns") return EntryKey::TimeCompleted;
            break;
        default:
            break;
    }
    return EntryKey::Other;
}

// A frame of PyTorch itself (the collective's API, its logger wrapper, DDP,
// FSDP...), not the program's own: the program's line is the first other.
bool isPyTorchFrame(std::string_view file) {
    for (std::string_view part : {"site-packages/torch/", "dist-packages/torch/"})
        if (file.find(part) != std::string_view::npos) return true;
    return file.starts_with("torch/");
}

// "[0, 1, 2, 3]" as PyTorch's ranks_str writes it (", " or ","): false for
// anything else ("[0, 1", "[0,,1]", "[a]"). A group of ten thousand ranks is
// listed in each of their dumps, so this is a tight loop.
bool parseRanksText(std::string_view s, std::vector<int64_t>& out) {
    size_t i = 0, n = s.size();
    while (i < n && s[i] == ' ') ++i;
    while (n > i && s[n - 1] == ' ') --n;
    if (n - i < 2 || s[i] != '[' || s[n - 1] != ']') return false;
    ++i;
    --n;
    out.reserve(out.size() + (n - i) / 2);
    while (i < n && s[i] == ' ') ++i;
    if (i == n) return true;  // "[]"
    for (;;) {
        if (i == n || s[i] < '0' || s[i] > '9') return false;
        int64_t v = 0;
        size_t digits = 0;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; ++i, ++digits) {
            if (digits == 12) return false;  // no rank is this large; and v * 10 stays in range
            v = v * 10 + (s[i] - '0');
        }
        out.push_back(v);
        while (i < n && s[i] == ' ') ++i;
        if (i == n) return true;
        if (s[i] != ',') return false;
        ++i;
        while (i < n && s[i] == ' ') ++i;
    }
}

class DumpBuilder : public hang::DumpSink {
public:
    explicit DumpBuilder(FlightRecorderDump& dump) : dump_(dump) {}

    void field(std::string_view key, const DataTree& t) override;
    void entry(const DataTree& t) override;
    void finish();

private:
    // Where a field is: `context` ("pg_config \"1\": "), or for an entry's
    // fields "" (the entry's number is said); built only for a message.
    struct Where {
        std::string_view context, key;
    };
    [[noreturn]] void fail(const std::string& where, const std::string& problem) const {
        throw CaptureError(dump_.path, where + problem);
    }
    [[noreturn]] void fail(Where w, const std::string& problem) const {
        const std::string key = w.key.empty() ? "" : "\"" + std::string(w.key.substr(0, 60)) + "\" ";
        fail(w.context.empty() ? "entry " + std::to_string(entryIndex_) + ": " + key : std::string(w.context) + key,
             problem);
    }
    // An integer node, or its decimal text (pg_status in JSON dumps);
    // nullopt for null. Wrapped: beyond int64.
    struct Integer {
        int64_t value = 0;
        bool wrapped = false;
    };
    std::optional<Integer> integer(const DataTree& t, uint32_t at, Where where) const;
    uint32_t intern(std::string_view s);
    std::string_view text(const DataTree& t, uint32_t at, Where where) const;
    void sizes(const DataTree& t, uint32_t at, Where where, uint64_t& numel, bool& overflow, std::string* shapes) const;
    uint32_t dtypes(const DataTree& t, uint32_t at, Where where, std::vector<std::string_view>& out);
    uint32_t frame(const DataTree& t, uint32_t at);
    int64_t plausibleTime(const std::optional<Integer>& v, size_t index, const std::string& key);

    void readConfig(const DataTree& t);
    void readStatus(const DataTree& t);

    FlightRecorderDump& dump_;
    TextMap<uint32_t> ids_{{"", 0}};
    // The last dtype names looked up: entries of one dump mostly share one.
    // A copy, not a view into the dump's texts: a short text moves when
    // their vector grows (found by the fuzzer).
    std::string lastDtype_;
    uint64_t lastDtypeBytes_ = 0;
    uint64_t elementBytes(std::string_view dtype) {
        if (dtype != lastDtype_) {
            lastDtypeBytes_ = dtypeBytes(dtype);
            lastDtype_.assign(dtype);
        }
        return lastDtypeBytes_;
    }
    std::unordered_map<std::string, uint32_t> frameIds_;
    size_t entryIndex_ = 0;
    int64_t maxRecordId_ = -1;
    bool recordIdsIncrease_ = true;
    bool sawVersion_ = false;
    // Counted oddities, said once each at the end: count and first example.
    struct Odd {
        size_t count = 0;
        std::string first;
    };
    Odd badSeq_, badTime_, badSizes_;
    std::string shapes_;
    std::vector<std::string_view> dtypeNames_;
};

std::optional<DumpBuilder::Integer> DumpBuilder::integer(const DataTree& t, uint32_t at, Where where) const {
    const hang::DataNode& n = t[at];
    if (n.kind == DataKind::None) return std::nullopt;
    if (n.kind == DataKind::Int) return n.bigInt ? Integer{0, true} : Integer{n.integer, false};
    if (n.kind == DataKind::Bool) return Integer{n.boolean ? 1 : 0, false};
    if (n.kind == DataKind::Text) {
        const std::string s(t.text(at));
        size_t used = 0;
        try {
            const long long v = std::stoll(s, &used);
            if (used == s.size()) return Integer{v, false};
        } catch (const std::out_of_range&) {
            return Integer{0, true};
        } catch (const std::exception&) {}
    }
    fail(where, "is not an integer");
}

uint32_t DumpBuilder::intern(std::string_view s) {
    if (const auto it = ids_.find(s); it != ids_.end()) return it->second;
    const auto id = static_cast<uint32_t>(dump_.strings.size());
    dump_.strings.emplace_back(s);
    ids_.emplace(std::string(s), id);
    return id;
}

std::string_view DumpBuilder::text(const DataTree& t, uint32_t at, Where where) const {
    if (t[at].kind == DataKind::None) return {};
    if (t[at].kind != DataKind::Text) fail(where, "is not text");
    return t.text(at);
}

// [[1024], [8, 128]]: elements summed over the tensors; the shapes' text.
void DumpBuilder::sizes(const DataTree& t, uint32_t at, Where where, uint64_t& numel, bool& overflow,
                        std::string* shapes) const {
    numel = 0;
    if (t[at].kind == DataKind::None) return;
    if (t[at].kind != DataKind::List) fail(where, "is not a list of shapes");
    if (shapes) *shapes = "[";
    bool firstShape = true;
    for (uint32_t s = at + 1; s < t[at].end; s = t[s].end) {
        if (t[s].kind != DataKind::List) fail(where, "is not a list of shapes");
        uint64_t elements = 1;
        if (shapes) *shapes += firstShape ? "[" : ", [";
        firstShape = false;
        bool firstDim = true;
        for (uint32_t d = s + 1; d < t[s].end; d = t[d].end) {
            if (t[d].kind != DataKind::Int) fail(where, "holds a dimension that is no integer");
            const int64_t dim = t[d].bigInt ? -1 : t[d].integer;
            if (dim < 0) {
                overflow = true;
            } else if (__builtin_mul_overflow(elements, static_cast<uint64_t>(dim), &elements)) {
                overflow = true;
            }
            if (shapes) {
                *shapes += firstDim ? "" : ", ";
                *shapes += t[d].bigInt ? std::string(t.text(d)) : std::to_string(t[d].integer);
            }
            firstDim = false;
        }
        if (shapes) *shapes += "]";
        if (__builtin_add_overflow(numel, elements, &numel)) overflow = true;
    }
    if (shapes) *shapes += "]";
}

uint32_t DumpBuilder::dtypes(const DataTree& t, uint32_t at, Where where, std::vector<std::string_view>& out) {
    out.clear();
    if (t[at].kind == DataKind::None) return 0;
    if (t[at].kind != DataKind::List) fail(where, "is not a list");
    std::string joined;
    for (uint32_t d = at + 1; d < t[at].end; d = t[d].end) {
        if (t[d].kind != DataKind::Text) fail(where, "holds something other than text");
        out.push_back(t.text(d));
        if (std::find(out.begin(), out.end() - 1, out.back()) != out.end() - 1) continue;
        joined += (joined.empty() ? "" : ",") + std::string(out.back());
    }
    return intern(joined);
}

uint32_t DumpBuilder::frame(const DataTree& t, uint32_t at) {
    if (t[at].kind != DataKind::List) return 0;
    for (uint32_t f = at + 1; f < t[at].end; f = t[f].end) {
        if (t[f].kind != DataKind::Dict) continue;
        const auto file = t.find(f, "filename");
        const auto name = t.find(f, "name");
        const auto line = t.find(f, "line");
        if (!file || t[*file].kind != DataKind::Text || isPyTorchFrame(t.text(*file))) continue;
        FlightRecorderFrame fr;
        fr.filename = std::string(t.text(*file));
        if (name && t[*name].kind == DataKind::Text) fr.name = std::string(t.text(*name));
        if (line && t[*line].kind == DataKind::Int && !t[*line].bigInt) fr.line = t[*line].integer;
        const std::string key = fr.filename + '\n' + fr.name + '\n' + std::to_string(fr.line);
        const auto [it, fresh] = frameIds_.try_emplace(key, static_cast<uint32_t>(dump_.frames.size() + 1));
        if (fresh) dump_.frames.push_back(std::move(fr));
        return it->second;
    }
    return 0;
}

int64_t DumpBuilder::plausibleTime(const std::optional<Integer>& v, size_t index, const std::string& key) {
    if (!v) return kNoFlightRecorderTime;
    if (v->value == 0 && !v->wrapped) return kNoFlightRecorderTime;  // JSON dumps' "not yet"
    if (!v->wrapped && v->value >= kEarliestPlausibleNs && v->value <= kLatestPlausibleNs) return v->value;
    if (badTime_.count++ == 0)
        badTime_.first = "entry " + std::to_string(index) + "'s " + key + " " +
                         (v->wrapped ? std::string("beyond 64 bits") : std::to_string(v->value));
    return kNoFlightRecorderTime;
}

void DumpBuilder::entry(const DataTree& t) {
    const size_t index = entryIndex_;
    if (t.size() == 0 || t[0].kind != DataKind::Dict) fail(Where{"", ""}, "is not a dict of fields");
    FlightRecorderEntry e;
    bool haveRecord = false, haveGroup = false, haveSeq = false, haveName = false, haveState = false;
    std::optional<Integer> seq, p2pSeq, created, completed;
    bool overflow = false;
    uint64_t elementsIn = 0, elementsOut = 0;
    uint32_t outDtypes = 0;
    std::vector<std::string_view> outNames;
    dtypeNames_.clear();  // views into an earlier entry's tree, which is reused (found by the fuzzer)
    for (uint32_t k = 1; k < t[0].end;) {
        const uint32_t v = t[k].end;
        if (v >= t[0].end) break;
        const std::string_view key = t[k].kind == DataKind::Text ? t.text(k) : std::string_view();
        const auto where = [&] { return Where{"", key}; };
        switch (entryKey(key)) {
            case EntryKey::RecordId: {
                const auto id = integer(t, v, where());
                haveRecord = id.has_value();
                e.recordId = id && !id->wrapped ? id->value : -1;
                break;
            }
            case EntryKey::PgId: {
                const auto id = integer(t, v, where());
                e.pgId = id && !id->wrapped ? id->value : -1;
                break;
            }
            case EntryKey::ProcessGroup: {
                if (t[v].kind != DataKind::List || t[v].children < 1 || t[v + 1].kind != DataKind::Text)
                    fail(where(), "is not [name, description]");
                e.pgName = intern(t.text(v + 1));
                const uint32_t desc = t[v + 1].end;
                if (t[v].children > 1 && t[desc].kind == DataKind::Text) e.pgDesc = intern(t.text(desc));
                haveGroup = true;
                break;
            }
            case EntryKey::CollectiveSeqId:
                seq = integer(t, v, where());
                haveSeq = seq.has_value();
                break;
            case EntryKey::P2pSeqId:
                p2pSeq = integer(t, v, where());
                break;
            case EntryKey::ProfilingName:
                e.profilingName = intern(text(t, v, where()));
                haveName = t[v].kind == DataKind::Text;
                break;
            case EntryKey::TimeCreated:
                created = integer(t, v, where());
                break;
            case EntryKey::TimeCompleted:
                completed = integer(t, v, where());
                break;
            case EntryKey::InputSizes:
                sizes(t, v, where(), elementsIn, overflow, &shapes_);
                e.inputShapes = intern(shapes_);
                break;
            case EntryKey::OutputSizes:
                sizes(t, v, where(), elementsOut, overflow, nullptr);
                break;
            case EntryKey::InputDtypes:
                e.dtypes = dtypes(t, v, where(), dtypeNames_);
                break;
            case EntryKey::OutputDtypes:
                outDtypes = dtypes(t, v, where(), outNames);
                break;
            case EntryKey::State: {
                const std::string_view s = text(t, v, where());
                if (s == "completed")
                    e.state = FlightRecorderEntry::State::Completed;
                else if (s == "started")
                    e.state = FlightRecorderEntry::State::Started;
                else if (s == "scheduled")
                    e.state = FlightRecorderEntry::State::Scheduled;
                else
                    fail(where(), "is \"" + std::string(s.substr(0, 40)) + "\", not scheduled, started or completed");
                haveState = true;
                break;
            }
            case EntryKey::Retired:
            case EntryKey::IsP2p: {
                if (t[v].kind != DataKind::Bool && t[v].kind != DataKind::None) fail(where(), "is not true or false");
                (entryKey(key) == EntryKey::Retired ? e.retired : e.isP2P) = t[v].boolean;
                break;
            }
            case EntryKey::ThreadName:
                e.threadName = intern(text(t, v, where()));
                break;
            case EntryKey::Frames:
                e.frame = frame(t, v);
                break;
            case EntryKey::Other:
                break;
        }
        k = t[v].end;
    }
    const auto missing = [&](const char* key) { fail(Where{"", key}, "is missing"); };
    if (!haveRecord) missing("record_id");
    if (!haveGroup) missing("process_group");
    if (!haveSeq) missing("collective_seq_id");
    if (!haveName) missing("profiling_name");
    if (!haveState) missing("state");
    ++entryIndex_;

    // The dtypes of the inputs tell the size of an element; where the
    // inputs are empty (a scatter's non-root), the outputs' do.
    const auto bytesOf = [&](uint64_t numel, const std::vector<std::string_view>& names) -> std::optional<uint64_t> {
        if (overflow || names.empty()) return numel == 0 ? std::optional<uint64_t>(0) : std::nullopt;
        const uint64_t size = elementBytes(names.front());
        for (std::string_view n : names)
            if (elementBytes(n) != size) return std::nullopt;  // mixed: bytes of each tensor unknown here
        uint64_t bytes = 0;
        if (size == 0 || __builtin_mul_overflow(numel, size, &bytes)) return std::nullopt;
        return bytes;
    };
    e.inputNumel = elementsIn;
    e.outputNumel = elementsOut;
    e.inputBytes = bytesOf(elementsIn, dtypeNames_);
    e.outputBytes = bytesOf(elementsOut, outNames);
    if (e.dtypes == 0) e.dtypes = outDtypes;
    if (overflow && badSizes_.count++ == 0) badSizes_.first = "entry " + std::to_string(index);

    e.timeCreatedNs = plausibleTime(created, index, "time_created_ns");
    e.timeDiscoveredCompletedNs = plausibleTime(completed, index, "time_discovered_completed_ns");
    const std::optional<Integer>& id = e.isP2P ? p2pSeq : seq;
    if (!id || id->wrapped || id->value < 0) {
        if (badSeq_.count++ == 0)
            badSeq_.first = "entry " + std::to_string(index) + ", " +
                            (e.isP2P ? std::string("p2p_seq_id ") : std::string("collective_seq_id ")) +
                            (!id           ? std::string("null")
                             : id->wrapped ? "beyond 64 bits"
                                           : std::to_string(id->value));
        return;
    }
    e.collectiveSeqId = seq && !seq->wrapped ? seq->value : -1;
    e.p2pSeqId = p2pSeq && !p2pSeq->wrapped ? p2pSeq->value : -1;
    if (e.recordId <= maxRecordId_) recordIdsIncrease_ = false;
    maxRecordId_ = std::max(maxRecordId_, e.recordId);
    dump_.entries.push_back(e);
}

void DumpBuilder::readConfig(const DataTree& t) {
    if (t[0].kind == DataKind::None) return;
    if (t[0].kind != DataKind::Dict) fail("", "\"pg_config\" is not a dict");
    for (uint32_t k = 1; k < t[0].end;) {
        const uint32_t v = t[k].end;
        if (v >= t[0].end) break;
        const std::string name = t[k].kind == DataKind::Text ? std::string(t.text(k)) : std::string();
        const std::string where = "pg_config \"" + name.substr(0, 60) + "\": ";
        if (t[v].kind != DataKind::Dict) fail(where, "is not a dict");
        FlightRecorderGroup g;
        if (const auto n = t.find(v, "name")) g.name = std::string(text(t, *n, Where{where, "name"}));
        if (g.name.empty()) g.name = name;
        if (const auto d = t.find(v, "desc")) g.desc = std::string(text(t, *d, Where{where, "desc"}));
        // "[0, 1, 2, 3]" as PyTorch's ranks_str writes it; a list when converted.
        bool ok = false;
        if (const auto r = t.find(v, "ranks")) {
            if (t[*r].kind == DataKind::List) {
                ok = true;
                for (uint32_t i = *r + 1; i < t[*r].end; i = t[i].end) {
                    if (t[i].kind != DataKind::Int || t[i].bigInt || t[i].integer < 0) {
                        ok = false;
                        break;
                    }
                    g.ranks.push_back(t[i].integer);
                }
            } else if (t[*r].kind == DataKind::Text) {
                ok = parseRanksText(t.text(*r), g.ranks);
            }
            if (!ok) {
                dump_.warnings.push_back(where + "\"ranks\" is not a list of ranks: the group's members are unknown");
                g.ranks.clear();
            }
        }
        g.ranksKnown = ok;
        if (!std::is_sorted(g.ranks.begin(), g.ranks.end())) std::sort(g.ranks.begin(), g.ranks.end());
        if (std::adjacent_find(g.ranks.begin(), g.ranks.end()) != g.ranks.end()) {
            dump_.warnings.push_back(where + "\"ranks\" lists a rank twice: the group's members are unknown");
            g.ranks.clear();
            g.ranksKnown = false;
        }
        dump_.groups[g.name] = std::move(g);
        k = t[v].end;
    }
}

void DumpBuilder::readStatus(const DataTree& t) {
    if (t[0].kind == DataKind::None) return;
    if (t[0].kind != DataKind::Dict) fail("", "\"pg_status\" is not a dict");
    dump_.hasStatusTable = true;
    for (uint32_t k = 1; k < t[0].end;) {
        const uint32_t v = t[k].end;
        if (v >= t[0].end) break;
        const std::string where =
            "pg_status \"" + std::string(t[k].kind == DataKind::Text ? t.text(k).substr(0, 40) : "") + "\": ";
        const auto id = integer(t, k, Where{where, ""});
        if (t[v].kind != DataKind::Dict) fail(where, "is not a dict");
        FlightRecorderGroupStatus s;
        bool ok = id && !id->wrapped;
        const auto read = [&](const char* key, int64_t& out) {
            if (const auto f = t.find(v, key)) {
                const auto n = integer(t, *f, Where{where, key});
                if (n && (n->wrapped || n->value < -1)) ok = false;  // never a count PyTorch keeps
                if (n && !n->wrapped) out = n->value;
            }
        };
        read("last_enqueued_collective", s.lastEnqueued);
        read("last_started_collective", s.lastStarted);
        read("last_completed_collective", s.lastCompleted);
        if (ok)
            dump_.groupStatus[id->value] = s;
        else
            dump_.warnings.push_back(where + "holds a negative or wrapped sequence number: the status is not used");
        k = t[v].end;
    }
}

void DumpBuilder::field(std::string_view key, const DataTree& t) {
    if (t.size() == 0) return;
    if (key == "version") {
        if (t[0].kind != DataKind::Text) fail("", "\"version\" is not text");
        dump_.version = std::string(t.text(0));
        sawVersion_ = true;
    } else if (key == "comm_lib_version" || (key == "nccl_version" && dump_.commLibVersion.empty())) {
        if (t[0].kind == DataKind::Text) dump_.commLibVersion = std::string(t.text(0));
    } else if (key == "pg_config") {
        readConfig(t);
    } else if (key == "pg_status") {
        readStatus(t);
    } else if (key == "entries") {
        // Streamed item by item where the reader could; here when it could not.
        if (t[0].kind == DataKind::None) {
            dump_.warnings.push_back("\"entries\" is null: read as no entries");
            return;
        }
        if (t[0].kind != DataKind::List) fail("", "\"entries\" is not a list");
        DataTree one;
        for (uint32_t item : t.items(0)) {
            one.clear();
            one.copy(t, item);
            entry(one);
        }
    }
}

void DumpBuilder::finish() {
    if (!sawVersion_) fail("", "has no \"version\", so it is not a Flight Recorder dump");
    const size_t dot = dump_.version.find('.');
    if (dot == std::string::npos || dump_.version.substr(0, dot) != "2")
        throw CaptureError(dump_.path, "Flight Recorder dump version " + dump_.version.substr(0, 40) +
                                           " is not one overlapscope reads (" + kFlightRecorderVersionsRead + ")");
    if (!recordIdsIncrease_) {
        // A record given twice is one record: keep the first.
        std::vector<size_t> order(dump_.entries.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(),
                         [&](size_t a, size_t b) { return dump_.entries[a].recordId < dump_.entries[b].recordId; });
        std::vector<bool> drop(order.size(), false);
        size_t dropped = 0;
        for (size_t i = 1; i < order.size(); ++i)
            if (dump_.entries[order[i]].recordId == dump_.entries[order[i - 1]].recordId &&
                dump_.entries[order[i]].recordId >= 0) {
                drop[order[i]] = true;
                ++dropped;
            }
        if (dropped) {
            std::vector<FlightRecorderEntry> kept;
            kept.reserve(dump_.entries.size() - dropped);
            for (size_t i = 0; i < dump_.entries.size(); ++i)
                if (!drop[i]) kept.push_back(dump_.entries[i]);
            dump_.entries = std::move(kept);
            dump_.warnings.push_back(std::to_string(dropped) + " entr" + (dropped == 1 ? "y repeats" : "ies repeat") +
                                     " an earlier entry's record_id: read once");
        }
    }
    const auto say = [&](const Odd& odd, const std::string& what) {
        if (odd.count) dump_.warnings.push_back(std::to_string(odd.count) + " " + what + " (first: " + odd.first + ")");
    };
    say(badSeq_, std::string(badSeq_.count == 1 ? "entry has" : "entries have") +
                     " a negative, null or wrapped sequence id and " + (badSeq_.count == 1 ? "is" : "are") +
                     " left out");
    say(badTime_, std::string(badTime_.count == 1 ? "time is" : "times are") +
                      " before 2000 or after 2100, which no clock gave: read as unknown");
    say(badSizes_, std::string(badSizes_.count == 1 ? "entry's" : "entries'") +
                       " tensor sizes are negative or overflow: their bytes are unknown");
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

namespace {

FlightRecorderDump readDump(hang::ByteSource& in, bool pickle, const std::string& path, uint64_t bytes) {
    FlightRecorderDump dump;
    // A JSON entry takes 400 bytes or more, a pickled one 100 or more: room
    // for all, reserved but untouched until used, instead of copies as it grows.
    dump.entries.reserve(static_cast<size_t>(std::min<uint64_t>(bytes / (pickle ? 100 : 400), uint64_t{1} << 23)));
    dump.path = path;
    dump.format = pickle ? FlightRecorderDump::Format::Pickle : FlightRecorderDump::Format::Json;
    dump.rank = flightRecorderRankFromName(path);
    if (dump.rank < 0)
        throw CaptureError(path,
                           "cannot tell which rank wrote this Flight Recorder dump: PyTorch names dumps with the rank "
                           "at the end (nccl_trace_rank_3); rename it so");
    DumpBuilder builder(dump);
    if (pickle)
        hang::readPickleDump(in, path, builder, {}, bytes);
    else
        hang::readJsonDump(in, path, builder, {}, bytes);
    builder.finish();
    return dump;
}

}  // namespace

FlightRecorderDump readFlightRecorderDump(const std::string& path) {
    hang::FileSource file(path);
    if (file.size() > kMaxDumpBytes) throw CaptureError(path, "too large for a Flight Recorder dump (over 64 GiB)");
    return readDump(file, file.firstByte() == 0x80, path, file.size());
}

FlightRecorderDump readFlightRecorderDumpBytes(std::string_view bytes, const std::string& path, size_t chunk) {
    hang::MemorySource in(bytes, chunk);
    return readDump(in, !bytes.empty() && static_cast<unsigned char>(bytes[0]) == 0x80, path, bytes.size());
}

}  // namespace osc
