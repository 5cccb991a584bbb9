#include "agent/cupti/driver_info.h"

#include <dlfcn.h>

#include <cstdio>

namespace osc::agent::cupti {
namespace {

// The driver as already mapped into the process. libcudart opens libcuda
// with RTLD_LOCAL, so RTLD_DEFAULT alone may miss it; RTLD_NOLOAD finds the
// loaded copy without ever loading one.
class LoadedDriver {
public:
    LoadedDriver() : handle_(::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)) {}
    ~LoadedDriver() {
        if (handle_) ::dlclose(handle_);
    }
    LoadedDriver(const LoadedDriver&) = delete;
    LoadedDriver& operator=(const LoadedDriver&) = delete;

    template <typename Fn>
    Fn find(const char* name) const {
        void* symbol = handle_ ? ::dlsym(handle_, name) : nullptr;
        if (!symbol) symbol = ::dlsym(RTLD_DEFAULT, name);
        return reinterpret_cast<Fn>(symbol);
    }

private:
    void* handle_;
};

// The versioned names are what libcuda exports (cuda.h maps the plain
// names onto them with macros).
using DriverGetVersionFn = decltype(&::cuDriverGetVersion);
using DeviceGetCountFn = decltype(&::cuDeviceGetCount);
using DeviceGetFn = decltype(&::cuDeviceGet);
using DeviceGetNameFn = decltype(&::cuDeviceGetName);
using DeviceTotalMemFn = decltype(&::cuDeviceTotalMem_v2);
using DeviceGetUuidFn = decltype(&::cuDeviceGetUuid_v2);
using DeviceGetAttributeFn = decltype(&::cuDeviceGetAttribute);

}  // namespace

std::string gpuUuidText(const CUuuid& uuid) {
    const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
    bool zero = true;
    for (int i = 0; i < 16; ++i) zero = zero && b[i] == 0;
    if (zero) return {};
    std::string text = "GPU-";
    char hex[3];
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
        std::snprintf(hex, sizeof hex, "%02x", b[i]);
        text += hex;
    }
    return text;
}

std::string pciBusLocation(int domain, int bus, int device) {
    if (domain < 0 || bus < 0 || device < 0) return {};
    char text[32];
    std::snprintf(text, sizeof text, "%04x:%02x:%02x.0", static_cast<unsigned>(domain), static_cast<unsigned>(bus),
                  static_cast<unsigned>(device));
    return text;
}

GpuInfo gpuInfoOf(const DriverDevice& d) {
    GpuInfo g;
    g.id = d.ordinal;
    g.name = d.name;
    g.busLocation = pciBusLocation(d.pciDomain, d.pciBus, d.pciDevice);
    g.uuid = gpuUuidText(d.uuid);
    g.totalMemory = d.totalMemory;
    g.smCount = d.smCount;
    g.computeMajor = d.computeMajor;
    g.computeMinor = d.computeMinor;
    return g;
}

GpuInfo mergeGpuInfo(const GpuInfo& preferred, const GpuInfo& fallback) {
    GpuInfo g = preferred;
    if (g.name.empty()) g.name = fallback.name;
    if (g.busLocation.empty()) g.busLocation = fallback.busLocation;
    if (g.uuid.empty()) g.uuid = fallback.uuid;
    if (g.totalMemory == 0) g.totalMemory = fallback.totalMemory;
    if (g.smCount == 0) g.smCount = fallback.smCount;
    // A compute capability is one value: never half from each source.
    if (g.computeMajor == 0) {
        g.computeMajor = fallback.computeMajor;
        g.computeMinor = fallback.computeMinor;
    }
    return g;
}

std::string cudaVersionText(int version) {
    if (version <= 0) return {};
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::optional<int> queryDriverVersion() {
    const LoadedDriver driver;
    const auto getVersion = driver.find<DriverGetVersionFn>("cuDriverGetVersion");
    int version = 0;
    if (!getVersion || getVersion(&version) != CUDA_SUCCESS) return std::nullopt;
    return version;
}

std::optional<std::vector<DriverDevice>> queryDriverDevices() {
    const LoadedDriver driver;
    const auto getCount = driver.find<DeviceGetCountFn>("cuDeviceGetCount");
    const auto get = driver.find<DeviceGetFn>("cuDeviceGet");
    const auto getName = driver.find<DeviceGetNameFn>("cuDeviceGetName");
    const auto totalMem = driver.find<DeviceTotalMemFn>("cuDeviceTotalMem_v2");
    const auto getUuid = driver.find<DeviceGetUuidFn>("cuDeviceGetUuid_v2");
    const auto getAttribute = driver.find<DeviceGetAttributeFn>("cuDeviceGetAttribute");
    std::vector<DriverDevice> devices;
    if (!getCount || !get) return devices;
    int count = 0;
    const CUresult r = getCount(&count);
    if (r == CUDA_ERROR_NOT_INITIALIZED) return std::nullopt;
    if (r != CUDA_SUCCESS) return devices;
    for (int i = 0; i < count; ++i) {
        CUdevice dev = 0;
        if (get(&dev, i) != CUDA_SUCCESS) continue;
        DriverDevice d;
        d.ordinal = static_cast<uint32_t>(i);
        char name[256] = {};
        if (getName && getName(name, sizeof name - 1, dev) == CUDA_SUCCESS) d.name = name;
        size_t bytes = 0;
        if (totalMem && totalMem(&bytes, dev) == CUDA_SUCCESS) d.totalMemory = bytes;
        if (getUuid && getUuid(&d.uuid, dev) != CUDA_SUCCESS) d.uuid = CUuuid{};
        auto attribute = [&](CUdevice_attribute a, int unknown) {
            int value = 0;
            return getAttribute && getAttribute(&value, a, dev) == CUDA_SUCCESS ? value : unknown;
        };
        d.smCount = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0);
        d.computeMajor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0);
        d.computeMinor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0);
        d.pciDomain = attribute(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, -1);
        d.pciBus = attribute(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, -1);
        d.pciDevice = attribute(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, -1);
        devices.push_back(std::move(d));
    }
    return devices;
}

}  // namespace osc::agent::cupti
