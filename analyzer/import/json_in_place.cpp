#include "analyzer/import/json_in_place.h"

#include "analyzer/import/decimal_time.h"
#include "analyzer/import/json_scanner.h"
#include "analyzer/import/trace_bytes.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace osc::json_in_place {
namespace {

constexpr const bool* kNumberChar = json_detail::kCharTables.numberChar;

// Whether the 8 bytes at p are all ASCII digits, and their value (p[0] the
// most significant): eight digits at a time where timestamps have 13-16.
[[gnu::always_inline]] inline bool eightDigits(const char* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return (v & 0xF0F0F0F0F0F0F0F0u) == 0x3030303030303030u &&
           ((v + 0x0606060606060606u) & 0xF0F0F0F0F0F0F0F0u) == 0x3030303030303030u;
}

[[gnu::always_inline]] inline uint64_t valueOfEightDigits(uint64_t v) {
    v = (v & 0x0F0F0F0F0F0F0F0Fu) * 2561 >> 8;
    v = (v & 0x00FF00FF00FF00FFu) * 6553601 >> 16;
    return (v & 0x0000FFFF0000FFFFu) * 42949672960001u >> 32;
}

[[gnu::always_inline]] inline uint64_t valueOfEightDigits(const char* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return valueOfEightDigits(v);
}

// How many of the 8 bytes in v (loaded from memory, the first byte lowest),
// from the first, are ASCII digits (0-8).
[[gnu::always_inline]] inline int digitsIn(uint64_t v) {
    // A carry out of a byte >= 0xFA can only spoil bytes after it, and that
    // byte is no digit: the first non-digit is still found.
    const uint64_t other = ((v & 0xF0F0F0F0F0F0F0F0u) ^ 0x3030303030303030u) |
                           (((v + 0x0606060606060606u) & 0xF0F0F0F0F0F0F0F0u) ^ 0x3030303030303030u);
    return other == 0 ? 8 : __builtin_ctzll(other) / 8;
}

// How many of the 8 bytes at p, from the first, are ASCII digits (0-8).
[[gnu::always_inline]] inline int leadingDigits(const char* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return digitsIn(v);
}

// The same, and the value of those digits.
[[gnu::always_inline]] inline int leadingDigits(const char* p, uint64_t& value) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    const int n = digitsIn(v);
    // The digits moved up to the top bytes; the zero bytes below read as leading zeros.
    value = n == 0 ? 0 : valueOfEightDigits(v << (8 * (8 - n)));
    return n;
}

}  // namespace

int Cursor::peekSlowly() {
    for (;;) {
        while (p < end) {
            const auto c = static_cast<unsigned char>(*p);
            if (c > ' ' || (c != ' ' && c != '\n' && c != '\r' && c != '\t')) return c;
            ++p;
        }
        if (!more(1)) return -1;
    }
}

void Cursor::seek(size_t offset) {
    origin_ = offset;
    at_ = p = bytes_.at(offset);
    const size_t filled = bytes_.filled();
    end = p + std::min(filled > offset ? filled - offset : 0, bytes_.span());
}

bool Cursor::more(size_t n) {
    const size_t want = offset() + n;
    if (want - floor_ > bytes_.span()) fail();
    const size_t filled = bytes_.waitFor(want, giveUp_);
    end = at_ + std::min(filled - std::min(filled, origin_), bytes_.span());
    return filled >= want;
}

std::string_view Cursor::stringSlowly(std::string& scratch) {
    const char* start = p;
    bool escaped = false;
    for (;;) {
        p = findStringStop(p, end);
        if (p == end) {
            if (!more(1)) fail();
            continue;
        }
        const char c = *p;
        if (c == '"') break;
        if (c != '\\') fail();  // a control character
        // The text so far (decoded from the first escape on), then the escape.
        if (!escaped) scratch.clear();
        scratch.append(start, static_cast<size_t>(p - start));
        ++p;
        escape(scratch);
        start = p;
        escaped = true;
        if (scratch.size() > kMaxStringBytes) fail();
    }
    if (static_cast<size_t>(p - start) > kMaxStringBytes) fail();
    std::string_view text(start, static_cast<size_t>(p - start));
    ++p;  // the closing quote
    if (!escaped) return text;
    scratch.append(text);
    if (scratch.size() > kMaxStringBytes) fail();
    return scratch;
}

void Cursor::escape(std::string& out) {
    const auto next = [this]() -> int {
        if (p == end && !more(1)) return -1;
        return static_cast<unsigned char>(*p++);
    };
    if (json_detail::decodeEscape(next, out) != json_detail::EscapeProblem::None) fail();
}

// The number's value as JsonScanner hands it over: integers of up to 19
// digits that fit 64 bits as such, anything else as its text.
kineto::Scalar Cursor::numberOf(const char* start, const char* intStart, size_t intDigits, bool integer,
                                const char* stop) {
    kineto::Scalar out{kineto::Scalar::Type::Float};
    const bool negative = *start == '-';
    if (integer && intDigits <= 19) {
        uint64_t v = 0;
        for (const char* d = intStart; d < intStart + intDigits; ++d) v = v * 10 + static_cast<uint64_t>(*d - '0');
        if (!negative) {
            if (v <= static_cast<uint64_t>(INT64_MAX)) {
                out.type = kineto::Scalar::Type::Integer;
                out.i = static_cast<int64_t>(v);
            } else {
                out.type = kineto::Scalar::Type::Unsigned;
                out.u = v;
            }
            return out;
        }
        if (v <= static_cast<uint64_t>(INT64_MAX)) {
            out.type = kineto::Scalar::Type::Integer;
            out.i = -static_cast<int64_t>(v);
            return out;
        }
    }
    out.text = std::string_view(start, static_cast<size_t>(stop - start));
    return out;
}

// One pass over the digits, the grammar checked on the way:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, and, as JsonScanner reads the
// longest run of number characters, no such character after it. Where the
// run may go past what is filled, numberAtEnd() reads it with waits.
kineto::Scalar Cursor::number() {
    const char* q = p;
    const char* e = end;
    if (e - q >= 16) {
        // Most numbers are integers of at most 7 digits (ids, counts): the
        // digits found and read eight bytes at a time.
        const bool negative = *q == '-';
        q += negative;
        uint64_t v = 0;
        const int n = leadingDigits(q, v);
        if (n > 0 && n < 8) {
            const auto after = static_cast<unsigned char>(q[n]);
            if (!kNumberChar[after]) {
                if (*q == '0' && n > 1) fail();
                p = q + n;
                kineto::Scalar out{kineto::Scalar::Type::Integer};
                out.i = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
                return out;
            }
            // A decimal of a few digits each side ("blocks per SM": 0.984848,
            // two in every kernel's args): the text, as the loop below
            // hands it over, found eight digits at a time.
            if (after == '.' && e - q >= 24) {
                uint64_t fraction = 0;
                const int m = leadingDigits(q + n + 1, fraction);
                if (m > 0 && m < 8 && !kNumberChar[static_cast<unsigned char>(q[n + 1 + m])]) {
                    if (*q == '0' && n > 1) fail();
                    kineto::Scalar out{kineto::Scalar::Type::Float};
                    out.text = std::string_view(p, static_cast<size_t>(q + n + 1 + m - p));
                    p = q + n + 1 + m;
                    return out;
                }
            }
        }
        q = p;
    }
    const bool negative = *q == '-';
    q += negative;
    const char* intStart = q;
    uint64_t v = 0;  // the integer part's value, while it has at most 19 digits
    while (q < e && static_cast<unsigned>(*q - '0') < 10 && q - intStart < 19)
        v = v * 10 + static_cast<uint64_t>(*q++ - '0');
    const auto digits = [&]() {
        const char* from = q;
        while (q < e && static_cast<unsigned>(*q - '0') < 10) ++q;
        return static_cast<size_t>(q - from);
    };
    const size_t intDigits = static_cast<size_t>(q - intStart) + digits();
    bool integer = true;
    if (q < e && *q == '.') {
        ++q;
        integer = false;
        if (digits() == 0 && q < e) fail();
    }
    if (q < e && (*q == 'e' || *q == 'E')) {
        ++q;
        integer = false;
        if (q < e && (*q == '+' || *q == '-')) ++q;
        if (digits() == 0 && q < e) fail();
    }
    if (q >= e || static_cast<size_t>(q - p) > kMaxNumberChars) return numberAtEnd();
    if (kNumberChar[static_cast<unsigned char>(*q)]) fail();  // "1.2.3", "1-2": one malformed run
    if (intDigits == 0 || (*intStart == '0' && intDigits > 1)) fail();
    if (integer && intDigits <= 19 && (!negative || v <= static_cast<uint64_t>(INT64_MAX))) {
        p = q;
        kineto::Scalar out{kineto::Scalar::Type::Integer};
        if (negative) {
            out.i = -static_cast<int64_t>(v);
        } else if (v <= static_cast<uint64_t>(INT64_MAX)) {
            out.i = static_cast<int64_t>(v);
        } else {
            out.type = kineto::Scalar::Type::Unsigned;
            out.u = v;
        }
        return out;
    }
    const char* start = p;
    p = q;
    return numberOf(start, intStart, intDigits, integer, q);
}

void Cursor::skipNumber() {
    // Most numbers skipped are short integers or decimals (ids, counts,
    // "blocks per SM": 0.984848): checked as number() checks them, without
    // their value; anything else goes through number() itself.
    const char* q = p;
    if (end - q >= 24) {
        q += *q == '-';
        const int n = leadingDigits(q);
        if (n > 0 && n < 8 && (*q != '0' || n == 1)) {
            const auto after = static_cast<unsigned char>(q[n]);
            if (!kNumberChar[after]) {
                p = q + n;
                return;
            }
            if (after == '.') {
                const int m = leadingDigits(q + n + 1);
                if (m > 0 && m < 8 && !kNumberChar[static_cast<unsigned char>(q[n + 1 + m])]) {
                    p = q + n + 1 + m;
                    return;
                }
            }
        }
    }
    number();
}

kineto::Scalar Cursor::numberAtEnd() {
    const char* start = p;
    for (;;) {
        while (p < end && kNumberChar[static_cast<unsigned char>(*p)]) ++p;
        if (p < end || !more(1)) break;
        if (static_cast<size_t>(p - start) > kMaxNumberChars) fail();
    }
    if (static_cast<size_t>(p - start) > kMaxNumberChars) fail();
    const char* s = start;
    const char* e = p;
    if (*s == '-') ++s;
    auto digits = [&]() {
        const char* from = s;
        while (s < e && *s >= '0' && *s <= '9') ++s;
        return static_cast<size_t>(s - from);
    };
    const char* intStart = s;
    const size_t intDigits = digits();
    if (intDigits == 0 || (*intStart == '0' && intDigits > 1)) fail();
    bool integer = true;
    if (s < e && *s == '.') {
        ++s;
        integer = false;
        if (digits() == 0) fail();
    }
    if (s < e && (*s == 'e' || *s == 'E')) {
        ++s;
        integer = false;
        if (s < e && (*s == '+' || *s == '-')) ++s;
        if (digits() == 0) fail();
    }
    if (s != e) fail();
    return numberOf(start, intStart, intDigits, integer, e);
}

bool Cursor::decimalMicros(int64_t& ns) {
    // -?(0|[1-9][0-9]{0,15})(\.[0-9]{1,3})? and then no number character:
    // exactly microsToNs of the text, without its general path.
    const char* q = p;
    if (end - q < 32) return false;
    const bool negative = *q == '-';
    q += negative;
    const char* intStart = q;
    uint64_t micros = 0;
    while (q - intStart <= 8 && eightDigits(q)) {
        micros = micros * 100'000'000 + valueOfEightDigits(q);
        q += 8;
    }
    while (q - intStart < 17 && static_cast<unsigned>(*q - '0') < 10)
        micros = micros * 10 + static_cast<uint64_t>(*q++ - '0');
    const auto intDigits = q - intStart;
    if (intDigits == 0 || intDigits > 16 || (*intStart == '0' && intDigits > 1)) return false;
    uint64_t fraction = 0;
    if (*q == '.') {
        const char* f = ++q;
        while (static_cast<unsigned>(*q - '0') < 10 && q - f < 4)
            fraction = fraction * 10 + static_cast<uint64_t>(*q++ - '0');
        const auto fractionDigits = q - f;
        if (fractionDigits == 0 || fractionDigits > 3) return false;
        for (auto d = fractionDigits; d < 3; ++d) fraction *= 10;
    }
    if (kNumberChar[static_cast<unsigned char>(*q)]) return false;
    const uint64_t value = micros * 1000 + fraction;
    if (value > static_cast<uint64_t>(kMaxAbsTimeNs)) return false;
    ns = negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
    p = q;
    return true;
}

void Cursor::expectWord(std::string_view word) {
    need(word.size());
    if (std::memcmp(p, word.data(), word.size()) != 0) fail();
    p += word.size();
}

kineto::Scalar Cursor::literal(int first) {
    switch (first) {
        case 't':
            expectWord("true");
            break;
        case 'f':
            expectWord("false");
            break;
        case 'n':
            expectWord("null");
            break;
        default:
            fail();
    }
    return kineto::Scalar{kineto::Scalar::Type::Other};
}

void Cursor::skipOther(int c, int depth) {
    if (c != '{' && c != '[') {
        literal(c);
        return;
    }
    if (depth >= kMaxNesting) fail();
    ++p;
    const char close = c == '{' ? '}' : ']';
    if (peek() == close) {
        ++p;
        return;
    }
    for (;;) {
        if (c == '{') {
            expect('"');
            string(skipped_);
            expect(':');
        }
        skipValue(depth + 1);
        const int next = peek();
        ++p;
        if (next == close) return;
        if (next != ',') fail();
    }
}

}  // namespace osc::json_in_place
