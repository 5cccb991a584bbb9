// What the CUDA driver says about itself and the process's GPUs, for
// OVERLAPSCOPE_META and TARGET_INFO_GPU. CUPTI's DEVICE records are emitted
// at driver initialisation and reach only a subscriber that was there before
// cuInit (cupti_activity.h, cuptiActivityEnableAndDump), so a capture started
// later (delay, attach) would otherwise describe no GPU at all.
//
// The driver is already in the process (it loaded the agent), so its
// functions are found with dlsym: the agent gains no link dependency on
// libcuda, and a process without a driver simply gets no rows. Prototypes
// come from cuda.h (already included by cupti.h), which keeps the looked-up
// signatures honest. Turning raw driver answers into rows is done by pure
// functions, tested without a GPU.
#pragma once

#include "analyzer/capture/model.h"

#include <cuda.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace osc::agent::cupti {

// The driver's answers for one device; the defaults stand for "query failed".
struct DriverDevice {
    uint32_t ordinal = 0;  // the deviceId of CUPTI records
    std::string name;
    uint64_t totalMemory = 0;
    CUuuid uuid{};
    int smCount = 0, computeMajor = 0, computeMinor = 0;
    int pciDomain = -1, pciBus = -1, pciDevice = -1;
};

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" in lowercase hex, as nvidia-smi
// and nsys write it; empty for an all-zero uuid (CUPTI's "not reported").
std::string gpuUuidText(const CUuuid& uuid);
// nsys's busLocation, "0000:1b:00.0"; empty when a part is unknown (< 0).
// CUDA reports no PCI function number: a GPU is function 0.
std::string pciBusLocation(int domain, int bus, int device);
GpuInfo gpuInfoOf(const DriverDevice& device);
// `preferred` with its unknown fields (empty, 0) taken from `fallback`.
GpuInfo mergeGpuInfo(const GpuInfo& preferred, const GpuInfo& fallback);
// cuDriverGetVersion's encoding: 13000 -> "13.0", 12080 -> "12.8".
std::string cudaVersionText(int version);

// The newest CUDA version the driver supports (cuDriverGetVersion, which
// needs no cuInit); nullopt when no driver is loaded.
std::optional<int> queryDriverVersion();
// Every device the process sees, in ordinal order: empty when no driver is
// loaded, nullopt while the driver is not initialised yet (ask again later;
// the agent never calls cuInit itself, it may be running inside it).
std::optional<std::vector<DriverDevice>> queryDriverDevices();

}  // namespace osc::agent::cupti
