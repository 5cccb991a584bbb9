// Kineto timestamps are microseconds written as decimals ("1718000000123.456"),
// often near 1e15. A double keeps only ~0.1-0.5 ns of that, so we read the
// digits straight into integer nanoseconds instead.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace osc {

// Largest |time| and duration we accept, in ns: 2^61, about 73 years, so epoch
// times up to 2043. Keeps start + duration, differences between any two
// accepted times, and base + time inside int64 with room to spare.
inline constexpr int64_t kMaxAbsTimeNs = 2'305'843'009'213'693'952LL;  // 2^61

// Parses a JSON number of microseconds ("12", "-3.5", "1.7e15", "0.0004")
// into nanoseconds, rounded half away from zero. Empty when the text is not a
// number or the value lies outside ±kMaxAbsTimeNs.
std::optional<int64_t> microsToNs(std::string_view text);

// The integer-valued case (JSON integers arrive already parsed).
std::optional<int64_t> microsToNs(int64_t micros);

}  // namespace osc
