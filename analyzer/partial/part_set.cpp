#include "analyzer/partial/part_set.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/crossrank/device_records.h"
#include "analyzer/partial/device_codec.h"
#include "analyzer/partial/partial_format.h"
#include "analyzer/partial/prepared_device.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace osc::partial {
namespace {

using nlohmann::json;

// `count` records of T stored at `at` in the scratch file.
template <typename T>
std::vector<T> readRecords(const crossrank::ScratchFile& file, uint64_t at, size_t count) {
    std::vector<T> out(count);
    file.read(at, out.data(), out.size() * sizeof(T));
    return out;
}

// A device's record streams gathered and written to the scratch file in one
// write: a write per stream was most of filling the set for 1,024 small
// devices. Offsets are the file's as if each had been appended.
class StagedRecords {
public:
    explicit StagedRecords(crossrank::ScratchFile& file) : file_(file), base_(file.size()) {}
    uint64_t append(const void* data, size_t size) {
        const uint64_t at = base_ + bytes_.size();
        bytes_.append(static_cast<const char*>(data), size);
        return at;
    }
    // Before anything else is appended to the file; staging goes on after it.
    void write() {
        file_.append(bytes_.data(), bytes_.size());
        bytes_.clear();
        base_ = file_.size();
    }

private:
    crossrank::ScratchFile& file_;
    uint64_t base_;
    std::string bytes_;
};

// Names the file and the line of any problem in one message.
class Where {
public:
    Where(const std::string& name, size_t line) : name_(name), line_(line) {}
    [[noreturn]] void fail(const std::string& what) const {
        throw CaptureError(name_, "not a valid partial result (line " + std::to_string(line_) + "): " + what);
    }
    const json& field(const json& obj, const char* key) const {
        if (!obj.is_object()) fail("expected an object holding '" + std::string(key) + "'");
        const auto it = obj.find(key);
        if (it == obj.end()) fail("'" + std::string(key) + "' is missing");
        return *it;
    }
    int64_t integer(const json& obj, const char* key) const {
        const json& v = field(obj, key);
        if (!v.is_number_integer()) fail("'" + std::string(key) + "' is not an integer");
        if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
            fail("'" + std::string(key) + "' is out of range");
        return v.get<int64_t>();
    }
    uint64_t count(const json& obj, const char* key) const {
        const json& v = field(obj, key);
        if (!v.is_number_unsigned()) fail("'" + std::string(key) + "' is not a count");
        return v.get<uint64_t>();
    }
    double real(const json& obj, const char* key) const {
        const json& v = field(obj, key);
        if (!v.is_number()) fail("'" + std::string(key) + "' is not a number");
        return v.get<double>();
    }
    std::string text(const json& obj, const char* key) const {
        const json& v = field(obj, key);
        if (!v.is_string()) fail("'" + std::string(key) + "' is not a string");
        return v.get<std::string>();
    }
    const json& array(const json& obj, const char* key, size_t size = std::numeric_limits<size_t>::max()) const {
        const json& v = field(obj, key);
        if (!v.is_array()) fail("'" + std::string(key) + "' is not an array");
        if (size != std::numeric_limits<size_t>::max() && v.size() != size)
            fail("'" + std::string(key) + "' holds " + std::to_string(v.size()) + " values, expected " +
                 std::to_string(size));
        return v;
    }
    uint64_t countAt(const json& arr, size_t i, const char* what) const {
        const json& v = arr[i];
        if (!v.is_number_unsigned()) fail(std::string(what) + " holds a value that is not a count");
        return v.get<uint64_t>();
    }
    // A count, or nullopt for null.
    std::optional<uint64_t> optionalCountAt(const json& arr, size_t i, const char* what) const {
        if (arr[i].is_null()) return std::nullopt;
        return countAt(arr, i, what);
    }
    int32_t int32At(const json& arr, size_t i, const char* what) const {
        const int64_t v = at(arr, i, what);
        if (v < INT32_MIN || v > INT32_MAX) fail(std::string(what) + " holds a value out of range");
        return static_cast<int32_t>(v);
    }
    int64_t at(const json& arr, size_t i, const char* what) const {
        const json& v = arr[i];
        if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)))
            fail(std::string(what) + " holds a value that is not an integer");
        return v.get<int64_t>();
    }

private:
    const std::string& name_;
    size_t line_;
};

json parseLine(const std::string& line, const Where& where) {
    try {
        return json::parse(line);
    } catch (const json::exception& e) {
        where.fail(std::string("not JSON: ") + e.what());
    }
}

AnalysisSettings readSettings(const json& s, const Where& w) {
    AnalysisSettings out;
    for (const auto& p : w.array(s, "comm_kernel_patterns")) {
        if (!p.is_string()) w.fail("'comm_kernel_patterns' holds a value that is not a string");
        out.commKernelPatterns.push_back(p.get<std::string>());
    }
    const json& copies = w.field(s, "comm_copies");
    if (!copies.is_boolean()) w.fail("'comm_copies' is not true or false");
    out.commCopies = copies.get<bool>();
    out.stepPattern = w.text(s, "step_pattern");
    out.smallCollectiveBytes = w.count(s, "small_collective_bytes");
    out.smallCollectiveNs = w.integer(s, "small_collective_ns");
    out.smallCollectiveCount = static_cast<int>(w.integer(s, "small_collective_count"));
    out.idleGapNs = w.integer(s, "idle_gap_ns");
    const std::string align = w.text(s, "align");
    if (align != "collectives" && align != "session-start") w.fail("'align' is neither collectives nor session-start");
    out.alignCollectives = align == "collectives";
    out.microbatchPattern = w.text(s, "microbatch_pattern");
    out.pipelineStages = static_cast<int>(w.integer(s, "pipeline_stages"));
    out.bubbleExcessShare = w.real(s, "bubble_excess_share");
    out.alltoallImbalance = w.real(s, "alltoall_imbalance");
    out.stragglerLateNs = w.integer(s, "straggler_late_ns");
    if (const json& peak = w.field(s, "peak_busbw_gbps"); !peak.is_null())
        out.peakBusBwGbps = w.real(s, "peak_busbw_gbps");
    return out;
}

// An istream that owns the descriptor and buffer it reads through.
class RangeStream : public std::istream {
public:
    RangeStream(int fd, bool ownsFd, uint64_t offset, uint64_t length, const std::string& name)
        : std::istream(nullptr), fd_(fd), owns_(ownsFd), buf_(fd, offset, length, name) {
        rdbuf(&buf_);
    }
    ~RangeStream() override {
        if (owns_) ::close(fd_);
    }

private:
    int fd_;
    bool owns_;
    crossrank::FdRangeBuf buf_;
};

// Opens a file we are about to read whole; refuses what is not a regular file
// without waiting on it (a FIFO).
int openRegular(const std::string& path, uint64_t& size) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        const int error = errno;
        if (error == ENOENT) throw CaptureError(path, "no such file or directory");
        if (error == EACCES) throw CaptureError(path, "permission denied");
        throw CaptureError(path, std::string("cannot open: ") + std::strerror(error));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw CaptureError(path, "not a regular file; give a partial result written by `report --partial`");
    }
    size = static_cast<uint64_t>(st.st_size);
    return fd;
}

}  // namespace

void PartSet::setHeader(const AnalysisSettings& s, std::vector<std::string> in) {
    const std::string text = settingsLine(s, false);
    if (!haveHeader_) {
        settings = s;
        settingsText_ = text;
        haveHeader_ = true;
    } else if (text != settingsText_) {
        throw std::invalid_argument(
            "partial results made with different analysis settings (--comm-kernel, "
            "--comm-copies, --step-pattern, --microbatch-pattern, --pipeline-stages): " +
            settingsText_ + " versus " + text);
    } else if (s.alignCollectives != settings.alignCollectives) {
        alignAgreed = false;
    }
    inputs.insert(inputs.end(), in.begin(), in.end());
}

void PartSet::addPartialFile(const std::string& path) {
    uint64_t size = 0;
    const int fd = openRegular(path, size);
    if (size > 0 && sniff(path) != InputKind::PartialResult) {
        ::close(fd);
        throw CaptureError(path, "not a partial result (`overlapscope report --partial` writes them)");
    }
    sources_.push_back({path, path, nullptr});
    RangeStream in(fd, true, 0, size, path);
    readStream(in, sources_.size() - 1, 0, true);
}

void PartSet::refuseDuplicate(const PartDevice& d, const std::string& where) {
    // A process is its host, pid, rank and wall-clock time 0: a process
    // captured twice (detach, attach) has two time 0s and is two parts, not a
    // copy; PyTorch traces often lack the host and give every rank pid 0.
    const PartFile& file = files[d.file];
    const PartProcess& process = file.processes.at(static_cast<size_t>(d.process));
    const auto [it, added] =
        seen_.try_emplace({process.host, process.pid, process.rank, file.originUtcNs, d.header.device}, d.file, where);
    if (added || it->second.first == d.file) return;
    if (it->second.second == where)
        throw CaptureError(where,
                           "given twice; its devices would be counted twice (give each capture or partial "
                           "result once)");
    const std::string rank = process.rank >= 0 ? "rank " + std::to_string(process.rank) + ", " : "";
    throw CaptureError(where, "device " + std::to_string(d.header.device) + " of " + rank + process.host + " pid " +
                                  std::to_string(process.pid) + " is also in " + it->second.second +
                                  " (the same data given twice would be counted twice; give each capture or "
                                  "partial result once)");
}

namespace {

// The first line of a partial is not JSON. When it is the start of a header
// spread over several lines (a pretty-printer, or a newer version that writes
// one), say that instead of "not JSON", and say first when the version is
// newer than ours. Throws either way.
[[noreturn]] void refuseSpreadHeader(std::istream& in, const std::string& first, const std::string& name) {
    std::string text = first + "\n";
    constexpr size_t kMaxHeader = 1 << 20;
    std::string more(kMaxHeader, '\0');
    in.read(more.data(), static_cast<std::streamsize>(more.size()));
    text.append(more.data(), static_cast<size_t>(in.gcount()));
    std::istringstream rest(text);
    json header;
    try {
        rest >> header;  // one value; what follows it is left unread
    } catch (const json::exception&) {}
    if (header.is_object() && header.contains("format") && header["format"] == kPartialFormat) {
        const auto version = header.find("version");
        if (version != header.end() && version->is_number_integer() && version->get<int64_t>() > kPartialVersion)
            throw CaptureError(name, "partial result version " + std::to_string(version->get<int64_t>()) +
                                         " is newer than this overlapscope reads (" + std::to_string(kPartialVersion) +
                                         ")");
        throw CaptureError(
            name,
            "the partial result's header spans several lines: a partial result is JSON Lines, one "
            "object a line (was it pretty-printed? write it again with `overlapscope report --partial`)");
    }
    parseLine(first, Where(name, 1));  // names the JSON error
    throw CaptureError(name, "not a partial result");
}

}  // namespace

void PartSet::addSections(const crossrank::ScratchFile& scratch, uint64_t offset, uint64_t length,
                          const std::string& name) {
    sources_.push_back({name, "", &scratch});
    RangeStream in(scratch.fd(), false, offset, length, name);
    readStream(in, sources_.size() - 1, offset, false);
}

void PartSet::readStream(std::istream& in, size_t source, uint64_t base, bool whole) {
    const std::string name = sources_[source].name;
    uint64_t pos = 0;
    size_t lineNo = 0;
    std::string line;
    // One line; false at the end of the input. A line must end with '\n'.
    const auto next = [&]() -> bool {
        if (!std::getline(in, line)) return false;
        ++lineNo;
        if (in.eof()) Where(name, lineNo).fail("the last line is cut off (an interrupted write?)");
        pos += line.size() + 1;
        return true;
    };
    if (whole) {
        if (!next()) throw CaptureError(name, "empty file; not a partial result");
        const Where w(name, lineNo);
        if (!json::accept(line)) refuseSpreadHeader(in, line, name);
        const json header = parseLine(line, w);
        if (!header.is_object() || !header.contains("format") || header["format"] != kPartialFormat)
            throw CaptureError(name, "not a partial result (expected \"format\": \"overlapscope-partial\")");
        const int64_t version = w.integer(header, "version");
        if (version > kPartialVersion)
            throw CaptureError(name, "partial result version " + std::to_string(version) +
                                         " is newer than this overlapscope reads (" + std::to_string(kPartialVersion) +
                                         ")");
        if (version < kPartialVersion)
            throw CaptureError(name, "partial result version " + std::to_string(version) +
                                         " is older than this overlapscope reads (" + std::to_string(kPartialVersion) +
                                         "; it lacks inputs the merge needs): write it again with "
                                         "`overlapscope report --partial`");
        std::vector<std::string> named;
        for (const auto& i : w.array(header, "inputs"))
            if (i.is_string()) named.push_back(i.get<std::string>());
        try {
            setHeader(readSettings(w.field(header, "settings"), w), std::move(named));
        } catch (const std::invalid_argument& e) {
            throw CaptureError(name, e.what());
        }
    }
    size_t filesHere = 0, devicesHere = 0;
    for (;;) {
        if (!next()) {
            if (whole) throw CaptureError(name, "the partial result is cut off (no end line; an interrupted write?)");
            return;
        }
        const Where w(name, lineNo);
        const json obj = parseLine(line, w);
        if (obj.is_object() && obj.contains("end")) {
            if (!whole) w.fail("unexpected end line");
            const json& end = obj["end"];
            if (w.count(end, "files") != filesHere || w.count(end, "devices") != devicesHere)
                w.fail("the end line counts other files or devices than the file holds");
            if (in.peek() != std::char_traits<char>::eof()) Where(name, lineNo + 1).fail("data after the end line");
            return;
        }
        if (!obj.is_object() || !obj.contains("file")) w.fail("expected a file line");
        const json& f = obj["file"];
        PartFile file;
        file.path = w.text(f, "path");
        file.originUtcNs = w.integer(f, "origin_utc_ns");
        for (const auto& p : w.array(f, "processes"))
            file.processes.push_back({static_cast<int>(w.integer(p, "rank")), w.text(p, "host"), w.integer(p, "pid")});
        for (const auto& lw : w.array(f, "load_warnings"))
            if (lw.is_string()) file.loadWarnings.push_back(lw.get<std::string>());
        file.savedNothing = f.contains("saved_nothing") && f["saved_nothing"] == true;
        for (const auto& wa : w.array(f, "warnings")) {
            const int64_t p = w.integer(wa, "process");
            if (p < 0 || static_cast<size_t>(p) >= file.processes.size())
                w.fail("a warning names no process of the file");
            file.warnings.emplace_back(static_cast<int>(p), w.text(wa, "message"));
        }
        if (!f.contains("dropped_records") || !f["dropped_records"].is_null())
            file.droppedRecords = w.count(f, "dropped_records");
        const uint64_t deviceCount = w.count(f, "devices");
        files.push_back(std::move(file));
        ++filesHere;
        for (uint64_t k = 0; k < deviceCount; ++k) {
            if (!next()) Where(name, lineNo + 1).fail("the file's devices are cut off");
            PartDevice d;
            d.file = files.size() - 1;
            readDevice(line, name, lineNo, d);
            if (d.process < 0 || static_cast<size_t>(d.process) >= files.back().processes.size())
                Where(name, lineNo).fail("a device names no process of its file");
            // The device's report object: where it is, read again when written.
            d.source = source;
            d.reportAt = base + pos;
            in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
            ++lineNo;
            const auto n = static_cast<uint64_t>(in.gcount());
            if (n == 0 || in.eof()) Where(name, lineNo).fail("a device's report object is cut off");
            d.reportLength = n - 1;
            pos += n;
            refuseDuplicate(d, name);
            devices.push_back(std::move(d));
            ++devicesHere;
        }
    }
}

// The device line's point-to-point, all-to-all and pipeline inputs; the
// records go to `data`. `sendRecv` flags the device's SendRecv operations.
static void readPatterns(const json& j, const Where& w, PartDevice& d, const std::vector<char>& sendRecv,
                         crossrank::ScratchFile& data) {
    using crossrank::AllToAllRecord;
    using crossrank::P2pPartRecord;
    crossrank::DeviceHeader& h = d.header;
    const auto opIndex = [&](const json& col, size_t i, const char* what) {
        const int64_t v = w.at(col, i, what);
        if (v < 0 || static_cast<uint64_t>(v) >= sendRecv.size()) w.fail(std::string(what) + " names no operation");
        return static_cast<uint32_t>(v);
    };
    const json& comms = w.array(j, "comm_ranks");
    if (comms.size() % 2) w.fail("'comm_ranks' holds an odd count of values");
    for (size_t i = 0; i < comms.size(); i += 2)
        h.commRanks.emplace_back(w.countAt(comms, i, "'comm_ranks'"), w.int32At(comms, i + 1, "'comm_ranks'"));

    const json& p = w.field(j, "p2p");
    const json& pop = w.array(p, "op");
    const size_t n = pop.size();
    const json& hash = w.array(p, "comm_hash", n);
    const json& rank = w.array(p, "comm_rank", n);
    const json& count = w.array(p, "parts", n);
    const json& send = w.array(p, "send");
    const json& peer = w.array(p, "peer", send.size());
    const json& bytes = w.array(p, "bytes", send.size());
    const json& seq = w.array(p, "seq", send.size());
    std::vector<P2pPartRecord> records;
    size_t next = 0;
    for (size_t i = 0; i < n; ++i) {
        P2pPartRecord r;
        r.op = opIndex(pop, i, "'p2p.op'");
        const auto commHash = w.optionalCountAt(hash, i, "'p2p.comm_hash'");
        r.hasCommHash = commHash.has_value();
        r.commHash = commHash.value_or(0);
        r.commRank = w.int32At(rank, i, "'p2p.comm_rank'");
        r.sendRecv = sendRecv[r.op] != 0;
        const uint64_t parts = w.countAt(count, i, "'p2p.parts'");
        if (parts > send.size() - next) w.fail("'p2p.parts' counts more parts than the columns hold");
        if (parts == 0) {
            r.parts = 0;
            records.push_back(r);
            continue;
        }
        for (uint64_t q = 0; q < parts; ++q, ++next) {
            r.send = w.countAt(send, next, "'p2p.send'") != 0;
            r.peer = w.int32At(peer, next, "'p2p.peer'");
            r.bytes = w.countAt(bytes, next, "'p2p.bytes'");
            const auto number = w.optionalCountAt(seq, next, "'p2p.seq'");
            r.hasSeq = number.has_value();
            r.seq = number.value_or(0);
            records.push_back(r);
        }
    }
    if (next != send.size()) w.fail("'p2p' holds parts no operation counts");
    h.p2pRecords = static_cast<uint32_t>(records.size());
    d.p2pAt = data.append(records.data(), records.size() * sizeof(P2pPartRecord));

    const json& a = w.field(j, "alltoall");
    const json& aop = w.array(a, "op");
    const size_t m = aop.size();
    const json& step = w.array(a, "step", m);
    const json& duration = w.array(a, "duration_ns", m);
    const json& exposedNs = w.array(a, "exposed_ns", m);
    const json& sent = w.array(a, "sent", m);
    const json& received = w.array(a, "received", m);
    const json& total = w.array(a, "total", m);
    std::vector<AllToAllRecord> alltoall(m);
    for (size_t i = 0; i < m; ++i) {
        AllToAllRecord& r = alltoall[i];
        r.op = opIndex(aop, i, "'alltoall.op'");
        r.step = w.int32At(step, i, "'alltoall.step'");
        if (r.step >= static_cast<int32_t>(h.steps.size())) w.fail("'alltoall.step' names no step");
        r.duration_ns = w.at(duration, i, "'alltoall.duration_ns'");
        r.exposed_ns = w.at(exposedNs, i, "'alltoall.exposed_ns'");
        const auto put = [&](const json& col, const char* what, uint64_t& value, uint8_t& has) {
            const auto v = w.optionalCountAt(col, i, what);
            has = v.has_value();
            value = v.value_or(0);
        };
        put(sent, "'alltoall.sent'", r.sent, r.hasSent);
        put(received, "'alltoall.received'", r.received, r.hasReceived);
        put(total, "'alltoall.total'", r.total, r.hasTotal);
    }
    h.alltoallOps = static_cast<uint32_t>(m);
    d.alltoallAt = data.append(alltoall.data(), alltoall.size() * sizeof(AllToAllRecord));

    const json& mb = w.field(j, "microbatches");
    const json& mstep = w.array(mb, "step");
    const size_t k = mstep.size();
    const json& forward = w.array(mb, "forward", k);
    const json& backward = w.array(mb, "backward", k);
    const json& start = w.array(mb, "start", k);
    const json& end = w.array(mb, "end", k);
    for (size_t i = 0; i < k; ++i) {
        DeviceIntervals::MicroBatches x;
        x.step = w.int32At(mstep, i, "'microbatches.step'");
        if (x.step >= static_cast<int32_t>(h.steps.size())) w.fail("'microbatches.step' names no step");
        x.forward = w.int32At(forward, i, "'microbatches.forward'");
        x.backward = w.int32At(backward, i, "'microbatches.backward'");
        x.compute = {w.at(start, i, "'microbatches.start'"), w.at(end, i, "'microbatches.end'")};
        h.microbatches.push_back(x);
    }
    const json& c = w.array(j, "compute");
    if (c.size() % 2) w.fail("'compute' holds an odd count of times");
    IntervalSet compute(c.size() / 2);
    for (size_t i = 0; i < compute.size(); ++i)
        compute[i] = {w.at(c, 2 * i, "'compute'"), w.at(c, 2 * i + 1, "'compute'")};
    d.compute = static_cast<uint32_t>(compute.size());
    d.computeAt = data.append(compute.data(), compute.size() * sizeof(Interval));

    const json& g = w.field(j, "idle_gap_at");
    const json& window = w.array(g, "window");
    const json& atNs = w.array(g, "at_ns", window.size());
    for (size_t i = 0; i < window.size(); ++i) {
        const int32_t at = w.int32At(window, i, "'idle_gap_at.window'");
        if (at < -1 || at >= static_cast<int32_t>(h.steps.size())) w.fail("'idle_gap_at.window' names no step");
        d.idleGapAt.emplace_back(at, w.at(atNs, i, "'idle_gap_at.at_ns'"));
    }
}

// The names of a device's lead-ups as one blob: each a 4-byte length, then its bytes.
static std::string nameBlob(const std::vector<std::string>& names) {
    std::string blob;
    for (const auto& n : names) {
        const auto size = static_cast<uint32_t>(n.size());
        blob.append(reinterpret_cast<const char*>(&size), sizeof size);
        blob += n;
    }
    return blob;
}

// `Records`: a ScratchFile or StagedRecords.
template <class Records>
static void storeLeadUps(PartDevice& d, const std::vector<DeviceIntervals::LeadUp>& leads,
                         const std::vector<DeviceIntervals::LeadUpIncrement>& incs,
                         const std::vector<std::string>& names, Records& data) {
    d.header.leadUps = static_cast<uint32_t>(leads.size());
    d.leadUpsAt = data.append(leads.data(), leads.size() * sizeof(DeviceIntervals::LeadUp));
    d.increments = static_cast<uint32_t>(incs.size());
    d.incrementsAt = data.append(incs.data(), incs.size() * sizeof(DeviceIntervals::LeadUpIncrement));
    const std::string blob = nameBlob(names);
    d.names = static_cast<uint32_t>(names.size());
    d.namesBytes = blob.size();
    d.namesAt = data.append(blob.data(), blob.size());
}

// The device line's docs/design.md 4d inputs (partial_format.cpp,
// writeCollectiveHealth); the records go to `data`.
static void readCollectiveHealth(const json& j, const Where& w, PartDevice& d, size_t ops,
                                 crossrank::ScratchFile& data) {
    d.header.gpu = w.text(j, "gpu");
    d.header.gpuUuid = w.text(j, "gpu_uuid");
    const json& b = w.field(j, "bandwidth");
    const json& bytes = w.array(b, "bus_bytes", ops);
    const json& factor = w.array(b, "bus_factor", ops);
    const json& exposed = w.array(b, "exposed_ns", ops);
    const json& step = w.array(b, "step", ops);
    const json& alltoall = w.array(b, "alltoall", ops);
    std::vector<crossrank::BandwidthRecord> records(ops);
    for (size_t i = 0; i < ops; ++i) {
        auto& r = records[i];
        const auto n = w.optionalCountAt(bytes, i, "'bandwidth.bus_bytes'");
        r.hasBytes = n.has_value();
        r.busBytes = n.value_or(0);
        if (!factor[i].is_null()) {
            if (!factor[i].is_number()) w.fail("'bandwidth.bus_factor' holds a value that is not a number");
            r.hasFactor = 1;
            r.factor = factor[i].get<double>();
        }
        r.exposed_ns = w.at(exposed, i, "'bandwidth.exposed_ns'");
        r.step = w.int32At(step, i, "'bandwidth.step'");
        if (r.step >= static_cast<int32_t>(d.header.steps.size())) w.fail("'bandwidth.step' names no step");
        r.allToAll = w.countAt(alltoall, i, "'bandwidth.alltoall'") != 0;
    }
    d.bandwidthAt = data.append(records.data(), records.size() * sizeof(crossrank::BandwidthRecord));

    const json& l = w.field(j, "lead_ups");
    const json& op = w.array(l, "op");
    const size_t n = op.size();
    const json& lstep = w.array(l, "step", n);
    const json& from = w.array(l, "from_ns", n);
    const json& compute = w.array(l, "compute_ns", n);
    const json& idle = w.array(l, "idle_ns", n);
    const json& count = w.array(l, "increments", n);
    const json& name = w.array(l, "name");
    const json& host = w.array(l, "host", name.size());
    const json& ns = w.array(l, "ns", name.size());
    std::vector<std::string> names;
    for (const auto& x : w.array(l, "names")) {
        if (!x.is_string()) w.fail("'lead_ups.names' holds a value that is not a string");
        names.push_back(x.get<std::string>());
    }
    std::vector<DeviceIntervals::LeadUp> leads(n);
    size_t total = 0;
    for (size_t i = 0; i < n; ++i) {
        auto& x = leads[i];
        const int64_t o = w.at(op, i, "'lead_ups.op'");
        if (o < 0 || static_cast<uint64_t>(o) >= ops || (i > 0 && static_cast<uint32_t>(o) <= leads[i - 1].op))
            w.fail("'lead_ups.op' names no operation, or not in order");
        x.op = static_cast<uint32_t>(o);
        x.step = w.int32At(lstep, i, "'lead_ups.step'");
        if (x.step < 0 || x.step >= static_cast<int32_t>(d.header.steps.size()))
            w.fail("'lead_ups.step' names no step");
        x.from_ns = w.at(from, i, "'lead_ups.from_ns'");
        x.compute_ns = w.at(compute, i, "'lead_ups.compute_ns'");
        x.idle_ns = w.at(idle, i, "'lead_ups.idle_ns'");
        const uint64_t c = w.countAt(count, i, "'lead_ups.increments'");
        if (c > name.size() - total) w.fail("'lead_ups.increments' counts more than the columns hold");
        x.increments = static_cast<uint32_t>(c);
        total += c;
    }
    if (total != name.size()) w.fail("'lead_ups' holds increments no lead-up counts");
    std::vector<DeviceIntervals::LeadUpIncrement> incs(name.size());
    for (size_t i = 0; i < incs.size(); ++i) {
        const uint64_t k = w.countAt(name, i, "'lead_ups.name'");
        if (k >= names.size()) w.fail("'lead_ups.name' names no name");
        incs[i].name = static_cast<uint32_t>(k);
        incs[i].host = w.countAt(host, i, "'lead_ups.host'") != 0;
        incs[i].ns = w.at(ns, i, "'lead_ups.ns'");
    }
    storeLeadUps(d, leads, incs, names, data);
}

void PartSet::readDevice(const std::string& line, const std::string& name, size_t lineNo, PartDevice& d) {
    const Where w(name, lineNo);
    const json obj = parseLine(line, w);
    if (!obj.is_object() || !obj.contains("device")) w.fail("expected a device line");
    const json& j = obj["device"];
    d.process = static_cast<int>(w.integer(j, "process"));
    crossrank::DeviceHeader& h = d.header;
    h.rank = static_cast<int>(w.integer(j, "rank"));
    h.host = w.text(j, "host");
    h.pid = w.integer(j, "pid");
    h.device = static_cast<uint32_t>(w.integer(j, "device"));
    const json& t = w.array(j, "totals", 7);
    TimeNs* totals[] = {&h.totals.window_ns,       &h.totals.compute_ns, &h.totals.comm_ns, &h.totals.overlap_ns,
                        &h.totals.exposed_comm_ns, &h.totals.busy_ns,    &h.totals.idle_ns};
    for (size_t i = 0; i < 7; ++i) *totals[i] = w.at(t, i, "'totals'");

    const json& s = w.field(j, "steps");
    const json& names = w.array(s, "name");
    const size_t steps = names.size();
    h.steps.resize(steps);
    for (size_t i = 0; i < steps; ++i) {
        if (!names[i].is_string()) w.fail("a step name is not a string");
        h.steps[i].name = names[i].get<std::string>();
    }
    using crossrank::StepHeader;
    const std::pair<const char*, TimeNs StepHeader::*> stepColumns[] = {
        {"start_ns", &StepHeader::start_ns},     {"end_ns", &StepHeader::end_ns},
        {"window_ns", &StepHeader::window_ns},   {"comm_ns", &StepHeader::comm_ns},
        {"overlap_ns", &StepHeader::overlap_ns}, {"exposed_comm_ns", &StepHeader::exposed_comm_ns}};
    for (const auto& [key, member] : stepColumns) {
        const json& col = w.array(s, key, steps);
        for (size_t i = 0; i < steps; ++i) h.steps[i].*member = w.at(col, i, key);
    }

    const json& o = w.field(j, "ops");
    std::vector<uint32_t> nameIds;
    for (const auto& n : w.array(o, "collective_names")) {
        if (!n.is_string()) w.fail("a collective name is not a string");
        nameIds.push_back(keys.nameId(n.get<std::string>()));
    }
    const json& kind = w.array(o, "collective");
    const size_t ops = kind.size();
    const json& hash = w.array(o, "comm_hash", ops);
    const json& seq = w.array(o, "seq_number", ops);
    const json& start = w.array(o, "start_ns", ops);
    const json& end = w.array(o, "end_ns", ops);
    std::vector<crossrank::OpRecord> records(ops);
    crossrank::KeyTable::Device numbering(keys);
    std::vector<char> sendRecv(ops, 0);
    for (size_t i = 0; i < ops; ++i) {
        const int64_t k = w.at(kind, i, "'collective'");
        if (k < 0 || static_cast<size_t>(k) >= nameIds.size()) w.fail("an operation names no collective");
        const uint32_t nameId = nameIds[static_cast<size_t>(k)];
        sendRecv[i] = keys.names()[nameId] == "SendRecv";
        records[i].start_ns = w.at(start, i, "'start_ns'");
        records[i].end_ns = w.at(end, i, "'end_ns'");
        const bool plugin = !hash[i].is_null() && !seq[i].is_null();
        if (plugin && (!hash[i].is_number_unsigned() || !seq[i].is_number_unsigned()))
            w.fail("an operation's comm_hash or seq_number is not a count");
        records[i].key = plugin ? numbering.key(nameId, hash[i].get<uint64_t>(), seq[i].get<uint64_t>())
                                : numbering.key(nameId, std::nullopt, std::nullopt);
    }
    d.ops = static_cast<uint32_t>(ops);
    d.opsAt = data_->append(records.data(), records.size() * sizeof(crossrank::OpRecord));

    const json& ex = w.array(j, "exposed_comm");
    if (ex.size() % 2) w.fail("'exposed_comm' holds an odd count of times");
    IntervalSet exposed(ex.size() / 2);
    for (size_t i = 0; i < exposed.size(); ++i)
        exposed[i] = {w.at(ex, 2 * i, "'exposed_comm'"), w.at(ex, 2 * i + 1, "'exposed_comm'")};
    d.exposed = static_cast<uint32_t>(exposed.size());
    d.exposedAt = data_->append(exposed.data(), exposed.size() * sizeof(Interval));

    readPatterns(j, w, d, sendRecv, *data_);
    readCollectiveHealth(j, w, d, ops, *data_);
}

void PartSet::addFilePart(const FilePart& part, const EncodedDevices& encoded) {
    addPrepared(part, prepareDevices(part), encoded);
}

void PartSet::addPrepared(const FilePart& head, std::vector<PreparedDevice>&& prepared, const EncodedDevices& encoded) {
    const bool kept = std::all_of(prepared.begin(), prepared.end(), [](const auto& p) { return p.device.has_value(); });
    if (!kept && (encoded.spans.size() != prepared.size() || !encoded.scratch))
        throw std::logic_error("addPrepared: where each device lies, or each device itself");
    const Analysis& a = head.analysis;
    PartFile file;
    file.path = head.path;
    file.originUtcNs = head.originUtcNs;
    file.processes = head.processes;
    file.loadWarnings = head.loadWarnings;
    file.savedNothing = head.savedNothing;
    for (size_t w = 0; w < a.warnings.size(); ++w)
        file.warnings.emplace_back(w < head.warningProcess.size() ? head.warningProcess[w] : 0, a.warnings[w]);
    file.droppedRecords = a.droppedRecords;
    files.push_back(std::move(file));
    sources_.push_back({head.path, "", encoded.scratch ? encoded.scratch : data_.get()});
    const auto append = [](StagedRecords& staged, const auto& records) {
        using T = typename std::decay_t<decltype(records)>::value_type;
        return staged.append(records.data(), records.size() * sizeof(T));
    };
    std::vector<crossrank::OpRecord> ops;
    std::vector<uint32_t> nameIds;
    StagedRecords staged(*data_);
    for (size_t i = 0; i < prepared.size(); ++i) {
        PreparedDevice& p = prepared[i];
        PartDevice d;
        d.file = files.size() - 1;
        d.process = p.process;
        d.header = std::move(p.header);
        // Numbered in the device's order, names first seen first, as
        // crossrank::opRecordsOf numbers a DeviceAnalysis's.
        nameIds.clear();
        for (const std::string& name : p.collectives) nameIds.push_back(keys.nameId(name));
        crossrank::KeyTable::Device numbering(keys);
        ops.clear();
        ops.reserve(p.ops.size());
        for (const PreparedDevice::Op& op : p.ops)
            ops.push_back({numbering.key(nameIds[op.collective], op.commHash, op.seqNumber), op.start_ns, op.end_ns});
        d.ops = static_cast<uint32_t>(ops.size());
        d.opsAt = append(staged, ops);
        d.exposed = static_cast<uint32_t>(p.exposed.size());
        d.exposedAt = append(staged, p.exposed);
        d.p2pAt = append(staged, p.p2p);
        d.alltoallAt = append(staged, p.alltoall);
        d.compute = static_cast<uint32_t>(p.compute.size());
        d.computeAt = append(staged, p.compute);
        d.bandwidthAt = append(staged, p.bandwidth);
        storeLeadUps(d, p.leadUps, p.leadUpIncrements, p.leadUpNames, staged);
        staged.write();  // a device at a time: one of a long job holds hundreds of MB
        d.source = sources_.size() - 1;
        d.binary = true;
        if (p.device) {
            d.kept = kept_.size();
            kept_.push_back(std::move(p.device));
        } else {
            d.reportLength = encoded.spans[i].length;
            d.reportAt = encoded.offset + encoded.spans[i].offset;
        }
        refuseDuplicate(d, head.path);
        devices.push_back(std::move(d));
    }
}

DeviceAnalysis PartSet::readDevice(const PartDevice& d) const {
    if (d.kept != PartDevice::kNotKept) {
        std::optional<DeviceAnalysis>& kept = kept_.at(d.kept);
        if (!kept) throw std::logic_error("PartSet::readDevice: a kept device read twice");
        DeviceAnalysis out = std::move(*kept);
        kept.reset();
        return out;
    }
    const Source& s = sources_[d.source];
    std::string bytes(d.reportLength, '\0');
    s.scratch->read(d.reportAt, bytes.data(), bytes.size());
    return decodeDevice(bytes.data(), bytes.size(), s.name.c_str());
}

std::vector<std::string> PartSet::savedNothing() const {
    std::vector<std::string> out;
    for (const auto& f : files)
        if (f.savedNothing) out.push_back(f.path);
    return out;
}

std::vector<std::string> PartSet::loadWarnings() const {
    std::vector<std::string> out;
    for (const auto& f : files) out.insert(out.end(), f.loadWarnings.begin(), f.loadWarnings.end());
    return out;
}

std::vector<crossrank::OpRecord> PartSet::readOps(const PartDevice& d) const {
    return readRecords<crossrank::OpRecord>(*data_, d.opsAt, d.ops);
}

IntervalSet PartSet::readExposed(const PartDevice& d) const {
    return readRecords<Interval>(*data_, d.exposedAt, d.exposed);
}

std::vector<crossrank::P2pPartRecord> PartSet::readP2p(const PartDevice& d) const {
    return readRecords<crossrank::P2pPartRecord>(*data_, d.p2pAt, d.header.p2pRecords);
}

std::vector<crossrank::AllToAllRecord> PartSet::readAllToAll(const PartDevice& d) const {
    return readRecords<crossrank::AllToAllRecord>(*data_, d.alltoallAt, d.header.alltoallOps);
}

IntervalSet PartSet::readCompute(const PartDevice& d) const {
    return readRecords<Interval>(*data_, d.computeAt, d.compute);
}

std::vector<crossrank::BandwidthRecord> PartSet::readBandwidth(const PartDevice& d) const {
    return readRecords<crossrank::BandwidthRecord>(*data_, d.bandwidthAt, d.ops);
}

std::vector<DeviceIntervals::LeadUp> PartSet::readLeadUps(const PartDevice& d) const {
    return readRecords<DeviceIntervals::LeadUp>(*data_, d.leadUpsAt, d.header.leadUps);
}

crossrank::LeadUpDetail PartSet::readLeadUpDetail(const PartDevice& d) const {
    crossrank::LeadUpDetail out;
    out.leadUps = readLeadUps(d);
    out.increments = readRecords<DeviceIntervals::LeadUpIncrement>(*data_, d.incrementsAt, d.increments);
    std::string blob(d.namesBytes, '\0');
    data_->read(d.namesAt, blob.data(), blob.size());
    size_t at = 0;
    for (uint32_t i = 0; i < d.names && at + sizeof(uint32_t) <= blob.size(); ++i) {
        uint32_t size = 0;
        std::memcpy(&size, blob.data() + at, sizeof size);
        at += sizeof size;
        out.names.push_back(blob.substr(at, size));
        at += size;
    }
    return out;
}

std::unique_ptr<std::istream> PartSet::openDeviceJson(const PartDevice& d) const {
    const Source& s = sources_[d.source];
    if (s.scratch) return std::make_unique<RangeStream>(s.scratch->fd(), false, d.reportAt, d.reportLength, s.name);
    uint64_t size = 0;
    const int fd = openRegular(s.path, size);
    if (size < d.reportAt + d.reportLength) {
        ::close(fd);
        throw CaptureError(s.path, "changed while it was merged (it is shorter now)");
    }
    return std::make_unique<RangeStream>(fd, true, d.reportAt, d.reportLength, s.name);
}

}  // namespace osc::partial
