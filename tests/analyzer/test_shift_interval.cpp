// The distribution-free shift and interval of `check --baseline` and `diff`
// (analyzer/report/shift_interval.h) against answers found without it: every
// arrangement of tiny samples enumerated, published Mann-Whitney critical
// values, every pairwise difference sorted, the worked example of
// docs/metrics.md section 10 done by hand, and coverage over many random
// samples with a known shift.
#include "analyzer/report/shift_interval.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace osc;
using namespace osc::report;

namespace {

// P(U <= u) by enumerating which of the n + m ranks the base sample takes:
// U counts (base, candidate) pairs with the candidate below.
double enumeratedCdf(size_t n, size_t m, long long u) {
    const size_t total = n + m;
    long long hits = 0, all = 0;
    for (unsigned mask = 0; mask < (1u << total); ++mask) {
        if (static_cast<size_t>(__builtin_popcount(mask)) != n) continue;
        long long pairs = 0, candidatesBelow = 0;
        for (size_t r = 0; r < total; ++r) {
            if (mask & (1u << r))
                pairs += candidatesBelow;
            else
                ++candidatesBelow;
        }
        ++all;
        if (pairs <= u) ++hits;
    }
    return static_cast<double>(hits) / static_cast<double>(all);
}

// Counts of U = u for sizes (n, m) by the plain recurrence on counts,
// written apart from the library's (probabilities, one row at a time).
std::vector<double> countsOf(size_t n, size_t m) {
    std::vector<std::vector<std::vector<double>>> c(n + 1, std::vector<std::vector<double>>(m + 1));
    for (size_t i = 0; i <= n; ++i)
        for (size_t j = 0; j <= m; ++j) {
            c[i][j].assign(i * j + 1, 0.0);
            if (i == 0 || j == 0) {
                c[i][j][0] = 1;
                continue;
            }
            for (size_t u = 0; u <= i * j; ++u) {
                if (u >= j && u - j < c[i - 1][j].size()) c[i][j][u] += c[i - 1][j][u - j];
                if (u < c[i][j - 1].size()) c[i][j][u] += c[i][j - 1][u];
            }
        }
    return c[n][m];
}

long long exactOrder(size_t n, size_t m, double confidence) {
    const auto c = countsOf(n, m);
    double total = 0;
    for (double v : c) total += v;
    double cdf = 0;
    long long k = 0;
    for (size_t u = 0; u < c.size(); ++u) {
        cdf += c[u];
        if (cdf / total > (1 - confidence) / 2) break;
        k = static_cast<long long>(u) + 1;
    }
    return k;
}

// All differences, sorted.
std::vector<TimeNs> differences(const std::vector<TimeNs>& base, const std::vector<TimeNs>& candidate) {
    std::vector<TimeNs> d;
    for (TimeNs x : base)
        for (TimeNs y : candidate) d.push_back(y - x);
    std::sort(d.begin(), d.end());
    return d;
}

}  // namespace

TEST(ShiftInterval, ExactDistributionIsEveryArrangement) {
    for (const auto& [n, m] : std::vector<std::pair<size_t, size_t>>{{1, 1}, {2, 3}, {3, 4}, {5, 5}, {4, 9}, {7, 6}})
        for (long long u = -1; u <= static_cast<long long>(n * m); ++u)
            EXPECT_NEAR(mannWhitneyCdf(n, m, u), enumeratedCdf(n, m, u), 1e-12) << n << "x" << m << " u=" << u;
}

// Published two-sided 5% critical values of U (reject when U <= c), so the
// interval's order is c + 1: n = m = 6: 5; 10: 23; 20: 127; 8 and 12: 22.
TEST(ShiftInterval, OrdersMatchPublishedCriticalValues) {
    EXPECT_EQ(confidenceOrder(6, 6, 0.95), 6);
    EXPECT_EQ(confidenceOrder(10, 10, 0.95), 24);
    EXPECT_EQ(confidenceOrder(20, 20, 0.95), 128);
    EXPECT_EQ(confidenceOrder(8, 12, 0.95), 23);
    EXPECT_EQ(confidenceOrder(12, 8, 0.95), 23);
    // Three per sample cannot give 95 %: P(U = 0) = 1/20 > 2.5 %.
    EXPECT_EQ(confidenceOrder(3, 3, 0.95), 0);
    EXPECT_EQ(confidenceOrder(0, 10, 0.95), 0);
}

// Large samples: exact up to kExactMannWhitneyWork, then the normal
// approximation. One more base value moves the order by about m / 2 = 150;
// past the limit the approximation stays on the safe side (a lower order,
// a wider interval) by at most 0.2 % of the order, also in the far tail of
// a Bonferroni level.
TEST(ShiftInterval, LargeSamplesAgreeWithTheExactCount) {
    for (const auto& [n, m] : std::vector<std::pair<size_t, size_t>>{{41, 40}, {50, 50}, {30, 80}})
        for (const double c : {0.9, 0.95, 0.99, 0.999})
            EXPECT_EQ(confidenceOrder(n, m, c), exactOrder(n, m, c)) << n << "x" << m << " " << c;
    for (const double c : {0.95, 0.999}) {
        const long long exact = confidenceOrder(300, 300, c), normal = confidenceOrder(301, 300, c);
        ASSERT_GT(301u * 300u * 300u, kExactMannWhitneyWork);
        const double expected = static_cast<double>(exact) + 150.0;
        EXPECT_LE(static_cast<double>(normal), expected + 5) << c;
        EXPECT_GE(static_cast<double>(normal), expected * 0.998) << c;
    }
    // Symmetric about n*m / 2, and the upper half through it.
    EXPECT_NEAR(mannWhitneyCdf(30, 40, 700) + mannWhitneyCdf(30, 40, 499), 1.0, 1e-12);
}

TEST(ShiftInterval, NormalQuantile) {
    EXPECT_NEAR(normalQuantile(0.975), 1.959964, 1e-6);
    EXPECT_NEAR(normalQuantile(0.5), 0.0, 1e-12);
    EXPECT_NEAR(normalQuantile(0.00125), -3.023341, 1e-6);
    EXPECT_THROW(normalQuantile(1.0), std::invalid_argument);
}

// docs/metrics.md section 10: exposed communication per step, ms.
TEST(ShiftInterval, WorkedExample) {
    const std::vector<TimeNs> base = {10'000'000, 10'400'000, 9'800'000, 10'200'000, 10'600'000, 10'100'000};
    const std::vector<TimeNs> cand = {10'600'000, 10'900'000, 10'500'000, 11'200'000, 10'700'000, 11'000'000};
    // 36 differences; the 18th and 19th are both 0.6 ms; k = 6: d(6) = 0.3, d(31) = 1.0.
    auto i = shiftInterval(base, cand, 0.95);
    ASSERT_TRUE(i);
    EXPECT_DOUBLE_EQ(i->shift, 600'000);
    EXPECT_DOUBLE_EQ(i->low, 300'000);
    EXPECT_DOUBLE_EQ(i->high, 1'000'000);
    // Two comparisons share 95 %: each at 97.5 %, k = 4: d(4) = 0.1, d(33) = 1.1.
    i = shiftInterval(base, cand, 0.975);
    ASSERT_TRUE(i);
    EXPECT_DOUBLE_EQ(i->low, 100'000);
    EXPECT_DOUBLE_EQ(i->high, 1'100'000);
}

TEST(ShiftInterval, OrderStatisticsOfAllDifferences) {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 60; ++trial) {
        const size_t n = std::uniform_int_distribution<size_t>(4, 30)(rng);
        const size_t m = std::uniform_int_distribution<size_t>(4, 30)(rng);
        std::vector<TimeNs> base(n), cand(m);
        // Few distinct values: ties everywhere.
        std::uniform_int_distribution<TimeNs> v(trial % 2 ? 0 : -50, trial % 3 ? 20 : 1'000'000);
        for (auto& x : base) x = v(rng);
        for (auto& y : cand) y = v(rng) + 3;
        const auto i = shiftInterval(base, cand, 0.9);
        const long long k = confidenceOrder(n, m, 0.9);
        if (k == 0) {
            EXPECT_FALSE(i);
            continue;
        }
        ASSERT_TRUE(i);
        const auto d = differences(base, cand);
        const size_t N = d.size();
        const double median = N % 2 ? static_cast<double>(d[N / 2])
                                    : (static_cast<double>(d[N / 2 - 1]) + static_cast<double>(d[N / 2])) / 2;
        EXPECT_DOUBLE_EQ(i->shift, median);
        EXPECT_DOUBLE_EQ(i->low, static_cast<double>(d[static_cast<size_t>(k - 1)]));
        EXPECT_DOUBLE_EQ(i->high, static_cast<double>(d[N - static_cast<size_t>(k)]));
    }
}

// The interval holds the true shift at least as often as it claims, for a
// skewed, heavy-tailed step distribution (log-normal times).
TEST(ShiftInterval, CoversTheTrueShift) {
    std::mt19937_64 rng(11);
    std::lognormal_distribution<double> noise(0.0, 0.05);
    const TimeNs shift = 400'000;
    int covered = 0;
    const int trials = 400;
    for (int t = 0; t < trials; ++t) {
        std::vector<TimeNs> base(25), cand(30);
        for (auto& x : base) x = std::llround(10e6 * noise(rng));
        for (auto& y : cand) y = std::llround(10e6 * noise(rng)) + shift;
        const auto i = shiftInterval(base, cand, 0.9);
        ASSERT_TRUE(i);
        if (i->low <= shift && shift <= i->high) ++covered;
    }
    EXPECT_GE(covered, trials * 0.9 - 12);  // 90 %, less two standard errors of the count
    EXPECT_LE(covered, trials * 0.9 + 30);  // and not an interval so wide it says nothing
}
