// The binary form of one DeviceAnalysis (analyzer/partial/device_codec.h)
// must give back exactly what went in: every example capture's devices,
// random synthetic jobs (data parallel, pipeline, all-to-all, with and
// without --align collectives), a device with every optional set to unusual
// values and one with every optional empty. Compared member by member,
// doubles bit for bit, including what the report JSON does not carry
// (Finding::at_ns, kernelIndex, processIndex, exposed_wait_intervals).
// Truncated, longer and damaged bytes must throw CaptureError.
#include "analyzer/partial/device_codec.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/crossrank/analyze.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/synth/pattern_synth.h"
#include "analyzer/synth/workload_synth.h"
#include "tests/analyzer/random_job.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <climits>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

using namespace osc;
namespace fs = std::filesystem;

namespace {

// Each struct's members as (names, references). The structured binding
// names every member, so a member added to analysis.h stops this test
// compiling until it is compared here (and set in fullDevice()).
#define MEMBERS(object, ...)            \
    const auto& [__VA_ARGS__] = object; \
    return std::pair(std::string_view(#__VA_ARGS__), std::forward_as_tuple(__VA_ARGS__))

auto members(const OverlapMetrics& m) {
    MEMBERS(m, window_ns, compute_ns, comm_ns, overlap_ns, exposed_comm_ns, busy_ns, idle_ns, overlap_ratio,
            achieved_speedup, ideal_speedup);
}
auto members(const InterferenceMetrics& m) {
    MEMBERS(m, overlapped_compute_ns, interfered_compute_ns, interference_ns, interference_coverage, compute_slowdown,
            net_overlap_gain_ns);
}
auto members(const WaitTransferMetrics& m) {
    MEMBERS(m, comm_wait_ns, exposed_wait_ns, exposed_transfer_ns, kernels_without_peer);
}
auto members(const PipelineStageMetrics& m) {
    MEMBERS(m, stage, stages, microbatches, slowest, window_ns, compute_ns, bubble_ns, fill_ns, drain_ns, stall_ns,
            bubble_share, theoretical_bubble_share);
}
auto members(const AllToAllMetrics& m) {
    MEMBERS(m, ops, alltoall_ns, exposed_alltoall_ns, transfer_ns, bytes_sent, bytes_received);
}
auto members(const SignatureInterference& s) {
    MEMBERS(s, name, grid, block, isolated, overlapped, baseline_ns, median_overlapped_ns, slowdown_ns);
}
auto members(const P2pPart& p) { MEMBERS(p, send, peer, bytes, seq); }
auto members(const CollectiveInstance& c) {
    MEMBERS(c, name, collective, datatype, start_ns, end_ns, stream, duration_ns, overlapped_ns, exposed_ns, bytes,
            bandwidth_gbps, commHash, seqNumber, algo, proto, p2p, commRank, commSize, allToAll, step, kernelIndex,
            algbw_gbps, busbw_gbps, busbw_fraction, busbw_basis);
}
auto members(const BusBwClass& c) {
    MEMBERS(c, collective, size_class, count, median_algbw_gbps, median_busbw_gbps, median_busbw_fraction);
}
auto members(const BusBandwidth& b) {
    MEMBERS(b, peak_busbw_gbps, link, measured, median_algbw_gbps, median_busbw_gbps, median_busbw_fraction,
            bandwidth_limit_exposed_ns, schedule_limit_exposed_ns, classes);
}
auto members(const NamedTime& n) { MEMBERS(n, name, ns); }
auto members(const LateArrival& a) {
    MEMBERS(a, collective, commHash, number, collectiveIndex, step, medianDevice, medianLabel, late_ns, delay_ns,
            late_start_ns, compute_ns, host_idle_ns, other_ns, kernels, host);
}
auto members(const StragglerMetrics& s) {
    MEMBERS(s, late_arrivals, late_ns, late_start_ns, compute_ns, host_idle_ns, other_ns, worst);
}
auto members(const Finding& f) { MEMBERS(f, kind, message, exposed_ns, at_ns); }
auto members(const Bottleneck& b) { MEMBERS(b, collective, exposed_ns, share, communicationBound, findings); }
auto members(const StepAnalysis& s) {
    MEMBERS(s, name, start_ns, end_ns, metrics, bottleneck, interference, wait, pipeline, alltoall);
}
auto members(const Interval& i) { MEMBERS(i, start, end); }
auto members(const DeviceAnalysis& d) {
    MEMBERS(d, processIndex, rank, host, pid, device, totals, steps, collectives, findings, interference, signatures,
            wait, last_arrivals, delay_caused_ns, clock_shift_ns, pipeline, alltoall, exposed_wait_intervals,
            droppedRecords, endReason, gpu, gpuUuid, busbw, straggler);
}
#undef MEMBERS

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <class T>
struct IsOptional<PackedOptional<T>> : std::true_type {};
template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};
template <class T>
struct IsVector<CompactList<T>> : std::true_type {};
template <class T>
struct IsArray : std::false_type {};
template <class T, size_t N>
struct IsArray<std::array<T, N>> : std::true_type {};

std::string nameAt(std::string_view names, size_t index) {
    for (size_t i = 0; i < index; ++i) names.remove_prefix(names.find(',') + 1);
    names = names.substr(0, names.find(','));
    while (!names.empty() && names.front() == ' ') names.remove_prefix(1);
    return std::string(names);
}

// Appends "path: what" for every difference (a few at most).
template <class T>
void compare(const T& a, const T& b, const std::string& path, std::vector<std::string>& diffs) {
    if (diffs.size() >= 8) return;
    if constexpr (std::is_floating_point_v<T>) {
        if (std::bit_cast<uint64_t>(a) != std::bit_cast<uint64_t>(b)) diffs.push_back(path + ": bits differ");
    } else if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T> || std::is_same_v<T, std::string> ||
                         std::is_same_v<T, SharedText>) {
        if (!(a == b)) diffs.push_back(path + ": values differ");
    } else if constexpr (IsOptional<T>::value) {
        if (a.has_value() != b.has_value())
            diffs.push_back(path + ": set on one side only");
        else if (a)
            compare(*a, *b, path, diffs);
    } else if constexpr (IsVector<T>::value || IsArray<T>::value) {
        if (a.size() != b.size()) {
            diffs.push_back(path + ": " + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + " elements");
            return;
        }
        for (size_t i = 0; i < a.size(); ++i) compare(a[i], b[i], path + "[" + std::to_string(i) + "]", diffs);
    } else {
        const auto [names, ma] = members(a);
        const auto mb = members(b).second;
        [&]<size_t... I>(std::index_sequence<I...>) {
            (compare(std::get<I>(ma), std::get<I>(mb), path + "." + nameAt(names, I), diffs), ...);
        }
        (std::make_index_sequence<std::tuple_size_v<std::remove_cvref_t<decltype(ma)>>>());
    }
}

std::string joined(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines) out += l + "\n";
    return out;
}

// Members still at their default value, anywhere inside `x` (optionals are
// followed into their value, lists into their first element; later elements
// are free to hold defaults and edge values): fullDevice() must leave none.
template <class T>
void defaultMembers(const T& x, const std::string& path, std::vector<std::string>& out) {
    if constexpr (IsOptional<T>::value) {
        if (!x)
            out.push_back(path + " (empty)");
        else
            defaultMembers(*x, path, out);
    } else if constexpr (IsVector<T>::value) {
        if (x.empty())
            out.push_back(path + " (empty list)");
        else
            defaultMembers(x[0], path + "[0]", out);
    } else if constexpr (std::is_class_v<T> && !std::is_same_v<T, std::string> && !std::is_same_v<T, SharedText> &&
                         !IsArray<T>::value) {
        const T blank{};
        const auto [names, mx] = members(x);
        const auto mblank = members(blank).second;
        [&]<size_t... I>(std::index_sequence<I...>) {
            (
                [&] {
                    const std::string at = path + "." + nameAt(names, I);
                    std::vector<std::string> diffs;
                    compare(std::get<I>(mx), std::get<I>(mblank), at, diffs);
                    if (diffs.empty())
                        out.push_back(at);
                    else
                        defaultMembers(std::get<I>(mx), at, out);
                }(),
                ...);
        }
        (std::make_index_sequence<std::tuple_size_v<std::remove_cvref_t<decltype(mx)>>>());
    }
}

std::string encoded(const DeviceAnalysis& d) {
    std::string bytes;
    partial::encodeDevice(d, bytes);
    return bytes;
}

void expectRoundTrip(const DeviceAnalysis& d, const std::string& what) {
    const std::string bytes = encoded(d);
    const DeviceAnalysis back = partial::decodeDevice(bytes.data(), bytes.size());
    std::vector<std::string> diffs;
    compare(d, back, what, diffs);
    EXPECT_TRUE(diffs.empty()) << joined(diffs);
    EXPECT_EQ(encoded(back), bytes) << what << ": encoded again, the bytes differ";
}

// Which rarely-set parts the analyses of a test reached, so that the round
// trips are known to have carried them.
struct Reached {
    bool wait = false, pipeline = false, alltoall = false, clockShift = false, lastArrivals = false, atNs = false,
         p2p = false, seq = false, signatures = false, exposedWait = false, stepPipeline = false, stepAlltoall = false,
         kernelIndex = false, processIndex = false;

    void add(const DeviceAnalysis& d) {
        wait |= d.wait.has_value();
        pipeline |= d.pipeline.has_value();
        alltoall |= d.alltoall.has_value();
        clockShift |= d.clock_shift_ns.has_value();
        lastArrivals |= d.last_arrivals.has_value();
        signatures |= !d.signatures.empty();
        exposedWait |= !d.exposed_wait_intervals.empty();
        processIndex |= d.processIndex > 0;
        for (const auto& f : d.findings) atNs |= f.at_ns.has_value();
        for (const auto& s : d.steps) {
            stepPipeline |= s.pipeline.has_value();
            stepAlltoall |= s.alltoall.has_value();
            for (const auto& f : s.bottleneck.findings) atNs |= f.at_ns.has_value();
        }
        for (const auto& c : d.collectives) {
            p2p |= !c.p2p.empty();
            kernelIndex |= c.kernelIndex != static_cast<size_t>(-1) && c.kernelIndex > 0;
            for (const auto& p : c.p2p) seq |= p.seq.has_value();
        }
    }
};

void expectAnalysisRoundTrips(const Analysis& a, const std::string& what, Reached& reached) {
    // Several devices appended to one buffer, as a scratch file holds them.
    std::string all;
    std::vector<size_t> offsets{0};
    for (const auto& d : a.devices) {
        partial::encodeDevice(d, all);
        offsets.push_back(all.size());
    }
    for (size_t i = 0; i < a.devices.size(); ++i) {
        const std::string at = what + " device " + std::to_string(i);
        expectRoundTrip(a.devices[i], at);
        const DeviceAnalysis back = partial::decodeDevice(all.data() + offsets[i], offsets[i + 1] - offsets[i]);
        std::vector<std::string> diffs;
        compare(a.devices[i], back, at + " (from the shared buffer)", diffs);
        EXPECT_TRUE(diffs.empty()) << joined(diffs);
        reached.add(a.devices[i]);
    }
}

std::vector<std::string> exampleInputs() {
    const fs::path examples = fs::path(OSC_SOURCE_DIR) / "examples";
    std::vector<std::string> inputs;
    for (const auto& e : fs::directory_iterator(examples))
        if (e.path().extension() == ".sqlite") inputs.push_back(e.path().string());
    inputs.push_back((examples / "ddp_4ranks").string());
    for (const auto& e : fs::directory_iterator(examples / "h100"))
        if (e.is_directory()) inputs.push_back(e.path().string());
    std::sort(inputs.begin(), inputs.end());
    return inputs;
}

TEST(DeviceCodec, EveryExampleCaptureRoundTrips) {
    Reached reached;
    const auto inputs = exampleInputs();
    ASSERT_GE(inputs.size(), 12u);
    for (const auto& input : inputs) {
        const Capture capture = loadCaptures({input});
        for (bool align : {false, true}) {
            AnalysisSettings settings;
            settings.alignCollectives = align;
            const Analysis a = analyze(capture, settings);
            ASSERT_FALSE(a.devices.empty()) << input;
            expectAnalysisRoundTrips(a, input + (align ? " --align" : ""), reached);
        }
    }
    EXPECT_TRUE(reached.wait && reached.clockShift && reached.lastArrivals && reached.signatures &&
                reached.exposedWait && reached.kernelIndex && reached.processIndex && reached.atNs);
}

TEST(DeviceCodec, RandomSyntheticJobsRoundTrip) {
    std::mt19937 rng(20240611);
    Reached reached;
    for (int round = 0; round < 6; ++round) {
        AnalysisSettings settings;
        settings.alignCollectives = round % 2 == 1;
        const std::string r = " round " + std::to_string(round);
        expectAnalysisRoundTrips(analyze(synth::synthesizeWorkload(test::randomJob(rng, 1, 5)), settings),
                                 "data parallel" + r, reached);
        expectAnalysisRoundTrips(analyze(synth::synthesizePipeline(test::randomPipeline(rng)), settings),
                                 "pipeline" + r, reached);
        expectAnalysisRoundTrips(analyze(synth::synthesizeAllToAll(test::randomAllToAll(rng)), settings),
                                 "all-to-all" + r, reached);
    }
    EXPECT_TRUE(reached.wait && reached.pipeline && reached.alltoall && reached.stepPipeline && reached.stepAlltoall &&
                reached.clockShift && reached.p2p && reached.seq && reached.exposedWait);
}

double nanWithPayload() { return std::bit_cast<double>(0x7FF800000000BEEFull); }

// Every member of every struct set, none to its default, with values at
// the edges: INT64_MIN/MAX times, NaN (with a payload), -0.0, infinities,
// denormals, empty strings, NUL bytes and bytes that are not UTF-8.
DeviceAnalysis fullDevice() {
    const std::string notUtf8("\xff\xfe\xc3(\x80", 5);
    const std::string withNul("a\0b", 3);

    auto overlap = [](TimeNs base) {
        OverlapMetrics m;
        m.window_ns = INT64_MAX;
        m.compute_ns = INT64_MIN;
        m.comm_ns = base;
        m.overlap_ns = base + 1;
        m.exposed_comm_ns = -1;
        m.busy_ns = base + 3;
        m.idle_ns = base + 4;
        m.overlap_ratio = nanWithPayload();
        m.achieved_speedup = -std::numeric_limits<double>::infinity();
        m.ideal_speedup = -0.0;
        return m;
    };
    auto interference = [] {
        InterferenceMetrics m;
        m.overlapped_compute_ns = 11;
        m.interfered_compute_ns = 12;
        m.interference_ns = INT64_MIN;
        m.interference_coverage = std::numeric_limits<double>::denorm_min();
        m.compute_slowdown = std::numeric_limits<double>::infinity();
        m.net_overlap_gain_ns = INT64_MAX;
        return m;
    };
    auto wait = [] { return WaitTransferMetrics{INT64_MAX, INT64_MIN, 7, 3}; };
    auto pipeline = [] {
        PipelineStageMetrics m;
        m.stage = INT_MAX;
        m.stages = INT_MIN;
        m.microbatches = 9;
        m.slowest = true;
        m.window_ns = 1;
        m.compute_ns = 2;
        m.bubble_ns = 3;
        m.fill_ns = 4;
        m.drain_ns = 5;
        m.stall_ns = INT64_MIN;
        m.bubble_share = std::numeric_limits<double>::quiet_NaN();
        m.theoretical_bubble_share = 0.1;
        return m;
    };
    auto alltoall = [] {
        AllToAllMetrics m;
        m.ops = -3;
        m.alltoall_ns = 1;
        m.exposed_alltoall_ns = 2;
        m.transfer_ns = INT64_MAX;
        m.bytes_sent = UINT64_MAX;
        m.bytes_received = 0;
        return m;
    };
    auto finding = [](FindingKind kind, const std::string& message) {
        return Finding{kind, message, INT64_MIN, INT64_MAX};
    };

    DeviceAnalysis d;
    d.processIndex = 7;
    d.rank = INT_MAX;
    d.host = notUtf8;
    d.pid = INT64_MIN;
    d.device = UINT32_MAX;
    d.totals = overlap(100);

    StepAnalysis s;
    s.name = withNul;
    s.start_ns = INT64_MIN;
    s.end_ns = INT64_MAX;
    s.metrics = overlap(200);
    s.bottleneck.collective = 1;
    s.bottleneck.exposed_ns = 42;
    s.bottleneck.share = std::numeric_limits<double>::max();
    s.bottleneck.communicationBound = true;
    s.bottleneck.findings = {finding(FindingKind::PipelineBubble, std::string(1000, 'x')),
                             finding(FindingKind::CommunicationBound, "")};
    s.interference = interference();
    s.wait = wait();
    s.pipeline = pipeline();
    s.alltoall = alltoall();
    d.steps = {s, s};
    d.steps[1].name = "";

    CollectiveInstance c;
    c.name = std::string(300, 'k') + notUtf8;
    c.collective = "AllToAll";
    c.datatype = withNul;
    c.start_ns = INT64_MIN;
    c.end_ns = INT64_MAX;
    c.stream = UINT32_MAX;
    c.duration_ns = 1;
    c.overlapped_ns = 2;
    c.exposed_ns = -5;
    c.bytes = UINT64_MAX;
    c.bandwidth_gbps = nanWithPayload();
    c.commHash = 0xDEADBEEFCAFEF00Dull;
    c.seqNumber = 0;
    c.algo = "RING";
    c.proto = "LL128";
    c.p2p = {P2pPart{false, INT32_MIN, UINT64_MAX, 3}, P2pPart{true, 5, 0, UINT64_MAX}};
    c.commRank = INT32_MAX;
    c.commSize = 0;
    c.allToAll = true;
    c.step = 1;
    c.kernelIndex = SIZE_MAX - 1;
    c.algbw_gbps = -0.0;
    c.busbw_gbps = std::numeric_limits<double>::infinity();
    c.busbw_fraction = nanWithPayload();
    c.busbw_basis = BusBwBasis::Duration;
    d.collectives = {c, c};
    d.collectives[1].name = "";

    d.findings = {finding(FindingKind::IdleGap, notUtf8), finding(FindingKind::AllToAllImbalance, "m")};
    d.interference = interference();

    SignatureInterference sig;
    sig.name = notUtf8;
    sig.grid = {UINT32_MAX, 0, 1};
    sig.block = {2, 3, 4};
    sig.isolated = INT_MIN;
    sig.overlapped = INT_MAX;
    sig.baseline_ns = INT64_MIN;
    sig.median_overlapped_ns = 0;
    sig.slowdown_ns = INT64_MAX;
    d.signatures = {sig};

    d.wait = wait();
    d.last_arrivals = INT_MIN;
    d.delay_caused_ns = INT64_MAX;
    d.clock_shift_ns = INT64_MIN;
    d.pipeline = pipeline();
    d.alltoall = alltoall();
    d.exposed_wait_intervals = {{INT64_MIN, -1}, {0, INT64_MAX}};
    d.droppedRecords = UINT64_MAX;
    d.endReason = notUtf8;
    d.gpu = withNul;
    d.gpuUuid = notUtf8;
    BusBandwidth b;
    b.peak_busbw_gbps = std::numeric_limits<double>::denorm_min();
    b.link = notUtf8;
    b.measured = INT_MIN;
    b.median_algbw_gbps = nanWithPayload();
    b.median_busbw_gbps = -0.0;
    b.median_busbw_fraction = std::numeric_limits<double>::max();
    b.bandwidth_limit_exposed_ns = INT64_MIN;
    b.schedule_limit_exposed_ns = INT64_MAX;
    b.classes = {BusBwClass{withNul, UINT64_MAX, INT_MAX, 1.5, nanWithPayload(), -1.0}};
    d.busbw = b;
    StragglerMetrics st;
    st.late_arrivals = INT_MAX;
    st.late_ns = INT64_MIN;
    st.late_start_ns = 1;
    st.compute_ns = -2;
    st.host_idle_ns = INT64_MAX;
    st.other_ns = 3;
    LateArrival& w = st.worst;
    w.collective = notUtf8;
    w.commHash = UINT64_MAX;
    w.number = UINT64_MAX;
    w.collectiveIndex = INT_MIN;
    w.step = withNul;
    w.medianDevice = INT_MAX;
    w.medianLabel = "rank 1 gpu 1";
    w.late_ns = INT64_MAX;
    w.delay_ns = -7;
    w.late_start_ns = INT64_MIN;
    w.compute_ns = 0;
    w.host_idle_ns = 5;
    w.other_ns = -5;
    w.kernels = {NamedTime{notUtf8, INT64_MIN}};
    w.host = {NamedTime{withNul, 9}, NamedTime{"", 1}};
    d.straggler = st;
    return d;
}

// Every optional empty, every list holding one element whose own optionals
// and lists are empty.
DeviceAnalysis emptyOptionalsDevice() {
    DeviceAnalysis d;
    d.steps.emplace_back();
    d.steps[0].bottleneck.findings.push_back(Finding{FindingKind::CommOnComputeStream, "", 0, std::nullopt});
    d.collectives.emplace_back();
    d.collectives[0].p2p.emplace_back();
    d.findings.push_back(Finding{FindingKind::IdleGap, "gap", 1, std::nullopt});
    d.signatures.emplace_back();
    d.exposed_wait_intervals.push_back({5, 5});
    d.endReason = "";  // set but empty: not the same as absent
    d.busbw.emplace().classes.emplace_back();
    d.straggler.emplace().worst.kernels.emplace_back();
    return d;
}

TEST(DeviceCodec, EveryMemberSetToUnusualValuesRoundTrips) {
    const DeviceAnalysis d = fullDevice();
    std::vector<std::string> unset;
    defaultMembers(d, "device", unset);
    EXPECT_TRUE(unset.empty()) << "fullDevice() leaves these at their default:\n" << joined(unset);
    expectRoundTrip(d, "full device");
}

TEST(DeviceCodec, EmptyOptionalsAndDefaultDeviceRoundTrip) {
    expectRoundTrip(DeviceAnalysis{}, "default device");
    const DeviceAnalysis d = emptyOptionalsDevice();
    expectRoundTrip(d, "empty optionals");
    const DeviceAnalysis back = [&] {
        const std::string bytes = encoded(d);
        return partial::decodeDevice(bytes.data(), bytes.size());
    }();
    ASSERT_TRUE(back.endReason.has_value());
    EXPECT_EQ(*back.endReason, "");
    EXPECT_FALSE(back.droppedRecords.has_value());
    EXPECT_FALSE(back.collectives[0].p2p[0].seq.has_value());
    EXPECT_FALSE(back.steps[0].wait.has_value());
}

TEST(DeviceCodec, EncodeAppendsAfterWhatTheBufferHeld) {
    std::string buffer = "prefix";
    partial::encodeDevice(fullDevice(), buffer);
    EXPECT_EQ(buffer.substr(0, 6), "prefix");
    EXPECT_EQ(buffer.substr(6), encoded(fullDevice()));
}

// A file part keeps each device in a record of its own, which the merge
// uses where it lies (PartSet::addFilePart): the spans must name exactly
// those records, whatever the buffer held before.
TEST(DeviceCodec, AFilePartsDeviceRecordsLieWhereItsSpansSay) {
    partial::FilePart part;
    part.path = "rank3.sqlite";
    part.originUtcNs = 1700000000123456789;
    part.processes = {{3, "node-a", 4242}};
    part.loadWarnings = {"a warning"};
    part.analysis.devices = {fullDevice(), DeviceAnalysis{}, fullDevice()};
    part.analysis.devices[2].device = 7;
    part.analysis.warnings = {"w"};
    part.warningProcess = {0};
    part.intervals.resize(2);
    part.intervals[1].exposed = {{5, 9}};

    std::string bytes = "prefix";
    std::vector<partial::DeviceSpan> spans;
    partial::encodeFilePart(part, bytes, &spans);
    ASSERT_EQ(spans.size(), 3u);
    const std::string record = bytes.substr(6);
    for (size_t i = 0; i < spans.size(); ++i)
        EXPECT_EQ(record.substr(spans[i].offset, spans[i].length), encoded(part.analysis.devices[i])) << i;

    std::vector<partial::DeviceSpan> found;
    const partial::FilePart back = partial::decodeFilePart(record.data(), record.size(), "part", &found);
    ASSERT_EQ(found.size(), spans.size());
    for (size_t i = 0; i < spans.size(); ++i) {
        EXPECT_EQ(found[i].offset, spans[i].offset);
        EXPECT_EQ(found[i].length, spans[i].length);
    }
    std::string again;
    partial::encodeFilePart(back, again);
    EXPECT_EQ(again, record);

    for (size_t n = 0; n < record.size(); n += 7) {
        const std::vector<char> cut(record.begin(), record.begin() + static_cast<std::ptrdiff_t>(n));
        EXPECT_THROW(partial::decodeFilePart(cut.data(), cut.size()), CaptureError) << "truncated to " << n;
    }
    const std::string longer = record + '\0';
    EXPECT_THROW(partial::decodeFilePart(longer.data(), longer.size()), CaptureError);
    // The device count, after the head's length word and the head itself.
    std::string damaged = record;
    uint64_t head = 0;
    std::memcpy(&head, damaged.data(), sizeof head);
    std::memset(damaged.data() + sizeof head + head, 0xff, sizeof(uint64_t));
    try {
        partial::decodeFilePart(damaged.data(), damaged.size());
        ADD_FAILURE() << "decoded";
    } catch (const CaptureError& e) {
        EXPECT_NE(std::string(e.what()).find("count"), std::string::npos) << e.what();
    }
}

TEST(DeviceCodec, EveryTruncationThrows) {
    const std::string bytes = encoded(fullDevice());
    for (size_t n = 0; n < bytes.size(); ++n) {
        // A copy of exactly n bytes, so that reading past it is a fault the
        // sanitizers (and often the allocator) notice.
        const std::vector<char> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
        EXPECT_THROW(partial::decodeDevice(cut.data(), cut.size()), CaptureError) << "truncated to " << n;
    }
    std::string longer = bytes + '\0';
    EXPECT_THROW(partial::decodeDevice(longer.data(), longer.size()), CaptureError);
}

TEST(DeviceCodec, EveryFlippedBitThrows) {
    const std::string bytes = encoded(fullDevice());
    std::string damaged = bytes;
    for (size_t i = 0; i < bytes.size(); ++i) {
        for (int bit = 0; bit < 8; ++bit) {
            damaged[i] = static_cast<char>(bytes[i] ^ (1 << bit));
            EXPECT_THROW(partial::decodeDevice(damaged.data(), damaged.size()), CaptureError)
                << "byte " << i << " bit " << bit;
        }
        damaged[i] = bytes[i];
    }
}

TEST(DeviceCodec, ACountLargerThanTheBytesLeftThrowsWithoutAllocating) {
    // The host name's length claims 2^32-1 bytes. The checksum fails too,
    // but the count must be refused first, before anything is allocated
    // or read.
    DeviceAnalysis d;
    d.host = "HOSTNAME";
    std::string bytes = encoded(d);
    const size_t host = bytes.find("HOSTNAME");
    ASSERT_NE(host, std::string::npos);
    ASSERT_GE(host, 4u);
    std::memset(bytes.data() + host - 4, 0xff, 4);
    try {
        partial::decodeDevice(bytes.data(), bytes.size());
        ADD_FAILURE() << "decoded";
    } catch (const CaptureError& e) {
        EXPECT_NE(std::string(e.what()).find("count"), std::string::npos) << e.what();
    }
}

}  // namespace
