// The clocks the live pipeline reads, inline so that it links nothing of
// agent/core (which links it).
#pragma once

#include <cstdint>
#include <ctime>

namespace osc::agent::live {

inline int64_t clockNs(clockid_t id) {
    timespec ts{};
    ::clock_gettime(id, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}
inline int64_t wallNowNs() { return clockNs(CLOCK_REALTIME); }
inline int64_t steadyNowNs() { return clockNs(CLOCK_MONOTONIC); }

}  // namespace osc::agent::live
