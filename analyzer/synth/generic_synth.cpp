#include "analyzer/synth/generic_synth.h"

#include "analyzer/capture/schema.h"
#include "analyzer/synth/jitter.h"
#include "analyzer/synth/kernel_names.h"

#include <cstdio>
#include <string_view>
#include <vector>

namespace osc::synth {
namespace {

constexpr std::string_view kComputeNames[] = {"ampere_sgemm_128x64_nn", "ampere_sgemm_64x64_tn",
                                              "vectorized_elementwise_kernel", "layer_norm_kernel"};
constexpr uint64_t kProgressEvery = 1 << 20;

}  // namespace

ProcessIdentity genericIdentity(const GenericSpec& spec) {
    ProcessIdentity who;
    who.host = spec.host;
    who.pid = spec.pid;
    who.rank = 0;
    who.localRank = 0;
    who.worldSize = 1;
    who.commandLine = "synthetic kernel stream (" + std::to_string(spec.kernels) + " kernels, " +
                      std::to_string(spec.streams) + " streams)";
    who.sessionStartUtcNs = kSessionStartUtcNs;
    who.gpu.id = 0;
    who.gpu.name = "NVIDIA H100 80GB HBM3 (synthetic)";
    who.gpu.busLocation = "0000:18:00.0";
    // One GPU per process: a file per rank must not read as ranks sharing one.
    char uuid[64];
    std::snprintf(uuid, sizeof uuid, "GPU-5e1f0000-0000-0000-0000-%012llx",
                  static_cast<unsigned long long>(spec.pid) & 0xffffffffffffULL);
    who.gpu.uuid = uuid;
    who.gpu.totalMemory = 80ull << 30;
    who.gpu.smCount = 132;
    who.gpu.computeMajor = 9;
    return who;
}

void generateGeneric(const GenericSpec& spec, RowSink& sink, const Progress& progress) {
    spec.validate();
    Jitter rng(spec.seed, 0);
    const auto streams = static_cast<size_t>(spec.streams);
    const size_t commStream = streams > 1 ? streams - 1 : streams;  // none with one stream
    std::vector<TimeNs> cursor(streams);
    for (size_t s = 0; s < streams; ++s) cursor[s] = kFirstKernelNs + static_cast<TimeNs>(s) * 1000;

    KernelRow k;
    k.deviceId = 0;
    k.contextId = 1;
    k.globalPid = schema::packGlobalPid(spec.pid);
    k.gridX = 128;
    k.gridY = 1;
    k.gridZ = 1;
    k.blockX = 256;
    k.blockY = 1;
    k.blockZ = 1;
    for (uint64_t i = 0; i < spec.kernels; ++i) {
        // Always extend the stream that is furthest behind: rows leave in start order.
        size_t s = 0;
        for (size_t j = 1; j < streams; ++j)
            if (cursor[j] < cursor[s]) s = j;
        const uint64_t draw = rng.next();
        const bool nccl = s == commStream;
        const TimeNs duration =
            nccl ? 5'000 + static_cast<TimeNs>(draw % 45'000) : 2'000 + static_cast<TimeNs>(draw % 18'000);
        const TimeNs gap = static_cast<TimeNs>((draw >> 32) % 3'000);
        k.start = cursor[s];
        k.end = k.start + duration;
        k.streamId = kComputeStream + static_cast<uint32_t>(s);
        k.correlationId = static_cast<uint32_t>(i + 1);
        if (nccl) {
            k.demangledName = kNcclName;
            k.shortName = kNcclShortName;
        } else {
            k.demangledName = k.shortName = kComputeNames[(draw >> 48) % 4];
        }
        sink.addKernel(k);
        cursor[s] = k.end + gap;
        if (progress && (i + 1) % kProgressEvery == 0) progress(i + 1, spec.kernels);
    }
    if (progress) progress(spec.kernels, spec.kernels);
}

Capture synthesizeGeneric(const GenericSpec& spec) {
    spec.validate();
    Capture capture;
    capture.sourcePaths.push_back("<synth>");
    capture.processes.resize(1);
    ProcessSink sink(capture, capture.processes[0], genericIdentity(spec));
    capture.processes[0].devices[0].kernels.reserve(spec.kernels);
    generateGeneric(spec, sink);
    capture.alignProcesses();
    capture.finalize();
    return capture;
}

void writeGeneric(const GenericSpec& spec, const std::string& path, bool overwrite, const Progress& progress) {
    spec.validate();
    ProcessFile file(path, genericIdentity(spec), overwrite);
    generateGeneric(spec, file.rows(), progress);
    file.close();
}

}  // namespace osc::synth
