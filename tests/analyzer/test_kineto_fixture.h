// Writes Kineto-style traces for the importer and export tests. Events are
// given in integer ns and written as fractional µs, exactly, so a test knows
// the true nanosecond values independently of the reader.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace osc::testing {

struct KEvent {
    std::string cat, name;
    int64_t startNs = 0, durNs = 0;
    int64_t pid = 0, tid = 0;
    int64_t device = -1, stream = -1, correlation = -1, bytes = -1;
};

// "1718000000123456" ns -> "1718000000123.456".
inline std::string nsAsMicros(int64_t ns) {
    std::string sign = ns < 0 ? "-" : "";
    const uint64_t a = ns < 0 ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
    std::string frac = std::to_string(a % 1000);
    frac.insert(0, 3 - frac.size(), '0');
    return sign + std::to_string(a / 1000) + "." + frac;
}

inline std::string eventJson(const KEvent& e) {
    std::ostringstream o;
    o << R"({"ph": "X", "cat": ")" << e.cat << R"(", "name": ")" << e.name << R"(", "pid": )" << e.pid << R"(, "tid": )"
      << e.tid << R"(, "ts": )" << nsAsMicros(e.startNs) << R"(, "dur": )" << nsAsMicros(e.durNs)
      << R"(, "args": {"External id": 1)";
    if (e.device >= 0) o << R"(, "device": )" << e.device;
    if (e.stream >= 0) o << R"(, "stream": )" << e.stream;
    if (e.correlation >= 0) o << R"(, "correlation": )" << e.correlation;
    if (e.bytes >= 0) o << R"(, "bytes": )" << e.bytes;
    if (e.cat == "kernel")
        o << R"(, "grid": [4, 2, 1], "block": [128, 1, 1], "registers per thread": 32, "shared memory": 1024)";
    o << "}}";
    return o.str();
}

// A whole trace. `header` goes before "traceEvents" (e.g. distributedInfo).
inline std::string traceJson(const std::vector<KEvent>& events, const std::string& header = "",
                             const std::string& extraEvents = "") {
    std::ostringstream o;
    o << "{\n  \"schemaVersion\": 1,\n";
    if (!header.empty()) o << "  " << header << ",\n";
    o << "  \"traceEvents\": [\n";
    bool first = true;
    for (const auto& e : events) {
        o << (first ? "    " : ",\n    ") << eventJson(e);
        first = false;
    }
    if (!extraEvents.empty()) o << (first ? "    " : ",\n    ") << extraEvents;
    o << "\n  ]\n}\n";
    return o.str();
}

inline void writeText(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

inline void writeGz(const std::string& path, const std::string& text) {
    gzFile f = gzopen(path.c_str(), "wb");
    gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
    gzclose(f);
}

// Random kernels on several devices and streams, compute and NCCL, shuffled.
inline std::vector<KEvent> randomKernels(uint32_t seed, int count, int devices, int streams, int64_t baseNs) {
    std::mt19937_64 rng(seed);
    std::vector<KEvent> out;
    for (int i = 0; i < count; ++i) {
        KEvent e;
        e.cat = "kernel";
        const bool comm = rng() % 3 == 0;
        e.name = comm ? "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
                      : "void at::native::vectorized_elementwise_kernel<4>(int)";
        e.device = static_cast<int64_t>(rng() % devices);
        e.stream = 7 + static_cast<int64_t>(rng() % streams);
        e.pid = e.device;
        e.tid = e.stream;
        e.startNs = baseNs + static_cast<int64_t>(rng() % 2'000'000);
        e.durNs = 1 + static_cast<int64_t>(rng() % 50'000);
        e.correlation = 1000 + i;
        out.push_back(e);
    }
    return out;
}

}  // namespace osc::testing
