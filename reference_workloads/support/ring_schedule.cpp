#include "reference_workloads/support/ring_schedule.h"

#include <stdexcept>

namespace oscwl {

RingPlan plan_ring(int world, int rank, int chunks) {
    if (world < 1 || rank < 0 || rank >= world) throw std::invalid_argument("plan_ring: bad rank or world");
    RingPlan p;
    p.loopback = world == 1;
    p.positions = p.loopback ? chunks : world;
    if (p.positions < 1) throw std::invalid_argument("plan_ring: chunks must be >= 1");
    const int me = p.loopback ? 0 : rank;
    const int n = p.positions;
    p.next = p.loopback ? 0 : (rank + 1) % world;
    p.prev = p.loopback ? 0 : (rank + world - 1) % world;
    // Gather: the chunk held at step i came from prev, which held it at step i-1.
    // Scatter: the last step must be the own chunk (me), whose partial sum then
    // holds every rank's contribution: step k computes (me - 1 - k) mod n.
    for (int i = 0; i < n; ++i) {
        p.gather_order.push_back(((me - i) % n + n) % n);
        p.scatter_order.push_back(((me - 1 - i) % n + 2 * n) % n);
    }
    return p;
}

}  // namespace oscwl
