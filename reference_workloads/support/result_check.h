// Host-side result checks shared by the workloads: byte fingerprints to
// prove that every rank holds identical data after an all-reduce, and an
// element-wise tolerance comparison for schedules that must compute the
// same numbers in a different order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace oscwl {

// FNV-1a 64 over the bytes: equal data gives equal fingerprints.
std::uint64_t fingerprint(const void* data, std::size_t bytes);

// fingerprints[rank][buffer]; the message names the first buffer and rank
// that differ from rank 0, or nullopt when all agree.
std::optional<std::string> check_identical_across_ranks(const std::vector<std::vector<std::uint64_t>>& fingerprints,
                                                        const std::vector<std::string>& buffer_names);

struct CloseResult {
    bool ok = true;
    std::size_t worst_index = 0;  // element with the largest error relative to its tolerance
    double expected = 0, actual = 0;
    double max_abs_error = 0;
    std::string message() const;
};

// |actual - expected| <= atol + rtol * |expected| for every element; NaN fails.
CloseResult compare_close(const std::vector<float>& expected, const std::vector<float>& actual, double rtol,
                          double atol);

// compare_close with rtol = rel and atol = rel * max|expected|: for results
// computed in another order, where terms that cancel leave a rounding error
// that follows the size of the terms, not of each sum.
CloseResult compare_close_to_largest(const std::vector<float>& expected, const std::vector<float>& actual, double rel);

// bfloat16 bit pattern -> float (exact: bf16 is the top half of an fp32).
float bf16_to_float(std::uint16_t bits);
std::vector<float> to_float(const void* data, std::size_t count, bool is_bf16);

// Median of per-step times (mean of the middle two for an even count).
double median(std::vector<double> values);

}  // namespace oscwl
