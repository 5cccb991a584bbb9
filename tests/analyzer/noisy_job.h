// Generated runs of one job with known step-to-step noise and a known
// shift, for the per-step comparison (docs/metrics.md section 10): two
// ranks, each step with a step time, exposed communication and two
// collectives (AllReduce and AllGather on two communicators whose hashes
// differ from run to run, as NCCL's do).
#pragma once

#include "analyzer/metrics/analysis.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

namespace osc::test {

// Step-to-step noise of our H100 captures (examples/h100, measured in
// docs/metrics.md section 10 and checked by tests/examples): over the
// per-step series of the captures with real NCCL collectives, the median
// of 1.4826 x MAD / median is 2.4 %, the upper quartile 4.5 %, with tails
// far heavier than a normal's.
inline constexpr double kH100MedianNoise = 0.024;
inline constexpr double kH100UpperQuartileNoise = 0.045;

// Multiplicative noise 1 + e, e Student-t with 3 degrees of freedom (heavy
// tails, as measured) scaled so that 1.4826 x MAD of e is `robustCv`
// (the MAD of a t3 is 0.7649).
inline double noisyFactor(std::mt19937_64& rng, double robustCv) {
    std::normal_distribution<double> z(0.0, 1.0);
    std::chi_squared_distribution<double> chi(3.0);
    const double t = z(rng) / std::sqrt(chi(rng) / 3.0);
    return std::max(0.05, 1.0 + robustCv / (1.4826 * 0.7649) * t);
}

struct NoisyRun {
    int steps = 50;
    double robustCv = kH100MedianNoise;
    double shift = 0;         // every per-step value x (1 + shift)
    double exposedShift = 0;  // exposed communication only, on top
    bool withAllGather = true;
};

inline Analysis noisyJob(std::mt19937_64& rng, const NoisyRun& run) {
    Analysis a;
    const uint64_t reduceComm = rng() | 1, gatherComm = rng() | 1;  // new hashes every run
    for (int rank = 0; rank < 2; ++rank) {
        DeviceAnalysis d;
        d.rank = rank;
        d.host = "node";
        d.pid = 1000 + static_cast<int64_t>(rng() % 1000);  // pids change too
        d.device = static_cast<uint32_t>(rank);
        TimeNs t = 0;
        const auto value = [&](double ns) {
            return static_cast<TimeNs>(std::llround(ns * (1 + run.shift) * noisyFactor(rng, run.robustCv)));
        };
        for (int s = 0; s < run.steps; ++s) {
            StepAnalysis step;
            step.name = "step " + std::to_string(s);
            step.start_ns = t;
            step.metrics.window_ns = value(40e6);
            step.metrics.exposed_comm_ns = std::llround(static_cast<double>(value(10e6)) * (1 + run.exposedShift));
            step.end_ns = t + step.metrics.window_ns;
            const auto op = [&](const char* type, uint64_t comm, double ns, TimeNs at) {
                CollectiveInstance c;
                c.name = std::string("ncclDevKernel_") + type;
                c.collective = type;
                c.commHash = comm;
                c.start_ns = at;
                c.duration_ns = value(ns);
                c.end_ns = at + c.duration_ns;
                c.step = s;
                d.collectives.push_back(c);
            };
            op("AllReduce", reduceComm, 8e6, t + 1'000'000);
            if (run.withAllGather) op("AllGather", gatherComm, 4e6, t + 2'000'000);
            d.steps.push_back(step);
            t = step.end_ns;
        }
        d.totals.window_ns = t;
        a.devices.push_back(std::move(d));
    }
    return a;
}

// Leaves `collective` only in the first `steps` steps of every device.
inline void keepCollectiveInFirstSteps(Analysis& a, const std::string& collective, int steps) {
    for (auto& d : a.devices)
        std::erase_if(d.collectives,
                      [&](const CollectiveInstance& c) { return c.collective == collective && c.step >= steps; });
}

}  // namespace osc::test
