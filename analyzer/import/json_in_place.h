// JSON read in place from a TraceBytes span (which may still be filling), for
// the parallel Kineto reader: strings come back as views of the span unless
// they hold escapes, unknown values are skipped without being handed over,
// and nothing counts lines. It is at least as strict as JsonScanner
// (json_scanner.h): whatever it accepts, JsonScanner accepts and reads the
// same way. Wherever JsonScanner would fail, or where this reader would
// rather not decide (nesting deeper than it needs, a string near the size
// limit), it throws Unparsed and the caller hands the file to JsonScanner,
// which then names the problem with its line.
#pragma once

#include "analyzer/import/json_scanner.h"
#include "analyzer/import/kineto_fields.h"

#include <atomic>
#include <cstddef>
#include <string>
#include <string_view>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace osc {

class TraceBytes;

namespace json_in_place {

inline constexpr size_t kMaxStringBytes = size_t{64} << 20;  // JsonScanner's limits
inline constexpr size_t kMaxNumberChars = 4096;

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
    while (p < end && !json_detail::kCharTables.stringStop[static_cast<unsigned char>(*p)]) ++p;
    return p;
}

// "Leave this file to the streaming parser."
struct Unparsed {};

// Containers nested deeper than this inside one value are left to JsonScanner
// (which allows 512 levels in all).
inline constexpr int kMaxNesting = 400;

// Reads from content byte `floor` on: the ring (TraceBytes::span()) must
// hold everything from the floor to the furthest byte read, and a reader may
// only wait for bytes beyond the release point + span where the release
// point is bound to reach its floor without its help (kineto_pieces.cpp).
class Cursor {
public:
    // `giveUp`, once set, makes a wait for bytes end as if the content had.
    Cursor(TraceBytes& bytes, size_t offset, size_t floor, const std::atomic<bool>* giveUp = nullptr)
        : bytes_(bytes), giveUp_(giveUp), floor_(floor) {
        seek(offset);
    }
    Cursor(TraceBytes& bytes, size_t offset) : Cursor(bytes, offset, offset) {}

    const char* p;    // the next byte
    const char* end;  // the end of what is filled so far

    [[noreturn]] static void fail() { throw Unparsed{}; }
    size_t offset() const { return origin_ + static_cast<size_t>(p - at_); }
    // Moves to content byte `offset` (at or after the floor).
    void seek(size_t offset);
    // Moves to `offset` and reads from there on only: a new floor.
    void moveTo(size_t offset) {
        floor_ = offset;
        seek(offset);
    }
    // Makes `n` bytes from p readable; false when the content ends first.
    // Fails (Unparsed) where they would not fit the ring from the floor: a
    // value that large is left to JsonScanner.
    bool more(size_t n);
    void need(size_t n) {
        if (static_cast<size_t>(end - p) < n && !more(n)) fail();
    }

    // The next character that is not JSON white space, not consumed; -1 at
    // the end of the content.
    // Inlined wherever it is called: every key and value of a trace asks it,
    // and GCC left it a call (7 % of a 1 GB trace's parse).
    [[gnu::always_inline]] int peek() {
        // Most often no white space, or one space (": ", ", ").
        if (end - p >= 2) {
            const auto c = static_cast<unsigned char>(*p);
            if (c > ' ') return c;
            const auto d = static_cast<unsigned char>(p[1]);
            if (c == ' ' && d > ' ') {
                ++p;
                return d;
            }
        }
        return peekSlowly();
    }
    // Consumes `c`, the next character after white space, or fails.
    [[gnu::always_inline]] void expect(char c) {
        if (peek() != static_cast<unsigned char>(c)) fail();
        ++p;
    }

    // With p just after the opening quote: the string's text, a view of the
    // span, or of `scratch` when it held escapes. p ends after the closing quote.
    std::string_view string(std::string& scratch) {
        const char* stop = findStringStop(p, end);
        if (stop == end || *stop != '"') return stringSlowly(scratch);
        const std::string_view text(p, static_cast<size_t>(stop - p));
        if (text.size() > kMaxStringBytes) fail();
        p = stop + 1;
        return text;
    }
    // A number (p at its first character), as JsonScanner hands numbers over.
    kineto::Scalar number();
    // The same number read and dropped, as strictly.
    void skipNumber();
    // Where the number at p is a plain decimal of microseconds (at most three
    // decimals, no exponent), its value in ns, exactly as microsToNs() reads
    // it, p moved past it; else false, p unmoved (read it as number()).
    bool decimalMicros(int64_t& ns);
    // A JSON value of any kind at p (after white space), read and dropped;
    // `depth` containers enclose it.
    void skipValue(int depth) {
        const int c = peek();
        if (c == '"') {
            ++p;
            string(skipped_);
        } else if (c == '-' || static_cast<unsigned>(c - '0') < 10) {
            skipNumber();
        } else {
            skipOther(c, depth);
        }
    }
    // A scalar value at p (after white space): a string, a number or a literal.
    kineto::Scalar scalar(std::string& scratch) {
        const int c = peek();
        if (c == '"') {
            ++p;
            kineto::Scalar out{kineto::Scalar::Type::String};
            out.text = string(scratch);
            return out;
        }
        if (c == '-' || static_cast<unsigned>(c - '0') < 10) return number();
        return literal(c);
    }

private:
    int peekSlowly();
    std::string_view stringSlowly(std::string& scratch);
    void skipOther(int first, int depth);
    kineto::Scalar literal(int first);
    kineto::Scalar numberAtEnd();
    static kineto::Scalar numberOf(const char* start, const char* intStart, size_t intDigits, bool integer,
                                   const char* stop);
    void escape(std::string& out);
    void expectWord(std::string_view word);

    TraceBytes& bytes_;
    const std::atomic<bool>* giveUp_;
    size_t floor_ = 0;
    size_t origin_ = 0;         // where seek() placed the cursor ...
    const char* at_ = nullptr;  // ... and where that byte is
    std::string skipped_;       // escapes decoded while skipping
};

}  // namespace json_in_place
}  // namespace osc
