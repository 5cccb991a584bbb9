#include "analyzer/import/json_in_place.h"

#include "analyzer/import/json_scanner.h"
#include "analyzer/import/trace_bytes.h"

#include <cstdint>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace osc::json_in_place {
namespace {

constexpr size_t kMaxStringBytes = size_t{64} << 20;
constexpr size_t kMaxNumberChars = 4096;
constexpr const bool* kStringStop = json_detail::kCharTables.stringStop;
constexpr const bool* kNumberChar = json_detail::kCharTables.numberChar;

// The first quote, backslash or control character in [p, end), else end.
// Strings are most of a trace's bytes: sixteen at a time where the CPU can.
inline const char* findStringStop(const char* p, const char* end) {
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), control = _mm_set1_epi8(0x1F);
    while (end - p >= 16) {
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        const __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
                                          _mm_cmpeq_epi8(_mm_max_epu8(x, control), control));
        const int mask = _mm_movemask_epi8(stop);
        if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
        p += 16;
    }
#endif
    while (p < end && !kStringStop[static_cast<unsigned char>(*p)]) ++p;
    return p;
}

int hexValue(char h) {
    if (h >= '0' && h <= '9') return h - '0';
    if (h >= 'a' && h <= 'f') return h - 'a' + 10;
    if (h >= 'A' && h <= 'F') return h - 'A' + 10;
    return -1;
}

}  // namespace

Cursor::Cursor(TraceBytes& bytes, size_t offset) : bytes_(bytes), base_(bytes.data()) {
    p = base_ + offset;
    end = base_ + bytes.filled();
}

bool Cursor::more(size_t n) {
    const size_t want = offset() + n;
    end = base_ + bytes_.waitFor(want);
    return static_cast<size_t>(end - base_) >= want;
}

std::string_view Cursor::string(std::string& scratch) {
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
    need(1);
    const char e = *p++;
    switch (e) {
        case '"':
        case '\\':
        case '/':
            out += e;
            return;
        case 'b':
            out += '\b';
            return;
        case 'f':
            out += '\f';
            return;
        case 'n':
            out += '\n';
            return;
        case 'r':
            out += '\r';
            return;
        case 't':
            out += '\t';
            return;
        case 'u':
            break;
        default:
            fail();
    }
    auto hex4 = [&]() {
        need(4);
        uint32_t v = 0;
        for (int i = 0; i < 4; ++i) {
            const int h = hexValue(*p++);
            if (h < 0) fail();
            v = (v << 4) | static_cast<uint32_t>(h);
        }
        return v;
    };
    uint32_t cp = hex4();
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        need(2);
        if (p[0] != '\\' || p[1] != 'u') fail();
        p += 2;
        const uint32_t lo = hex4();
        if (lo < 0xDC00 || lo > 0xDFFF) fail();
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
        fail();
    }
    json_detail::appendUtf8(out, cp);
}

kineto::Scalar Cursor::number() {
    const char* start = p;
    for (;;) {
        while (p < end && kNumberChar[static_cast<unsigned char>(*p)]) ++p;
        if (p < end || !more(1)) break;
    }
    if (static_cast<size_t>(p - start) > kMaxNumberChars) fail();
    // Grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, as JsonScanner reads it.
    const char* s = start;
    const char* e = p;
    const bool negative = *s == '-';
    if (negative) ++s;
    auto digits = [&]() {
        const char* from = s;
        while (s < e && *s >= '0' && *s <= '9') ++s;
        return s - from;
    };
    const char* intStart = s;
    const auto intDigits = digits();
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
    kineto::Scalar out{kineto::Scalar::Type::Float};
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
    out.text = std::string_view(start, static_cast<size_t>(e - start));
    return out;
}

void Cursor::literal(std::string_view word) {
    need(word.size());
    if (std::memcmp(p, word.data(), word.size()) != 0) fail();
    p += word.size();
}

kineto::Scalar Cursor::scalar(std::string& scratch) {
    kineto::Scalar out{kineto::Scalar::Type::Other};
    switch (peek()) {
        case '"':
            ++p;
            out.type = kineto::Scalar::Type::String;
            out.text = string(scratch);
            return out;
        case 't':
            literal("true");
            return out;
        case 'f':
            literal("false");
            return out;
        case 'n':
            literal("null");
            return out;
        case '-':
        case '0':
        case '1':
        case '2':
        case '3':
        case '4':
        case '5':
        case '6':
        case '7':
        case '8':
        case '9':
            return number();
        default:
            fail();
    }
}

void Cursor::skipValue(int depth) {
    const int c = peek();
    if (c != '{' && c != '[') {
        scalar(skipped_);
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
