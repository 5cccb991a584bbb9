// Bus bandwidth as nccl-tests defines it (doc/PERFORMANCE.md there): the
// bytes a collective moved per rank times a factor that makes the figure
// comparable with the link's bandwidth whatever the algorithm and the number
// of ranks. One small function, so it can later point at the analyzer's own
// per-collective bandwidth once that lands.
#pragma once

#include <string_view>

namespace osc::agent::live {

// AllReduce 2(n-1)/n; AllGather, ReduceScatter, AllToAll (n-1)/n; every
// other collective (Broadcast, Reduce, Send, Recv...) 1. n < 2 gives 1.
double busBandwidthFactor(std::string_view collective, int ranks);

}  // namespace osc::agent::live
