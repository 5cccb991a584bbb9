// Metrics of an imported Kineto trace against an independent brute-force
// computation on the integer ns written into the trace (plain and gzip).
#include "analyzer/crossrank/analyze.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/metrics/analysis.h"
#include "tests/analyzer/test_kineto_fixture.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

using namespace osc;
using osc::testing::KEvent;

namespace {

struct Expected {
    TimeNs compute = 0, comm = 0, overlap = 0, window = 0, busy = 0;
};

// Elementary segments between all endpoints: each is wholly inside or outside
// every interval, so membership at its start decides (O(n^2), fine for tests).
Expected bruteForce(const std::vector<KEvent>& events, int64_t device) {
    std::vector<std::pair<int64_t, int64_t>> compute, comm;
    std::set<int64_t> points;
    for (const auto& e : events) {
        if (e.device != device) continue;
        const bool isComm = e.name.rfind("nccl", 0) == 0;
        (isComm ? comm : compute).push_back({e.startNs, e.startNs + e.durNs});
        points.insert(e.startNs);
        points.insert(e.startNs + e.durNs);
    }
    auto covered = [](const std::vector<std::pair<int64_t, int64_t>>& set, int64_t t) {
        for (const auto& [s, e] : set)
            if (s <= t && t < e) return true;
        return false;
    };
    Expected x;
    const std::vector<int64_t> p(points.begin(), points.end());
    x.window = p.back() - p.front();
    for (size_t i = 0; i + 1 < p.size(); ++i) {
        const int64_t len = p[i + 1] - p[i];
        const bool c = covered(compute, p[i]), m = covered(comm, p[i]);
        if (c) x.compute += len;
        if (m) x.comm += len;
        if (c && m) x.overlap += len;
        if (c || m) x.busy += len;
    }
    return x;
}

void check(const std::string& file, const std::vector<KEvent>& events, int devices) {
    const Capture cap = loadCapture(file);
    const Analysis a = analyze(cap);
    ASSERT_EQ(a.devices.size(), static_cast<size_t>(devices));
    for (const auto& d : a.devices) {
        const Expected x = bruteForce(events, d.device);
        EXPECT_EQ(d.totals.compute_ns, x.compute) << "device " << d.device;
        EXPECT_EQ(d.totals.comm_ns, x.comm);
        EXPECT_EQ(d.totals.overlap_ns, x.overlap);
        EXPECT_EQ(d.totals.exposed_comm_ns, x.comm - x.overlap);
        EXPECT_EQ(d.totals.window_ns, x.window);
        EXPECT_EQ(d.totals.busy_ns, x.busy);
        ASSERT_TRUE(d.totals.overlap_ratio.has_value());
        EXPECT_DOUBLE_EQ(*d.totals.overlap_ratio, static_cast<double>(x.overlap) / static_cast<double>(x.comm));
    }
}

}  // namespace

TEST(KinetoMetrics, MatchBruteForceOnRandomTraces) {
    const testsupport::TempDir dir;
    for (uint32_t seed = 1; seed <= 6; ++seed) {
        // Near 1.7e15 µs, with ns digits: a double would lose them.
        const auto events = osc::testing::randomKernels(seed, 120, 3, 3, 1'700'000'000'123'456'789LL + seed);
        const std::string text = osc::testing::traceJson(events);
        const std::string plain = dir / "t.json", gz = dir / "t.json.gz";
        osc::testing::writeText(plain, text);
        osc::testing::writeGz(gz, text);
        check(plain, events, 3);
        check(gz, events, 3);
    }
}
