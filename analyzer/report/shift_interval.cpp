#include "analyzer/report/shift_interval.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace osc::report {
namespace {

// P(U = u) for u = 0 .. last (at most n*m / 2: the distribution is
// symmetric about n*m / 2). Its generating function is the Gaussian binomial
// [n+m choose n](q) = prod over i = 1..n of (1 - q^(m+i)) / (1 - q^i), built
// one factor at a time: after factor i the coefficients are those of
// [m+i choose i], all positive, and every term a step adds is at most the
// coefficient it lands on, so rounding stays at the level of the
// arithmetic. Rescaled after each factor to sum to one (the counts overflow
// a double past some 1000 values). O(min(n, m) * n * m).
std::vector<double> exactLowerHalf(size_t n, size_t m) {
    if (n > m) std::swap(n, m);
    const size_t last = n * m / 2;
    std::vector<double> p(last + 1, 0.0);
    p[0] = 1.0;  // [m choose 0] = 1
    for (size_t i = 1; i <= n; ++i) {
        for (size_t u = last; u >= m + i && u <= last; --u) p[u] -= p[u - (m + i)];  // x (1 - q^(m+i))
        for (size_t u = i; u <= last; ++u) p[u] += p[u - i];                         // / (1 - q^i)
        // [m+i choose i] / [m+i-1 choose i-1] at q = 1 is (m + i) / i.
        const double scale = static_cast<double>(i) / static_cast<double>(m + i);
        for (double& v : p) v *= scale;
    }
    return p;
}

double normalCdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// Differences y - x over sorted samples: how many are at most t.
long long countAtMost(const std::vector<TimeNs>& x, const std::vector<TimeNs>& y, TimeNs t) {
    long long count = 0;
    size_t p = 0;  // first x with y - x <= t, i.e. x >= y - t; moves right as y grows
    for (const TimeNs v : y) {
        while (p < x.size() && x[p] < v - t) ++p;
        count += static_cast<long long>(x.size() - p);
    }
    return count;
}

// The k-th smallest (1-based) of the differences y - x: the least t with at
// least k differences at most t, found by bisection over integers.
TimeNs kthDifference(const std::vector<TimeNs>& x, const std::vector<TimeNs>& y, long long k) {
    TimeNs lo = y.front() - x.back() - 1;  // fewer than k at most lo
    TimeNs hi = y.back() - x.front();      // all at most hi
    while (hi - lo > 1) {
        const TimeNs mid = lo + (hi - lo) / 2;
        if (countAtMost(x, y, mid) >= k)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

}  // namespace

bool exact(size_t n, size_t m) { return std::min(n, m) * n * m <= kExactMannWhitneyWork; }

double mannWhitneyCdf(size_t n, size_t m, long long u) {
    if (n == 0 || m == 0) return u >= 0 ? 1.0 : 0.0;
    const long long pairs = static_cast<long long>(n * m);
    if (u < 0) return 0.0;
    if (u >= pairs) return 1.0;
    if (exact(n, m)) {
        // Symmetry: P(U <= u) = 1 - P(U <= nm - u - 1).
        const bool upper = u > pairs / 2;
        const long long v = upper ? pairs - u - 1 : u;
        const auto p = exactLowerHalf(n, m);
        double sum = 0;
        for (long long w = 0; w <= v; ++w) sum += p[static_cast<size_t>(w)];
        return std::clamp(upper ? 1.0 - sum : sum, 0.0, 1.0);
    }
    const double mean = static_cast<double>(pairs) / 2.0;
    const double sd = std::sqrt(static_cast<double>(pairs) * static_cast<double>(n + m + 1) / 12.0);
    return normalCdf((static_cast<double>(u) + 0.5 - mean) / sd);
}

double normalQuantile(double p) {
    if (!(p > 0 && p < 1)) throw std::invalid_argument("normalQuantile: p must lie strictly between 0 and 1");
    double lo = -40, hi = 40;
    for (int i = 0; i < 200 && hi - lo > 1e-13; ++i) {
        const double mid = (lo + hi) / 2;
        (normalCdf(mid) < p ? lo : hi) = mid;
    }
    return (lo + hi) / 2;
}

long long confidenceOrder(size_t n, size_t m, double confidence) {
    if (n == 0 || m == 0 || !(confidence > 0 && confidence < 1)) return 0;
    const double tail = (1.0 - confidence) / 2.0;
    if (exact(n, m)) {
        const auto p = exactLowerHalf(n, m);
        // Largest k with P(U <= k - 1) <= tail.
        long long k = 0;
        double cdf = 0;
        for (size_t u = 0; u < p.size(); ++u) {
            cdf += p[u];
            if (cdf > tail * (1 + 1e-9)) break;
            k = static_cast<long long>(u) + 1;
        }
        return k;
    }
    // P(U <= k - 1) ~ Phi((k - 1 + 0.5 - nm/2) / sd) <= tail.
    const double pairs = static_cast<double>(n) * static_cast<double>(m);
    const double sd = std::sqrt(pairs * static_cast<double>(n + m + 1) / 12.0);
    const double k = std::floor(pairs / 2.0 + 0.5 + normalQuantile(tail) * sd);
    return k < 1 ? 0 : static_cast<long long>(k);
}

std::optional<ShiftInterval> shiftInterval(std::vector<TimeNs> base, std::vector<TimeNs> candidate, double confidence) {
    const long long k = confidenceOrder(base.size(), candidate.size(), confidence);
    return shiftIntervalAt(std::move(base), std::move(candidate), k);
}

std::optional<ShiftInterval> shiftIntervalAt(std::vector<TimeNs> base, std::vector<TimeNs> candidate, long long k) {
    const long long pairs = static_cast<long long>(base.size() * candidate.size());
    if (k < 1 || 2 * k > pairs + 1) return std::nullopt;
    std::sort(base.begin(), base.end());
    std::sort(candidate.begin(), candidate.end());
    ShiftInterval out;
    const TimeNs lowerMiddle = kthDifference(base, candidate, (pairs + 1) / 2);
    const TimeNs upperMiddle = pairs % 2 ? lowerMiddle : kthDifference(base, candidate, pairs / 2 + 1);
    out.shift = (static_cast<double>(lowerMiddle) + static_cast<double>(upperMiddle)) / 2.0;
    out.low = static_cast<double>(kthDifference(base, candidate, k));
    out.high = static_cast<double>(kthDifference(base, candidate, pairs + 1 - k));
    return out;
}

}  // namespace osc::report
