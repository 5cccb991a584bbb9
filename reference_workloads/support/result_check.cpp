#include "reference_workloads/support/result_check.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace oscwl {

std::uint64_t fingerprint(const void* data, std::size_t bytes) {
    auto p = static_cast<const std::uint8_t*>(data);
    std::uint64_t h = 14695981039346656037ull;
    for (std::size_t i = 0; i < bytes; ++i) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

std::optional<std::string> check_identical_across_ranks(const std::vector<std::vector<std::uint64_t>>& fingerprints,
                                                        const std::vector<std::string>& buffer_names) {
    if (fingerprints.empty()) return std::nullopt;
    const auto& ref = fingerprints[0];
    for (std::size_t b = 0; b < ref.size(); ++b) {
        for (std::size_t r = 1; r < fingerprints.size(); ++r) {
            if (fingerprints[r].size() != ref.size())
                return "rank " + std::to_string(r) + " reported " + std::to_string(fingerprints[r].size()) +
                       " buffers, rank 0 reported " + std::to_string(ref.size());
            if (fingerprints[r][b] != ref[b]) {
                std::string name = b < buffer_names.size() ? buffer_names[b] : "buffer " + std::to_string(b);
                return name + " differs between rank 0 and rank " + std::to_string(r);
            }
        }
    }
    return std::nullopt;
}

std::string CloseResult::message() const {
    std::ostringstream out;
    out << "element " << worst_index << ": expected " << expected << ", got " << actual << " (max abs error "
        << max_abs_error << ")";
    return out.str();
}

CloseResult compare_close(const std::vector<float>& expected, const std::vector<float>& actual, double rtol,
                          double atol) {
    if (expected.size() != actual.size()) throw std::invalid_argument("compare_close: sizes differ");
    CloseResult r;
    double worst_ratio = -1.0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const double e = expected[i], a = actual[i];
        const double err = std::fabs(a - e);
        const double tol = atol + rtol * std::fabs(e);
        // NaN compares false everywhere: treat it as an infinite error.
        const double ratio = std::isnan(err) ? INFINITY : (tol > 0 ? err / tol : (err > 0 ? INFINITY : 0));
        if (!std::isnan(err)) r.max_abs_error = std::max(r.max_abs_error, err);
        if (ratio > worst_ratio) {
            worst_ratio = ratio;
            r.worst_index = i;
            r.expected = e;
            r.actual = a;
        }
        if (!(err <= tol)) r.ok = false;
    }
    return r;
}

CloseResult compare_close_to_largest(const std::vector<float>& expected, const std::vector<float>& actual, double rel) {
    double scale = 0;
    for (float v : expected) scale = std::max(scale, static_cast<double>(std::fabs(v)));
    return compare_close(expected, actual, rel, rel * scale);
}

float bf16_to_float(std::uint16_t bits) {
    std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &wide, sizeof f);
    return f;
}

std::vector<float> to_float(const void* data, std::size_t count, bool is_bf16) {
    std::vector<float> out(count);
    if (is_bf16) {
        auto p = static_cast<const std::uint16_t*>(data);
        for (std::size_t i = 0; i < count; ++i) out[i] = bf16_to_float(p[i]);
    } else {
        std::memcpy(out.data(), data, count * sizeof(float));
    }
    return out;
}

double median(std::vector<double> values) {
    if (values.empty()) throw std::invalid_argument("median of no values");
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace oscwl
