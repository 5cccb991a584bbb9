#include "agent/fake/paced_training.h"

#include <algorithm>

namespace osc::agent {

PacedStep pacedStep(const PacedTrainingOptions& o, uint64_t number) {
    const int64_t p = o.stepNs;
    const int64_t t0 = static_cast<int64_t>(number) * p;
    const int64_t lag = o.gpuLagNs >= 0 ? o.gpuLagNs : p;
    PacedStep s;
    s.number = number;
    s.rangeStartNs = t0;
    s.rangeEndNs = t0 + p * 95 / 100;
    const int kc = std::max(1, o.computeKernels), km = std::max(0, o.commKernels);
    const int perDevice = kc + km;
    const int total = perDevice * std::max(1, o.devices);
    // Launches spread over the range, kernel by kernel, device by device.
    const int64_t launchFirst = t0 + p / 50, launchSpan = p * 88 / 100;
    int launchIndex = 0;
    for (int d = 0; d < std::max(1, o.devices); ++d) {
        const int64_t gpu0 = t0 + lag;
        const int64_t dc = (p * 60 / 100) / kc;
        for (int j = 0; j < kc; ++j) {
            PacedKernel k;
            k.device = static_cast<uint32_t>(d);
            k.stream = 7;
            k.startNs = gpu0 + p * 5 / 100 + j * dc;
            k.endNs = k.startNs + dc;
            s.kernels.push_back(k);
        }
        if (km > 0) {
            const int64_t commStart = gpu0 + p * 45 / 100, commEnd = gpu0 + p * 85 / 100;
            const int64_t dm = (commEnd - commStart) / km;
            for (int j = 0; j < km; ++j) {
                PacedKernel k;
                k.device = static_cast<uint32_t>(d);
                k.stream = 13;
                k.comm = true;
                k.commIndex = j;
                k.startNs = commStart + j * dm;
                k.endNs = k.startNs + dm;
                // The first all-reduce of a late device starts late and ends on time.
                if (j == 0) k.startNs = std::min(k.endNs - 1000, k.startNs + d * o.deviceSkewNs);
                s.kernels.push_back(k);
            }
        }
        for (size_t i = s.kernels.size() - static_cast<size_t>(perDevice); i < s.kernels.size(); ++i) {
            PacedKernel& k = s.kernels[i];
            k.launchNs = std::min(launchFirst + launchSpan * launchIndex++ / total, k.startNs - 1000);
        }
    }
    std::stable_sort(s.kernels.begin(), s.kernels.end(),
                     [](const PacedKernel& a, const PacedKernel& b) { return a.launchNs < b.launchNs; });
    return s;
}

}  // namespace osc::agent
