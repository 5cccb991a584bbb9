// One device's results kept in a scratch file (`overlapscope report DIR`):
// the binary form (analyzer/partial/device_codec.h) against the report JSON
// it replaces (report::writeDeviceJson + report::parseDeviceJson), on the
// analysis of one rank of a synthetic data-parallel job (`overlapscope
// synth --steps N` shaped, two ranks so the waiting metrics are there) or
// of a capture given with --capture (its first device).
//
// Prints bytes per device and per step, median ns per device over --runs
// runs (each long enough to time), user-space instructions per byte where
// the kernel lets us count them, and JSON / binary ratios.
//
//   bench_device_codec [--steps N] [--layers L] [--runs R] [--iterations I] [--capture PATH]
//
// --iterations fixes the calls per run (default: about 50 ms worth), e.g.
// for counting instructions under valgrind --tool=callgrind where the
// kernel does not give us the counter.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/partial/device_codec.h"
#include "analyzer/report/report_json.h"
#include "analyzer/synth/workload_synth.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

using namespace osc;

namespace {

// User-space instructions of this thread; absent where perf events are not
// allowed (containers, perf_event_paranoid > 2).
class InstructionCounter {
public:
    InstructionCounter() {
        perf_event_attr attr{};
        attr.type = PERF_TYPE_HARDWARE;
        attr.size = sizeof attr;
        attr.config = PERF_COUNT_HW_INSTRUCTIONS;
        attr.disabled = 1;
        attr.exclude_kernel = 1;
        attr.exclude_hv = 1;
        fd_ = static_cast<int>(::syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
        if (fd_ < 0) why_ = std::strerror(errno);
    }
    ~InstructionCounter() {
        if (fd_ >= 0) ::close(fd_);
    }
    bool available() const { return fd_ >= 0; }
    const std::string& whyNot() const { return why_; }
    void start() {
        ::ioctl(fd_, PERF_EVENT_IOC_RESET, 0);
        ::ioctl(fd_, PERF_EVENT_IOC_ENABLE, 0);
    }
    uint64_t stop() {
        ::ioctl(fd_, PERF_EVENT_IOC_DISABLE, 0);
        uint64_t n = 0;
        if (::read(fd_, &n, sizeof n) != static_cast<ssize_t>(sizeof n)) return 0;
        return n;
    }

private:
    int fd_ = -1;
    std::string why_;
};

struct Figure {
    double ns = 0;            // median per call
    double instructions = 0;  // median per call, 0 when not counted
};

// Median over `runs` runs of `iterations` calls each.
Figure measure(const std::function<void()>& call, int iterations, int runs, InstructionCounter& counter) {
    std::vector<double> ns, instructions;
    for (int r = 0; r < runs; ++r) {
        if (counter.available()) counter.start();
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < iterations; ++i) call();
        const auto t1 = std::chrono::steady_clock::now();
        if (counter.available()) instructions.push_back(static_cast<double>(counter.stop()) / iterations);
        ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / iterations);
    }
    auto median = [](std::vector<double> v) {
        if (v.empty()) return 0.0;
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    return {median(ns), median(instructions)};
}

// Enough calls for a run of about 50 ms, unless given.
int iterationsFor(const std::function<void()>& call, int given) {
    if (given > 0) return given;
    const auto t0 = std::chrono::steady_clock::now();
    call();
    const double once = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return std::max(1, static_cast<int>(0.05 / std::max(once, 1e-9)));
}

void print(const char* what, const Figure& f, size_t bytes, size_t steps) {
    std::printf("  %-28s %10.0f ns/device  %7.0f ns/step  %6.2f ns/byte", what, f.ns,
                f.ns / static_cast<double>(std::max<size_t>(steps, 1)), f.ns / static_cast<double>(bytes));
    if (f.instructions > 0) std::printf("  %6.2f instructions/byte", f.instructions / static_cast<double>(bytes));
    std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
    int steps = 100, layers = 12, runs = 7, iterations = 0;
    std::string capturePath;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto next = [&]() -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", arg.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (arg == "--steps")
            steps = std::atoi(next());
        else if (arg == "--layers")
            layers = std::atoi(next());
        else if (arg == "--runs")
            runs = std::atoi(next());
        else if (arg == "--iterations")
            iterations = std::atoi(next());
        else if (arg == "--capture")
            capturePath = next();
        else {
            std::fprintf(stderr,
                         "usage: bench_device_codec [--steps N] [--layers L] [--runs R] [--iterations I] "
                         "[--capture PATH]\n");
            return 2;
        }
    }

    Analysis analysis;
    if (capturePath.empty()) {
        synth::WorkloadSpec spec;
        spec.steps = steps;
        spec.layers = layers;
        spec.ranks = 2;
        spec.jitter = 0.1;
        spec.interference = 1.1;
        spec.arrivalSkewNs = {0, 50'000};
        analysis = analyze(synth::synthesizeWorkload(spec));
        std::printf("synthetic rank 0 of 2: %d steps, %d layers, bucketed\n", steps, layers);
    } else {
        analysis = analyze(loadCaptures({capturePath}));
        std::printf("%s, device 0\n", capturePath.c_str());
    }
    const DeviceAnalysis& device = analysis.devices.at(0);
    const size_t deviceSteps = device.steps.size();
    std::printf("  %zu steps, %zu collectives, %zu signatures, %zu exposed-wait intervals\n", deviceSteps,
                device.collectives.size(), device.signatures.size(), device.exposed_wait_intervals.size());

    InstructionCounter counter;

    // The binary form, its buffer reused as a scratch writer's would be.
    std::string binary;
    partial::encodeDevice(device, binary);
    const size_t binaryBytes = binary.size();
    std::string encodeBuffer;
    auto encode = [&] {
        encodeBuffer.clear();
        partial::encodeDevice(device, encodeBuffer);
    };
    auto decode = [&] {
        DeviceAnalysis back = partial::decodeDevice(binary.data(), binary.size());
        if (back.collectives.size() != device.collectives.size()) std::abort();
    };
    {
        std::string again;
        partial::encodeDevice(partial::decodeDevice(binary.data(), binary.size()), again);
        if (again != binary) {
            std::fprintf(stderr, "the decoded device encodes to other bytes\n");
            return 1;
        }
    }

    // The JSON it replaces, on one line as the scratch file holds it.
    std::ostringstream jsonStream;
    report::writeDeviceJson(jsonStream, device, -1);
    const std::string json = jsonStream.str();
    auto writeJson = [&] {
        jsonStream.str(std::string());
        report::writeDeviceJson(jsonStream, device, -1);
    };
    auto parseJson = [&] {
        DeviceAnalysis back = report::parseDeviceJson(json, "bench");
        if (back.collectives.size() != device.collectives.size()) std::abort();
    };

    std::printf("  binary %zu bytes (%.0f per step), JSON %zu bytes (%.0f per step): JSON / binary %.2fx\n",
                binaryBytes, static_cast<double>(binaryBytes) / static_cast<double>(std::max<size_t>(deviceSteps, 1)),
                json.size(), static_cast<double>(json.size()) / static_cast<double>(std::max<size_t>(deviceSteps, 1)),
                static_cast<double>(json.size()) / static_cast<double>(binaryBytes));
    if (!counter.available()) std::printf("  (instruction counts not available here: %s)\n", counter.whyNot().c_str());

    const Figure enc = measure(encode, iterationsFor(encode, iterations), runs, counter);
    const Figure dec = measure(decode, iterationsFor(decode, iterations), runs, counter);
    const Figure jw = measure(writeJson, iterationsFor(writeJson, iterations), runs, counter);
    const Figure jp = measure(parseJson, iterationsFor(parseJson, iterations), runs, counter);
    std::printf("medians of %d runs:\n", runs);
    print("encodeDevice", enc, binaryBytes, deviceSteps);
    print("decodeDevice", dec, binaryBytes, deviceSteps);
    print("writeDeviceJson", jw, json.size(), deviceSteps);
    print("parseDeviceJson", jp, json.size(), deviceSteps);
    std::printf("JSON / binary time: write %.1fx, read %.1fx, round trip %.1fx\n", jw.ns / enc.ns, jp.ns / dec.ns,
                (jw.ns + jp.ns) / (enc.ns + dec.ns));
    if (enc.instructions > 0)
        std::printf("JSON / binary instructions: write %.1fx, read %.1fx\n", jw.instructions / enc.instructions,
                    jp.instructions / dec.instructions);
    return 0;
}
