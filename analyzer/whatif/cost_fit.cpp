#include "analyzer/whatif/cost_fit.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace osc::whatif {
namespace {

// Slope of the line through the samples with a fixed intercept.
double slopeWithIntercept(const std::vector<CostSample>& s, double alpha) {
    double sxy = 0, sxx = 0;
    for (const auto& p : s) {
        sxy += p.bytes * (p.ns - alpha);
        sxx += p.bytes * p.bytes;
    }
    return sxx > 0 ? std::max(0.0, sxy / sxx) : 0.0;
}

std::optional<double> rSquared(const std::vector<CostSample>& s, const CostModel& m) {
    if (m.distinctSizes < 2) return std::nullopt;
    double mean = 0;
    for (const auto& p : s) mean += p.ns;
    mean /= static_cast<double>(s.size());
    double ssTot = 0, ssRes = 0;
    for (const auto& p : s) {
        const double e = p.ns - (m.alpha_ns + m.ns_per_byte * p.bytes);
        ssRes += e * e;
        ssTot += (p.ns - mean) * (p.ns - mean);
    }
    if (ssTot <= 0) return std::nullopt;
    return 1.0 - ssRes / ssTot;
}

}  // namespace

int64_t CostModel::costNs(double bytes) const {
    return static_cast<int64_t>(std::llround(alpha_ns + ns_per_byte * std::max(0.0, bytes)));
}

CostModel fitCost(const std::vector<CostSample>& input, double defaultAlphaNs, std::optional<double> givenAlphaNs) {
    std::vector<CostSample> s;
    for (const auto& p : input)
        if (p.bytes > 0 && std::isfinite(p.ns) && p.ns >= 0) s.push_back(p);
    if (s.empty()) throw std::invalid_argument("no collective with a known size to fit a cost on");

    CostModel m;
    m.samples = static_cast<int>(s.size());
    std::set<double> sizes;
    for (const auto& p : s) sizes.insert(p.bytes);
    m.distinctSizes = static_cast<int>(sizes.size());

    if (givenAlphaNs) {
        m.alpha_ns = *givenAlphaNs;
        m.ns_per_byte = slopeWithIntercept(s, m.alpha_ns);
        m.alphaSource = "given";
    } else if (m.distinctSizes < 2) {
        // One size: only the sum alpha + slope * size is known. Take the
        // default alpha, but never more than the shortest sample lasted.
        double shortest = s.front().ns;
        for (const auto& p : s) shortest = std::min(shortest, p.ns);
        m.alpha_ns = std::min(defaultAlphaNs, shortest);
        m.ns_per_byte = slopeWithIntercept(s, m.alpha_ns);
        m.alphaSource = "default";
    } else {
        const double n = static_cast<double>(s.size());
        double mx = 0, my = 0;
        for (const auto& p : s) {
            mx += p.bytes;
            my += p.ns;
        }
        mx /= n;
        my /= n;
        double sxy = 0, sxx = 0;
        for (const auto& p : s) {
            sxy += (p.bytes - mx) * (p.ns - my);
            sxx += (p.bytes - mx) * (p.bytes - mx);
        }
        m.ns_per_byte = sxy / sxx;  // sxx > 0: at least two distinct sizes
        m.alpha_ns = my - m.ns_per_byte * mx;
        if (m.ns_per_byte < 0) {
            // Bigger collectives were faster: noise, not a cost. A flat line.
            m.ns_per_byte = 0;
            m.alpha_ns = my;
        } else if (m.alpha_ns < 0) {
            // A negative intercept predicts negative times for small buckets.
            m.alpha_ns = 0;
            m.ns_per_byte = slopeWithIntercept(s, 0);
            m.alphaSource = "zero";
        }
    }
    m.r2 = rSquared(s, m);
    return m;
}

}  // namespace osc::whatif
