#include "agent/live/bus_bandwidth.h"

namespace osc::agent::live {

double busBandwidthFactor(std::string_view collective, int ranks) {
    if (ranks < 2) return 1.0;
    const double n = ranks;
    if (collective == "AllReduce") return 2.0 * (n - 1) / n;
    if (collective == "AllGather" || collective == "ReduceScatter" || collective == "AllToAll") return (n - 1) / n;
    return 1.0;
}

}  // namespace osc::agent::live
