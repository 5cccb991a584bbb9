#include "analyzer/import/decimal_time.h"

namespace osc {

std::optional<int64_t> microsToNs(std::string_view text) {
    size_t i = 0;
    bool negative = false;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';

    // Significant digits (leading zeros dropped) and where the decimal point
    // falls among them. An accepted value needs at most 20 digits (19 of ns
    // and one to round on); the rest are dropped.
    char digits[40];
    int count = 0;
    int pointPos = 0;  // digits before the decimal point, among the kept ones
    bool sawDigit = false, sawPoint = false;
    for (; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '.') {
            if (sawPoint) return std::nullopt;
            sawPoint = true;
            continue;
        }
        if (c < '0' || c > '9') break;
        sawDigit = true;
        if (count == 0 && c == '0') {
            if (sawPoint) --pointPos;  // 0.00x: the point moves right of the zeros
            continue;
        }
        if (count < static_cast<int>(sizeof digits)) {
            digits[count++] = c;
            if (!sawPoint) ++pointPos;
        } else if (!sawPoint) {
            ++pointPos;
        }
    }
    if (!sawDigit) return std::nullopt;

    long exponent = 0;
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        ++i;
        bool expNegative = false;
        if (i < text.size() && (text[i] == '-' || text[i] == '+')) expNegative = text[i++] == '-';
        bool expDigit = false;
        for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
            expDigit = true;
            if (exponent < 100000) exponent = exponent * 10 + (text[i] - '0');
        }
        if (!expDigit) return std::nullopt;
        if (expNegative) exponent = -exponent;
    }
    if (i != text.size()) return std::nullopt;
    if (count == 0) return 0;

    // Digits [0, intDigits) form the integer number of ns; digit intDigits rounds.
    const long intDigits = pointPos + exponent + 3;
    if (intDigits > 19) return std::nullopt;  // >= 1e19 ns
    uint64_t ns = 0;
    for (long d = 0; d < intDigits; ++d) ns = ns * 10 + (d < count ? digits[d] - '0' : 0);
    if (intDigits >= 0 && intDigits < count && digits[intDigits] >= '5') ++ns;
    if (ns > static_cast<uint64_t>(kMaxAbsTimeNs)) return std::nullopt;
    const auto value = static_cast<int64_t>(ns);
    return negative ? -value : value;
}

std::optional<int64_t> microsToNs(int64_t micros) {
    constexpr int64_t limit = kMaxAbsTimeNs / 1000;
    if (micros > limit || micros < -limit) return std::nullopt;
    return micros * 1000;
}

}  // namespace osc
