#include "agent/core/clocks.h"

#include <ctime>

namespace osc::agent {
namespace {

int64_t clockNs(clockid_t id) {
    timespec ts{};
    ::clock_gettime(id, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

}  // namespace

int64_t realtimeNs() { return clockNs(CLOCK_REALTIME); }
int64_t monotonicNs() { return clockNs(CLOCK_MONOTONIC); }
int64_t threadCpuNs() { return clockNs(CLOCK_THREAD_CPUTIME_ID); }

}  // namespace osc::agent
