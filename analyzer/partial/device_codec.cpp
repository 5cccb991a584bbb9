#include "analyzer/partial/device_codec.h"

#include "analyzer/capture/capture_error.h"

#include <algorithm>
#include <array>
#include <bit>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace osc::partial {
namespace {

// Numbers are copied in host order: the bytes never leave the process that
// wrote them. Drop this if a big-endian build ever matters (nothing else
// would change).
static_assert(std::endian::native == std::endian::little);

// "OSD" + format 1: a wrong offset into the scratch file fails here first.
constexpr uint32_t kMagic = 0x0144534F;
// "OSF" + format 2: a file's part, its devices apart (format 1 held them inside).
constexpr uint32_t kFileMagic = 0x0246534F;

uint64_t load64(const char* p) {
    uint64_t word;
    std::memcpy(&word, p, sizeof word);
    return word;
}

// Damage that changes only a number leaves a record that parses; this is
// what still catches it, for about 0.4 instructions a byte. Four
// independent lanes keep the multiply chains from serialising; each step
// is a bijection of its lane, so a change of any one 8-byte word always
// changes the sum.
uint64_t checksum(const char* p, size_t n) {
    constexpr uint64_t kOdd = 0x9E3779B97F4A7C15ull;
    uint64_t a = 0x243F6A8885A308D3ull, b = 0x13198A2E03707344ull, c = 0xA4093822299F31D0ull, d = 0x082EFA98EC4E6C89ull;
    const char* const end = p + n;
    for (; end - p >= 32; p += 32) {
        a = (a ^ load64(p)) * kOdd;
        b = (b ^ load64(p + 8)) * kOdd;
        c = (c ^ load64(p + 16)) * kOdd;
        d = (d ^ load64(p + 24)) * kOdd;
    }
    uint64_t sum = n;
    for (uint64_t lane : {a, b, c, d}) sum = (sum ^ lane) * kOdd;
    for (; end - p >= 8; p += 8) sum = (sum ^ load64(p)) * kOdd;
    if (p < end) {
        uint64_t word = 0;
        std::memcpy(&word, p, static_cast<size_t>(end - p));
        sum = (sum ^ word) * kOdd;
    }
    return sum ^ (sum >> 29);
}

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <class T>
struct IsOptional<PackedOptional<T>> : std::true_type {};  // encoded as std::optional<T>
template <class T>
struct IsVector : std::false_type {};
template <class T, class A>
struct IsVector<std::vector<T, A>> : std::true_type {};
template <class T>
struct IsVector<CompactList<T>> : std::true_type {};  // encoded as std::vector<T>
template <class T>
struct IsArray : std::false_type {};
template <class T, size_t N>
struct IsArray<std::array<T, N>> : std::true_type {};

// Element types whose vectors are copied as one block: every bit pattern
// is a valid value and there is no padding to leak or to compare.
template <class T>
constexpr bool kBlockCopy = std::is_same_v<T, Interval> || (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
static_assert(std::has_unique_object_representations_v<Interval>);

// A damaged kind must not become a FindingKind no switch handles. -Wswitch
// flags this function when a kind is added.
bool isKnown(FindingKind kind) {
    switch (kind) {
        case FindingKind::CommOnComputeStream:
        case FindingKind::CommAfterLastCompute:
        case FindingKind::ManySmallCollectives:
        case FindingKind::IdleGap:
        case FindingKind::CommunicationBound:
        case FindingKind::PipelineBubble:
        case FindingKind::AllToAllImbalance:
        case FindingKind::BandwidthLimit:
        case FindingKind::ScheduleLimit:
        case FindingKind::Straggler:
        case FindingKind::SharedGpu:
            return true;
    }
    return false;
}

bool isKnown(BusBwBasis basis) {
    switch (basis) {
        case BusBwBasis::None:
        case BusBwBasis::Transfer:
        case BusBwBasis::Duration:
            return true;
    }
    return false;
}

template <class T, class Struct>
concept MaybeConst = std::same_as<std::remove_const_t<T>, Struct>;

// One visit per struct, used by the writer, the reader and the sizer, so the
// directions cannot disagree. The structured binding names every member:
// a member added to the struct stops this file compiling ("only N names
// provided") until it is listed here, and listing it is all it takes.
#define OSC_CODEC_FIELDS(object, ...) \
    auto& [__VA_ARGS__] = object;     \
    io(__VA_ARGS__)

template <class IO>
void visit(IO& io, MaybeConst<OverlapMetrics> auto& m) {
    OSC_CODEC_FIELDS(m, window_ns, compute_ns, comm_ns, overlap_ns, exposed_comm_ns, busy_ns, idle_ns, overlap_ratio,
                     achieved_speedup, ideal_speedup);
}

template <class IO>
void visit(IO& io, MaybeConst<InterferenceMetrics> auto& m) {
    OSC_CODEC_FIELDS(m, overlapped_compute_ns, interfered_compute_ns, interference_ns, interference_coverage,
                     compute_slowdown, net_overlap_gain_ns);
}

template <class IO>
void visit(IO& io, MaybeConst<WaitTransferMetrics> auto& m) {
    OSC_CODEC_FIELDS(m, comm_wait_ns, exposed_wait_ns, exposed_transfer_ns, kernels_without_peer);
}

template <class IO>
void visit(IO& io, MaybeConst<PipelineStageMetrics> auto& m) {
    OSC_CODEC_FIELDS(m, stage, stages, microbatches, slowest, window_ns, compute_ns, bubble_ns, fill_ns, drain_ns,
                     stall_ns, bubble_share, theoretical_bubble_share);
}

template <class IO>
void visit(IO& io, MaybeConst<AllToAllMetrics> auto& m) {
    OSC_CODEC_FIELDS(m, ops, alltoall_ns, exposed_alltoall_ns, transfer_ns, bytes_sent, bytes_received);
}

template <class IO>
void visit(IO& io, MaybeConst<SignatureInterference> auto& s) {
    OSC_CODEC_FIELDS(s, name, grid, block, isolated, overlapped, baseline_ns, median_overlapped_ns, slowdown_ns);
}

template <class IO>
void visit(IO& io, MaybeConst<P2pPart> auto& p) {
    OSC_CODEC_FIELDS(p, send, peer, bytes, seq);
}

template <class IO>
void visit(IO& io, MaybeConst<CollectiveInstance> auto& c) {
    OSC_CODEC_FIELDS(c, name, collective, datatype, start_ns, end_ns, stream, duration_ns, overlapped_ns, exposed_ns,
                     bytes, bandwidth_gbps, commHash, seqNumber, algo, proto, p2p, commRank, commSize, allToAll, step,
                     kernelIndex, algbw_gbps, busbw_gbps, busbw_fraction, busbw_basis);
}

template <class IO>
void visit(IO& io, MaybeConst<BusBwClass> auto& c) {
    OSC_CODEC_FIELDS(c, collective, size_class, count, median_algbw_gbps, median_busbw_gbps, median_busbw_fraction);
}

template <class IO>
void visit(IO& io, MaybeConst<BusBandwidth> auto& b) {
    OSC_CODEC_FIELDS(b, peak_busbw_gbps, link, measured, median_algbw_gbps, median_busbw_gbps, median_busbw_fraction,
                     bandwidth_limit_exposed_ns, schedule_limit_exposed_ns, classes);
}

template <class IO>
void visit(IO& io, MaybeConst<NamedTime> auto& n) {
    OSC_CODEC_FIELDS(n, name, ns);
}

template <class IO>
void visit(IO& io, MaybeConst<LateArrival> auto& a) {
    OSC_CODEC_FIELDS(a, collective, commHash, number, collectiveIndex, step, medianDevice, medianLabel, late_ns,
                     delay_ns, late_start_ns, compute_ns, host_idle_ns, other_ns, kernels, host);
}

template <class IO>
void visit(IO& io, MaybeConst<StragglerMetrics> auto& s) {
    OSC_CODEC_FIELDS(s, late_arrivals, late_ns, late_start_ns, compute_ns, host_idle_ns, other_ns, worst);
}

template <class IO>
void visit(IO& io, MaybeConst<Finding> auto& f) {
    OSC_CODEC_FIELDS(f, kind, message, exposed_ns, at_ns);
}

template <class IO>
void visit(IO& io, MaybeConst<Bottleneck> auto& b) {
    OSC_CODEC_FIELDS(b, collective, exposed_ns, share, communicationBound, findings);
}

template <class IO>
void visit(IO& io, MaybeConst<StepAnalysis> auto& s) {
    OSC_CODEC_FIELDS(s, name, start_ns, end_ns, metrics, bottleneck, interference, wait, pipeline, alltoall);
}

template <class IO>
void visit(IO& io, MaybeConst<DeviceAnalysis> auto& d) {
    OSC_CODEC_FIELDS(d, processIndex, rank, host, pid, device, totals, steps, collectives, findings, interference,
                     signatures, wait, last_arrivals, delay_caused_ns, clock_shift_ns, pipeline, alltoall,
                     exposed_wait_intervals, droppedRecords, endReason, gpu, gpuUuid, busbw, straggler);
}

template <class IO>
void visit(IO& io, MaybeConst<PartProcess> auto& p) {
    OSC_CODEC_FIELDS(p, rank, host, pid);
}

template <class IO>
void visit(IO& io, MaybeConst<DeviceIntervals::MicroBatches> auto& m) {
    OSC_CODEC_FIELDS(m, step, forward, backward, compute);
}

template <class IO>
void visit(IO& io, MaybeConst<DeviceIntervals::LeadUp> auto& l) {
    OSC_CODEC_FIELDS(l, op, step, from_ns, compute_ns, idle_ns, increments);
}

template <class IO>
void visit(IO& io, MaybeConst<DeviceIntervals::LeadUpIncrement> auto& x) {
    OSC_CODEC_FIELDS(x, name, host, ns);
}

template <class IO>
void visit(IO& io, MaybeConst<DeviceIntervals> auto& iv) {
    OSC_CODEC_FIELDS(iv, exposed, compute, microbatches, leadUps, leadUpIncrements, leadUpNames);
}

template <class IO>
void visit(IO& io, MaybeConst<Interval> auto& i) {
    OSC_CODEC_FIELDS(i, start, end);
}

// A file's part without its devices (each is a record of its own after
// it). Its Analysis holds only what the per-file half fills (devices,
// warnings, dropped records); the settings are the job's and the
// cross-rank members are empty.
template <class IO>
void visit(IO& io, MaybeConst<FilePart> auto& f) {
    auto& [path, originUtcNs, processes, loadWarnings, savedNothing, analysis, warningProcess, intervals] = f;
    io(path, originUtcNs, processes, loadWarnings, savedNothing, analysis.warnings, analysis.droppedRecords,
       warningProcess, intervals);
}

#undef OSC_CODEC_FIELDS

// Encoded size of a value: of a default-constructed T it is the fewest bytes
// a T can take, which bounds how many elements a count may claim.
class Sizer {
public:
    size_t bytes = 0;

    template <class... T>
    void operator()(const T&... v) {
        (field(v), ...);
    }

private:
    template <class T>
    void field(const T& v) {
        if constexpr (std::is_same_v<T, bool>) {
            bytes += 1;
        } else if constexpr (std::is_enum_v<T> || std::is_arithmetic_v<T>) {
            bytes += sizeof(T);
        } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, SharedText>) {
            bytes += sizeof(uint32_t) + v.size();
        } else if constexpr (IsOptional<T>::value) {
            bytes += 1;
            if (v) field(*v);
        } else if constexpr (IsVector<T>::value) {
            bytes += sizeof(uint32_t);
            for (const auto& e : v) field(e);
        } else if constexpr (IsArray<T>::value) {
            for (const auto& e : v) field(e);
        } else {
            visit(*this, v);
        }
    }
};

template <class T>
size_t minEncodedSize() {
    static const size_t bytes = [] {
        Sizer sizer;
        sizer(T{});
        return std::max<size_t>(sizer.bytes, 1);
    }();
    return bytes;
}

class Writer {
public:
    explicit Writer(std::string& out) : out_(out), cur_(out.data() + out.size()), end_(cur_) {}

    template <class... T>
    void operator()(const T&... v) {
        (field(v), ...);
    }

    // Inlined so that a number's copy of constant size becomes one store
    // instead of a call to memcpy.
    [[gnu::always_inline]] void raw(const void* p, size_t n) {
        if (static_cast<size_t>(end_ - cur_) < n) [[unlikely]]
            grow(n);
        std::memcpy(cur_, p, n);
        cur_ += n;
    }

    // What was written, from `from` (an offset into the string) on.
    const char* at(size_t from) const { return out_.data() + from; }
    size_t used() const { return static_cast<size_t>(cur_ - out_.data()); }

    // Drops the spare room grow() made.
    void finish() { out_.resize(used()); }

private:
    template <class T>
    void field(const T& v) {
        if constexpr (std::is_same_v<T, bool>) {
            const uint8_t byte = v ? 1 : 0;
            raw(&byte, 1);
        } else if constexpr (std::is_enum_v<T> || std::is_arithmetic_v<T>) {
            raw(&v, sizeof v);
        } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, SharedText>) {
            count(v.size());
            raw(v.data(), v.size());
        } else if constexpr (IsOptional<T>::value) {
            field(v.has_value());
            if (v) field(*v);
        } else if constexpr (IsVector<T>::value) {
            count(v.size());
            using E = typename T::value_type;
            if constexpr (kBlockCopy<E>) {
                if (!v.empty()) raw(v.data(), v.size() * sizeof(E));
            } else {
                for (const auto& e : v) field(e);
            }
        } else if constexpr (IsArray<T>::value) {
            for (const auto& e : v) field(e);
        } else {
            visit(*this, v);
        }
    }

    void count(size_t n) {
        if (n > UINT32_MAX) throw std::length_error("device record: a string or list of 2^32 or more elements");
        const auto n32 = static_cast<uint32_t>(n);
        raw(&n32, sizeof n32);
    }

    // Resizing (not reserving) lets raw() write through a plain pointer; the
    // string's own geometric growth keeps this amortised O(1) per byte.
    [[gnu::noinline]] void grow(size_t n) {
        const size_t used = this->used();
        out_.resize(std::max({used + n, used + 256, out_.capacity()}));
        cur_ = out_.data() + used;
        end_ = out_.data() + out_.size();
    }

    std::string& out_;
    char* cur_;
    char* end_;
};

class Reader {
public:
    Reader(const char* begin, const char* end, const char* origin) : cur_(begin), end_(end), origin_(origin) {}

    template <class... T>
    void operator()(T&... v) {
        (field(v), ...);
    }

    [[gnu::always_inline]] void raw(void* p, size_t n) {
        if (remaining() < n) [[unlikely]]
            fail("truncated");
        std::memcpy(p, cur_, n);
        cur_ += n;
    }

    size_t remaining() const { return static_cast<size_t>(end_ - cur_); }

    [[noreturn]] void fail(const char* problem) const { throw CaptureError(origin_, problem); }

private:
    template <class T>
    void field(T& v) {
        if constexpr (std::is_same_v<T, bool>) {
            v = flag();
        } else if constexpr (std::is_enum_v<T>) {
            std::underlying_type_t<T> value;
            raw(&value, sizeof value);
            v = static_cast<T>(value);
            if (!isKnown(v)) fail("damaged: an unknown enumerator");
        } else if constexpr (std::is_arithmetic_v<T>) {
            raw(&v, sizeof v);
        } else if constexpr (std::is_same_v<T, std::string>) {
            const size_t n = count(1);
            // Constructing is cheaper than assign() (no aliasing or
            // capacity cases), and `v` is always a fresh empty string.
            v = std::string(cur_, n);
            cur_ += n;
        } else if constexpr (std::is_same_v<T, SharedText>) {
            const size_t n = count(1);
            v = texts_.recall(std::string_view(cur_, n));
            cur_ += n;
        } else if constexpr (IsOptional<T>::value) {
            if (!flag()) {
                v.reset();
            } else if constexpr (std::is_same_v<T, std::optional<typename T::value_type>>) {
                field(v.emplace());
            } else {
                typename T::value_type value{};
                field(value);
                v = value;
            }
        } else if constexpr (IsVector<T>::value) {
            using E = typename T::value_type;
            if constexpr (kBlockCopy<E>) {
                const size_t n = count(sizeof(E));
                v.resize(n);
                if (n) raw(v.data(), n * sizeof(E));
            } else {
                v.resize(count(minEncodedSize<E>()));
                for (auto& e : v) field(e);
            }
        } else if constexpr (IsArray<T>::value) {
            for (auto& e : v) field(e);
        } else {
            visit(*this, v);
        }
    }

    bool flag() {
        uint8_t byte;
        raw(&byte, 1);
        if (byte > 1) fail("damaged: a flag byte other than 0 or 1");
        return byte == 1;
    }

    // A count no larger than the bytes left can hold, so damaged bytes
    // cannot make us allocate much more than the record's size.
    size_t count(size_t minElementBytes) {
        uint32_t n;
        raw(&n, sizeof n);
        if (n > remaining() / minElementBytes) fail("damaged or truncated: a count larger than the bytes left");
        return n;
    }

    const char* cur_;
    const char* end_;
    const char* origin_;
    RecentTexts texts_;  // a device's operations repeat a handful of names
};

template <class T>
void encodeRecord(uint32_t magic, const T& value, std::string& out) {
    const size_t start = out.size();
    try {
        Writer writer(out);
        writer(magic, value);
        const uint64_t sum = checksum(writer.at(start), writer.used() - start);
        writer.raw(&sum, sizeof sum);
        writer.finish();
    } catch (...) {
        out.resize(start);
        throw;
    }
}

template <class T>
T decodeRecord(uint32_t magic, const char* data, size_t size, const char* origin, const char* what) {
    constexpr size_t kSumBytes = sizeof(uint64_t);
    if (size < sizeof magic + kSumBytes) throw CaptureError(origin, "truncated");
    const size_t fieldBytes = size - kSumBytes;
    Reader reader(data, data + fieldBytes, origin);
    uint32_t found;
    reader(found);
    if (found != magic) reader.fail(what);
    T value;
    reader(value);
    if (reader.remaining() != 0) reader.fail("damaged: bytes left after the last field");
    // Checked last: the parse is safe on its own, and a record cut short
    // then says "truncated" rather than "checksum mismatch".
    uint64_t sum;
    std::memcpy(&sum, data + fieldBytes, kSumBytes);
    if (sum != checksum(data, fieldBytes)) reader.fail("damaged: checksum mismatch");
    return value;
}

}  // namespace

void encodeDevice(const DeviceAnalysis& device, std::string& out) { encodeRecord(kMagic, device, out); }

DeviceAnalysis decodeDevice(const char* data, size_t size, const char* origin) {
    return decodeRecord<DeviceAnalysis>(kMagic, data, size, origin, "not a device record (magic number)");
}

namespace {

void appendLength(std::string& out, uint64_t n) { out.append(reinterpret_cast<const char*>(&n), sizeof n); }

// Reserves a length word at `at` and fills it with the bytes written after it.
void fillLength(std::string& out, size_t at) {
    const uint64_t n = out.size() - at - sizeof(uint64_t);
    std::memcpy(out.data() + at, &n, sizeof n);
}

}  // namespace

void encodeFilePart(const FilePart& part, std::string& out, std::vector<DeviceSpan>* spans) {
    const size_t start = out.size();
    try {
        appendLength(out, 0);
        encodeRecord(kFileMagic, part, out);
        fillLength(out, start);
        appendLength(out, part.analysis.devices.size());
        for (const DeviceAnalysis& device : part.analysis.devices) {
            const size_t at = out.size();
            appendLength(out, 0);
            encodeDevice(device, out);
            fillLength(out, at);
            if (spans) spans->push_back({at + sizeof(uint64_t) - start, out.size() - at - sizeof(uint64_t)});
        }
    } catch (...) {
        out.resize(start);
        throw;
    }
}

FilePart decodeFilePart(const char* data, size_t size, const char* origin, std::vector<DeviceSpan>* spans) {
    size_t at = 0;
    // A length word, then that many bytes, all inside the record.
    const auto next = [&]() -> std::pair<size_t, size_t> {
        if (size - at < sizeof(uint64_t)) throw CaptureError(origin, "truncated");
        const uint64_t n = load64(data + at);
        at += sizeof(uint64_t);
        if (n > size - at) throw CaptureError(origin, "damaged or truncated: a length beyond the record");
        const size_t from = at;
        at += n;
        return {from, static_cast<size_t>(n)};
    };
    const auto [headAt, headSize] = next();
    FilePart part =
        decodeRecord<FilePart>(kFileMagic, data + headAt, headSize, origin, "not a file part record (magic number)");
    if (size - at < sizeof(uint64_t)) throw CaptureError(origin, "truncated");
    const uint64_t count = load64(data + at);
    at += sizeof(uint64_t);
    // Each device takes a length word and more: a damaged count cannot make
    // us reserve much beyond the record's size.
    if (count > (size - at) / (2 * sizeof(uint64_t)))
        throw CaptureError(origin, "damaged or truncated: a count larger than the bytes left");
    part.analysis.devices.reserve(count);
    for (uint64_t i = 0; i < count; ++i) {
        const auto [deviceAt, deviceSize] = next();
        part.analysis.devices.push_back(decodeDevice(data + deviceAt, deviceSize, origin));
        if (spans) spans->push_back({deviceAt, deviceSize});
    }
    if (at != size) throw CaptureError(origin, "damaged: bytes left after the last device");
    return part;
}

}  // namespace osc::partial
