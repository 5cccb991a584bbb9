// Raw CUPTI recordings: hand-built buffers of the real CUDA 13 record structs
// go through the recorder to disk, come back through the replay source, the
// agent's pool and writer thread, and must give the same capture as decoding
// the same records directly. Also the format's failure modes.
#include "agent/cupti/cupti_decoder.h"
#include "agent/cupti/cupti_recorder.h"
#include "agent/cupti/cupti_records.h"
#include "agent/recording/replay_source.h"
#include "analyzer/capture/row_sink.h"
#include "analyzer/capture/schema.h"
#include "analyzer/load/load_capture.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/cupti_record_fixture.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace osc::agent::cupti {
namespace {

namespace fs = std::filesystem;
using recording::Recording;

std::string apiName(ApiKind kind, uint32_t cbid) {
    return (kind == ApiKind::Runtime ? "cudaLaunchKernel_v" : "cuLaunchKernelEx_") + std::to_string(cbid);
}

// One buffer's worth of records, laid out back to back like CUPTI's.
class Buffer {
public:
    template <typename R>
    void add(const R& r) {
        offsets_.push_back(used_);
        words_.resize((used_ + sizeof(R) + 7) / 8);
        std::memcpy(bytes() + used_, &r, sizeof(R));
        used_ += (sizeof(R) + 7) & ~size_t{7};
    }
    const uint8_t* bytes() const { return reinterpret_cast<const uint8_t*>(words_.data()); }
    uint8_t* bytes() { return reinterpret_cast<uint8_t*>(words_.data()); }
    size_t size() const { return used_; }
    std::vector<const CUpti_Activity*> records() const {
        std::vector<const CUpti_Activity*> out;
        for (size_t o : offsets_) out.push_back(reinterpret_cast<const CUpti_Activity*>(bytes() + o));
        return out;
    }

private:
    std::vector<uint64_t> words_;
    std::vector<size_t> offsets_;
    size_t used_ = 0;
};

// Strings the records point to live here, at addresses a replay cannot know.
struct Texts {
    std::string kernel = "_ZN4gemm6kernelIfLi128EEEvPKT_PS1_i";
    std::string nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    std::string step = "step 0", domain = "training", device = "NVIDIA H100 80GB HBM3";
};

std::vector<Buffer> sampleBuffers(const Texts& t) {
    std::vector<Buffer> buffers(2);
    auto dev = zeroed<DeviceRecord>(CUPTI_ACTIVITY_KIND_DEVICE);
    dev.name = t.device.c_str();
    dev.isCudaVisible = 1;
    dev.numMultiprocessors = 132;
    dev.computeCapabilityMajor = 9;
    buffers[0].add(dev);
    auto start = zeroed<MarkerRecord>(CUPTI_ACTIVITY_KIND_MARKER);
    start.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
    start.timestamp = kOrigin + 100;
    start.id = 1;
    start.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    start.objectId.pt.processId = kPid;
    start.objectId.pt.threadId = 77;
    start.name = t.step.c_str();
    start.domain = t.domain.c_str();
    buffers[0].add(start);
    for (uint32_t i = 0; i < 3; ++i) {
        auto api = zeroed<ApiRecord>(i == 2 ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME);
        api.cbid = static_cast<CUpti_CallbackId>(211 + i);
        api.start = kOrigin + 200 + i * 100;
        api.end = api.start + 50;
        api.processId = kPid;
        api.threadId = i == 1 ? 999 : 77;  // 999: the agent's own thread
        api.correlationId = 10 + i;
        buffers[0].add(api);
        auto k = zeroed<KernelRecord>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        k.start = kOrigin + 1000 + i * 1000;
        k.end = k.start + 800;
        k.streamId = i == 2 ? 13 : 7;
        k.contextId = 1;
        k.correlationId = 10 + i;
        k.gridX = 64 + i;
        k.name = (i == 2 ? t.nccl : t.kernel).c_str();
        buffers[i == 0 ? 0 : 1].add(k);
    }
    auto end = start;
    end.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
    end.timestamp = kOrigin + 5000;
    end.name = nullptr;  // CUPTI names only the start
    end.domain = nullptr;
    buffers[1].add(end);
    return buffers;
}

DecodeContext contextFor(const std::string& capturePath) {
    DecodeContext c;
    c.sourceOriginNs = kOrigin;
    c.originUtcNs = kOrigin + 5;  // CUPTI's realtime clock read a moment before the wall clock
    c.pid = kPid;
    c.globalPid = schema::packGlobalPid(kPid);
    c.capturePath = capturePath;
    return c;
}

GpuInfo driverGpu() {
    GpuInfo g;
    g.id = 0;
    g.name = "NVIDIA H100 80GB HBM3";
    g.busLocation = "0000:18:00.0";
    g.uuid = "GPU-1234";
    g.smCount = 132;
    return g;
}

recording::Manifest manifest() {
    recording::Manifest m;
    m.who = ProcessIdentity{"gpuhost", kPid, 1, 1, 2, "ddp_overlap --mode bucketed", "ddp_overlap"};
    m.metadata = {{"cupti_version", "130000"}};
    return m;
}

// Records the sample through the recorder as the agent does; returns the folder.
std::string recordSample(const std::string& dir, const Texts& texts) {
    CuptiRecorder recorder(dir, &apiName);
    const DecodeContext c = contextFor(dir + "/gpuhost-4321-rank1.sqlite");
    recorder.begin(1, c, manifest());
    recorder.ownThread(999);
    recorder.gpus({driverGpu()});
    for (const Buffer& b : sampleBuffers(texts)) recorder.buffer(b.bytes(), b.size(), b.records());
    return recordingFolderFor(dir, c.capturePath);
}

// The same records decoded directly into a capture, the way the live agent would.
Capture decodeDirectly(const std::string& path, const Texts& texts) {
    auto writer = CaptureWriter::create(path, kOrigin + 5);
    writer->addProcess(ProcessRow{schema::packGlobalPid(kPid), kPid, "ddp_overlap"});
    WriterRowSink sink(*writer);
    CuptiDecoder decoder(&apiName);
    decoder.ignoreApiCallsOf(999);
    decoder.addDriverGpu(driverGpu(), sink);
    const DecodeContext c = contextFor(path);
    for (const Buffer& b : sampleBuffers(texts))
        for (const CUpti_Activity* r : b.records()) decoder.decode(r, c, sink);
    writer->close(CaptureEnd::Stopped);
    return loadCapture(path);
}

TEST(CuptiRecording, WritesEveryBufferWithItsStringsAndOffsets) {
    test::TempDir dir;
    Texts texts;
    const Recording r = recording::readRecording(recordSample(dir.path(), texts));
    EXPECT_EQ(fs::path(r.directory).filename(), "gpuhost-4321-rank1.cupti");
    EXPECT_EQ(r.manifest.who.host, "gpuhost");
    EXPECT_EQ(r.manifest.who.rank, 1);
    EXPECT_EQ(r.manifest.who.commandLine, "ddp_overlap --mode bucketed");
    EXPECT_EQ(r.manifest.layout.at("kernel"), static_cast<int64_t>(sizeof(KernelRecord)));
    EXPECT_TRUE(r.hasOrigin);
    EXPECT_EQ(r.originSourceNs, kOrigin);
    EXPECT_EQ(r.originUtcNs, kOrigin + 5);
    ASSERT_EQ(r.gpus.size(), 1u);
    EXPECT_EQ(r.gpus[0].busLocation, "0000:18:00.0");
    EXPECT_EQ(r.ownThreads, std::vector<uint32_t>{999});
    ASSERT_EQ(r.buffers.size(), 2u);
    const auto sample = sampleBuffers(texts);
    for (size_t i = 0; i < 2; ++i) {
        ASSERT_EQ(r.buffers[i].validBytes, sample[i].size());
        EXPECT_EQ(std::memcmp(r.buffers[i].bytes(), sample[i].bytes(), sample[i].size()), 0) << "byte for byte";
    }
    EXPECT_EQ(r.buffers[0].recordOffsets.size(), 6u);  // device, marker, 3 API records, 1 kernel
    EXPECT_EQ(r.buffers[1].recordOffsets.size(), 3u);
    // Device name, marker name and domain, one kernel; then two kernels (the end marker has none).
    EXPECT_EQ(r.buffers[0].patches.size(), 4u);
    EXPECT_EQ(r.buffers[1].patches.size(), 2u);
    // Each distinct text once; the gemm name is shared by two kernels.
    EXPECT_EQ(r.strings.size(), 5u);
    EXPECT_EQ(r.apiNames.size(), 3u);
    EXPECT_EQ(r.apiNames.at({ApiKind::Driver, 213}), "cuLaunchKernelEx_213");
    EXPECT_FALSE(r.truncated);
}

TEST(CuptiRecording, ReplayGivesTheCaptureADirectDecodeGives) {
    test::TempDir dir;
    Texts texts;
    const Recording rec = recording::readRecording(recordSample(dir.path(), texts));
    // The recorded strings must be what the replay reads, not the memory they came from.
    texts.kernel.assign(texts.kernel.size(), 'x');
    texts.step.assign(texts.step.size(), 'x');
    recording::replayToCapture(rec, dir / "replayed.sqlite");
    const Capture replayed = loadCapture(dir / "replayed.sqlite");
    const Capture direct = decodeDirectly(dir / "direct.sqlite", Texts{});

    ASSERT_EQ(replayed.processes.size(), 1u);
    const Process& p = replayed.processes[0];
    const Process& q = direct.processes[0];
    EXPECT_EQ(p.pid, kPid);
    EXPECT_EQ(p.rank, 1);
    EXPECT_EQ(p.host, "gpuhost");
    EXPECT_EQ(p.sessionStartUtcNs, kOrigin + 5) << "the recorded time 0, not the replay's";
    ASSERT_EQ(p.devices.size(), 1u);
    ASSERT_EQ(q.devices.size(), 1u);
    const KernelTable& a = p.devices[0].kernels;
    const KernelTable& b = q.devices[0].kernels;
    ASSERT_EQ(a.size(), 3u);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a.start[i], b.start[i]);
        EXPECT_EQ(a.end[i], b.end[i]);
        EXPECT_EQ(a.stream[i], b.stream[i]);
        EXPECT_EQ(a.correlation[i], b.correlation[i]);
        EXPECT_EQ(a.gridX[i], b.gridX[i]);
        EXPECT_EQ(replayed.strings.at(a.name[i]), direct.strings.at(b.name[i]));
    }
    EXPECT_EQ(replayed.strings.at(a.name[0]), "void gemm::kernel<float, 128>(float const*, float*, int)");
    EXPECT_EQ(p.devices[0].gpu.name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(p.devices[0].gpu.busLocation, "0000:18:00.0");
    ASSERT_EQ(p.apiCalls.size(), 2u) << "the agent's own thread is left out";
    EXPECT_EQ(p.apiCalls.size(), q.apiCalls.size());
    for (size_t i = 0; i < p.apiCalls.size(); ++i)
        EXPECT_EQ(replayed.strings.at(p.apiCalls.name[i]), direct.strings.at(q.apiCalls.name[i]));
    ASSERT_EQ(p.ranges.size(), 1u);
    EXPECT_EQ(replayed.strings.at(p.ranges.name[0]), "step 0");
    EXPECT_EQ(replayed.strings.at(p.ranges.domain[0]), "training");
    EXPECT_EQ(p.ranges.start[0], q.ranges.start[0]);
    EXPECT_EQ(p.ranges.end[0], q.ranges.end[0]);
    EXPECT_EQ(p.meta.at("activity_source"), "cupti-replay");
    EXPECT_EQ(p.meta.at("cupti_version"), "130000");
}

TEST(CuptiRecording, CompressedActivityReadsTheSame) {
    test::TempDir dir;
    const std::string folder = recordSample(dir.path(), Texts{});
    const Recording plain = recording::readRecording(folder);
    std::ifstream in(folder + "/activity.bin", std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    gzFile gz = gzopen((folder + "/activity.bin.gz").c_str(), "wb");
    gzwrite(gz, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(gz);
    fs::remove(folder + "/activity.bin");
    const Recording packed = recording::readRecording(folder);
    ASSERT_EQ(packed.buffers.size(), plain.buffers.size());
    EXPECT_EQ(packed.strings, plain.strings);
    EXPECT_EQ(packed.buffers[1].words, plain.buffers[1].words);
}

TEST(CuptiRecording, AKilledWriterLeavesTheBuffersBeforeTheCut) {
    test::TempDir dir;
    const std::string folder = recordSample(dir.path(), Texts{});
    const auto size = fs::file_size(folder + "/activity.bin");
    fs::resize_file(folder + "/activity.bin", size - 10);  // the second buffer's chunk is cut short
    const Recording r = recording::readRecording(folder);
    EXPECT_TRUE(r.truncated);
    EXPECT_EQ(r.buffers.size(), 1u);
}

TEST(CuptiRecording, ANewCaptureNeverOverwritesAnOldRecording) {
    test::TempDir dir;
    const std::string folder = recordSample(dir.path(), Texts{});
    const auto before = fs::file_size(folder + "/activity.bin");
    CuptiRecorder again(dir.path(), &apiName);
    again.begin(2, contextFor(dir / "gpuhost-4321-rank1.sqlite"), manifest());  // prints one line
    EXPECT_FALSE(again.active());
    EXPECT_EQ(fs::file_size(folder + "/activity.bin"), before);
}

TEST(CuptiRecording, OtherRecordLayoutsAreRefusedByName) {
    test::TempDir dir;
    Recording r = recording::readRecording(recordSample(dir.path(), Texts{}));
    r.manifest.layout["kernel"] += 8;  // a newer Kernel struct
    try {
        recording::ReplayActivitySource source(r);
        FAIL() << "accepted a recording it would misread";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("gpuhost-4321-rank1.cupti: recorded with kernel = "), std::string::npos)
            << e.what();
    }
}

// overlapscope-replay's command line: one line and exit 2 for bad input,
// nothing overwritten.
int replayTool(const std::string& args, std::string& output) {
    FILE* pipe = ::popen((std::string(OSC_REPLAY_TOOL) + " " + args + " 2>&1").c_str(), "r");
    char buf[4096];
    output.clear();
    while (pipe && std::fgets(buf, sizeof buf, pipe)) output += buf;
    const int status = pipe ? ::pclose(pipe) : -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(ReplayTool, ReplaysAFolderOfRecordingsAndKeepsWhatExists) {
    test::TempDir dir;
    recordSample(dir / "recs", Texts{});
    std::string out;
    EXPECT_EQ(replayTool("--help", out), 0);
    EXPECT_NE(out.find("--output"), std::string::npos) << out;
    EXPECT_EQ(replayTool(dir / "recs -o " + dir / "caps", out), 0) << out;
    EXPECT_NE(out.find("2 buffers, 9 records -> " + dir / "caps/gpuhost-4321-rank1.sqlite"), std::string::npos) << out;
    EXPECT_EQ(loadCapture(dir / "caps").kernelCount(), 3u);
    const auto written = fs::last_write_time(dir / "caps/gpuhost-4321-rank1.sqlite");
    EXPECT_EQ(replayTool(dir / "recs -o " + dir / "caps", out), 2);
    EXPECT_EQ(out,
              "overlapscope-replay: " + dir / "caps/gpuhost-4321-rank1.sqlite" + ": already exists; not overwritten\n");
    EXPECT_EQ(fs::last_write_time(dir / "caps/gpuhost-4321-rank1.sqlite"), written);
    EXPECT_EQ(replayTool(dir / "nothing -o " + dir / "caps2", out), 2);
    EXPECT_EQ(out, "overlapscope-replay: " + dir / "nothing" + ": not a directory\n");
    EXPECT_EQ(replayTool(dir.path() + " -o " + dir / "caps3", out), 2);  // holds no recording.json at any level
    EXPECT_EQ(out, "overlapscope-replay: " + dir.path() + ": no CUPTI recording (recording.json) in it\n");
}

TEST(CuptiRecording, BadFoldersGiveOneLineNamingTheFile) {
    test::TempDir dir;
    try {
        recording::readRecording(dir.path());
        FAIL();
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), dir.path() + "/recording.json: cannot open (not a CUPTI recording folder?)");
    }
    std::ofstream(dir / "recording.json") << "{\"format\": \"something else\"}";
    try {
        recording::readRecording(dir.path());
        FAIL();
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), dir.path() + "/recording.json: not an overlapscope CUPTI recording manifest");
    }
}

}  // namespace
}  // namespace osc::agent::cupti
