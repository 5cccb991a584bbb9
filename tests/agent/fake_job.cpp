// A stand-in for a CUDA training job: like the CUDA driver, it loads the
// library named by CUDA_INJECTION64_PATH and calls InitializeInjection, then
// "trains" (sleeps) for a while and exits with the code it was given.
//
//   fake_job SECONDS EXIT_CODE [--nccl N] [--sigterm-handler]
//
// --nccl N drives the library's exported ncclProfiler_v5 with N fabricated
// all-reduces (2 channels each), as NCCL 2.28 would.
// --sigterm-handler installs an SA_SIGINFO handler for SIGTERM, as a job
// that shuts down cleanly would; the job then prints who sent the signal and
// when the handler ran (CLOCK_MONOTONIC ns), and exits with code 3.
#include "agent/nccl_plugin/nccl_profiler_abi.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <unistd.h>
#include <string>
#include <thread>
#include <ctime>

namespace {

volatile sig_atomic_t g_terminated = 0;
pid_t g_senderPid = 0;
int g_senderCode = 0;
int64_t g_handlerNs = 0;

void onSigterm(int, siginfo_t* info, void*) {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);  // async-signal-safe
    g_handlerNs = static_cast<int64_t>(now.tv_sec) * 1000000000LL + now.tv_nsec;
    g_senderPid = info ? info->si_pid : -1;
    g_senderCode = info ? info->si_code : -1;
    g_terminated = 1;
}

void driveNccl(void* lib, int n) {
    auto* plugin = static_cast<ncclProfiler_v5_t*>(dlsym(lib, "ncclProfiler_v5"));
    if (!plugin) {
        std::fprintf(stderr, "fake_job: no ncclProfiler_v5 in the library\n");
        std::exit(90);
    }
    void* ctx = nullptr;
    int mask = 0;
    if (plugin->init(&ctx, 0xC0FFEEull, &mask, "world", 1, 4, 2, nullptr) != 0) std::exit(91);
    const bool channels = (mask & ncclProfileKernelCh) != 0;
    // The GPU globaltimer, as far as a test can tell, reads like CLOCK_REALTIME.
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    const uint64_t base = static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
    for (int i = 0; i < n; ++i) {
        ncclProfilerEventDescr_v5_t coll{};
        coll.type = ncclProfileColl;
        coll.rank = 2;
        coll.coll.seqNumber = static_cast<uint64_t>(i);
        coll.coll.func = "AllReduce";
        coll.coll.count = 1000u + static_cast<size_t>(i);
        coll.coll.root = -1;
        coll.coll.datatype = "ncclBfloat16";
        coll.coll.nChannels = 2;
        coll.coll.algo = "RING";
        coll.coll.proto = "SIMPLE";
        void* collHandle = nullptr;
        plugin->startEvent(ctx, &collHandle, &coll);
        plugin->stopEvent(collHandle);  // enqueued
        if (!channels) continue;
        for (int ch = 0; ch < 2; ++ch) {
            ncclProfilerEventDescr_v5_t k{};
            k.type = ncclProfileKernelCh;
            k.parentObj = collHandle;
            k.kernelCh.channelId = static_cast<uint8_t>(ch);
            // The i-th collective's channel ch starts at base + i ms + ch * 100 ns.
            k.kernelCh.pTimer = base + static_cast<uint64_t>(i) * 1000000u + static_cast<uint64_t>(ch) * 100u;
            void* kh = nullptr;
            plugin->startEvent(ctx, &kh, &k);
            ncclProfilerEventStateArgs_v5_t args{};
            args.kernelCh.pTimer = k.kernelCh.pTimer + 5000 + static_cast<uint64_t>(ch) * 10;
            plugin->recordEventState(kh, ncclProfilerKernelChStop, &args);
            plugin->stopEvent(kh);
        }
    }
    plugin->finalize(ctx);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: fake_job SECONDS EXIT_CODE [--nccl N]\n");
        return 64;
    }
    const double seconds = std::atof(argv[1]);
    const int code = std::atoi(argv[2]);
    int ncclCount = 0;
    bool sigtermHandler = false;
    for (int i = 3; i < argc; ++i) {
        if (std::strcmp(argv[i], "--nccl") == 0 && i + 1 < argc) ncclCount = std::atoi(argv[i + 1]);
        if (std::strcmp(argv[i], "--sigterm-handler") == 0) sigtermHandler = true;
    }
    if (sigtermHandler) {  // before CUDA starts, as a training script would
        struct sigaction sa{};
        sa.sa_sigaction = onSigterm;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, nullptr);
    }

    void* lib = nullptr;
    if (const char* path = std::getenv("CUDA_INJECTION64_PATH"); path && *path) {
        lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            std::fprintf(stderr, "fake_job: %s\n", dlerror());
            return 92;
        }
        auto init = reinterpret_cast<int (*)()>(dlsym(lib, "InitializeInjection"));
        if (!init || init() != 1) return 93;
        if (init() != 1) return 94;  // the driver may call it again: must be harmless
    }
    if (lib && ncclCount > 0) driveNccl(lib, ncclCount);
    std::printf("fake_job: pid %d training\n", static_cast<int>(getpid()));
    std::fflush(stdout);
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end && !g_terminated)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (g_terminated) {
        std::printf("fake_job: SIGTERM from pid %d code %d, handler at %lld ns\n", static_cast<int>(g_senderPid),
                    g_senderCode, static_cast<long long>(g_handlerNs));
        return 3;
    }
    return code;
}
