// A stand-in for a CUDA training job: like the CUDA driver, it loads the
// library named by CUDA_INJECTION64_PATH and calls InitializeInjection, then
// "trains" (sleeps) for a while and exits with the code it was given.
//
//   fake_job SECONDS EXIT_CODE [--nccl N] [--p2p N] [--rank R] [--nranks N] [--nccl-abi 4|5]
//            [--sigterm-handler]
//
// --nccl N plays NCCL 2.28 on the library's exported ncclProfiler_v5
// (fake_nccl.h): N all-reduces of 2 channels each.
// --p2p N then plays N kernel launches of a ring exchange, each a grouped
// send to rank R+1 and receive from rank R-1 (of --rank R, default 2, in
// --nranks, default 4; rank r sends 512 (r + 1) + 8 i bf16 in launch i), one
// channel each; the fake agent's GPU runs their kernels (7 us, 1 ms apart).
// --nccl-abi 4 plays NCCL 2.27 on ncclProfiler_v4 instead.
// --sigterm-handler installs an SA_SIGINFO handler for SIGTERM, as a job
// that shuts down cleanly would; the job then prints who sent the signal and
// when the handler ran (CLOCK_MONOTONIC ns), and exits with code 3.
#include "tests/agent/fake_nccl.h"

#include <dlfcn.h>
#include <unistd.h>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>

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

uint64_t realtimeNow() {
    // The GPU globaltimer, as far as a test can tell, reads like CLOCK_REALTIME.
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

struct NcclPlay {
    int collectives = 0, p2pLaunches = 0, abi = 5, rank = 2, nranks = 4;
};

// The --p2p launches' kernels: launch i runs [first + i ms, + 7000 ns) on
// the fake GPU, whose timer NCCL reads 770 us ahead (as on the H100).
constexpr uint64_t kP2pPeriodNs = 1000000, kP2pKernelNs = 7000, kGpuTimerAheadNs = 770000;

// Elements rank `from` sends its successor in launch i (bf16).
size_t ringCount(int from, int i) { return 512u * static_cast<size_t>(from + 1) + 8u * static_cast<size_t>(i); }

void playNccl(osc::agent::test::FakeNcclComm& comm, const NcclPlay& play, uint64_t p2pFirstNs) {
    const bool channels = (comm.mask() & ncclProfileKernelCh) != 0;
    const uint64_t base = realtimeNow();
    for (int i = 0; i < play.collectives; ++i) {
        void* coll = comm.coll(nullptr, "AllReduce", static_cast<uint64_t>(i), 1000u + static_cast<size_t>(i),
                               "ncclBfloat16", 2);
        comm.stop(coll);  // enqueued
        if (!channels) continue;
        // The i-th collective's channel ch starts at base + i ms + ch * 100 ns
        // and stops 5000 + ch * 10 ns after its start.
        for (int ch = 0; ch < 2; ++ch) {
            const uint64_t t = base + static_cast<uint64_t>(i) * 1000000u + static_cast<uint64_t>(ch) * 100u;
            comm.channel(coll, ch, t, t + 5000 + static_cast<uint64_t>(ch) * 10);
        }
    }
    const int next = (play.rank + 1) % play.nranks, prev = (play.rank + play.nranks - 1) % play.nranks;
    for (int i = 0; i < play.p2pLaunches; ++i) {
        void* group = comm.launch();
        void* send = comm.send(group, next, ringCount(play.rank, i), "ncclBfloat16", 1);
        void* recv = comm.recv(group, prev, ringCount(prev, i), "ncclBfloat16", 1);
        comm.stop(send);
        comm.stop(recv);
        comm.stop(group);
        if (!channels) continue;
        const uint64_t t = p2pFirstNs + static_cast<uint64_t>(i) * kP2pPeriodNs + kGpuTimerAheadNs;
        comm.channel(send, 0, t, t + kP2pKernelNs);
        comm.channel(recv, 1, t + 10, t + kP2pKernelNs - 10);
    }
    comm.finalize();
}

void driveNccl(void* lib, const NcclPlay& play, uint64_t p2pFirstNs) {
    const char* symbol = play.abi == 4 ? "ncclProfiler_v4" : "ncclProfiler_v5";
    void* table = dlsym(lib, symbol);
    if (!table) {
        std::fprintf(stderr, "fake_job: no %s in the library\n", symbol);
        std::exit(90);
    }
    const osc::agent::test::NcclPlugin plugin =
        play.abi == 4 ? osc::agent::test::NcclPlugin(*static_cast<ncclProfiler_v4_t*>(table))
                      : osc::agent::test::NcclPlugin(*static_cast<ncclProfiler_v5_t*>(table));
    osc::agent::test::FakeNcclComm comm(plugin, 0xC0FFEEull, play.nranks, play.rank);
    if (comm.initResult() != 0) std::exit(91);
    playNccl(comm, play, p2pFirstNs);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr,
                     "usage: fake_job SECONDS EXIT_CODE [--nccl N] [--p2p N] [--rank R] [--nranks N] "
                     "[--nccl-abi 4|5] [--sigterm-handler]\n");
        return 64;
    }
    const double seconds = std::atof(argv[1]);
    const int code = std::atoi(argv[2]);
    NcclPlay play;
    bool sigtermHandler = false;
    for (int i = 3; i < argc; ++i) {
        const bool value = i + 1 < argc;
        if (std::strcmp(argv[i], "--nccl") == 0 && value) play.collectives = std::atoi(argv[i + 1]);
        if (std::strcmp(argv[i], "--p2p") == 0 && value) play.p2pLaunches = std::atoi(argv[i + 1]);
        if (std::strcmp(argv[i], "--rank") == 0 && value) play.rank = std::atoi(argv[i + 1]);
        if (std::strcmp(argv[i], "--nranks") == 0 && value) play.nranks = std::atoi(argv[i + 1]);
        if (std::strcmp(argv[i], "--nccl-abi") == 0 && value) play.abi = std::atoi(argv[i + 1]);
        if (std::strcmp(argv[i], "--sigterm-handler") == 0) sigtermHandler = true;
    }
    if (play.nranks < 1 || play.rank < 0 || play.rank >= play.nranks) {
        std::fprintf(stderr, "fake_job: --rank must be below --nranks\n");
        return 64;
    }
    // The fake agent's GPU runs the --p2p launches' kernels (its CUPTI
    // stand-in reads this when the capture starts); 150 ms from now, well
    // after the capture's time 0: loading the agent and opening the file
    // took 20 ms of a loaded machine, and a GPU time before time 0 is stored
    // as unknown (NULL).
    const uint64_t p2pFirstNs = realtimeNow() + 150000000u;
    if (play.p2pLaunches > 0) {
        const std::string kernels = std::to_string(p2pFirstNs) + "," + std::to_string(play.p2pLaunches) + "," +
                                    std::to_string(kP2pPeriodNs) + "," + std::to_string(kP2pKernelNs);
        setenv("OVERLAPSCOPE_FAKE_SENDRECV", kernels.c_str(), 1);
    }
    if (sigtermHandler) {  // before CUDA starts, as a training script would
        struct sigaction sa {};
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
    if (lib && (play.collectives > 0 || play.p2pLaunches > 0)) driveNccl(lib, play, p2pFirstNs);
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
