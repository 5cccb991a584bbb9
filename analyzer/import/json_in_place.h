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

#include "analyzer/import/kineto_fields.h"

#include <cstddef>
#include <string>
#include <string_view>

namespace osc {

class TraceBytes;

namespace json_in_place {

// "Leave this file to the streaming parser."
struct Unparsed {};

// Containers nested deeper than this inside one value are left to JsonScanner
// (which allows 512 levels in all).
inline constexpr int kMaxNesting = 400;

class Cursor {
public:
    Cursor(TraceBytes& bytes, size_t offset);

    const char* p;    // the next byte
    const char* end;  // the end of what is filled so far

    [[noreturn]] static void fail() { throw Unparsed{}; }
    size_t offset() const { return static_cast<size_t>(p - base_); }
    void seek(size_t offset) { p = base_ + offset; }
    // Makes `n` bytes from p readable; false when the content ends first.
    bool more(size_t n);
    void need(size_t n) {
        if (static_cast<size_t>(end - p) < n && !more(n)) fail();
    }

    // The next character that is not JSON white space, not consumed; -1 at
    // the end of the content.
    int peek() {
        for (;;) {
            while (p < end) {
                const char c = *p;
                if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return static_cast<unsigned char>(c);
                ++p;
            }
            if (!more(1)) return -1;
        }
    }
    // Consumes `c`, the next character after white space, or fails.
    void expect(char c) {
        if (peek() != static_cast<unsigned char>(c)) fail();
        ++p;
    }

    // With p just after the opening quote: the string's text, a view of the
    // span, or of `scratch` when it held escapes. p ends after the closing quote.
    std::string_view string(std::string& scratch);
    // A number (p at its first character), as JsonScanner hands numbers over.
    kineto::Scalar number();
    // A JSON value of any kind at p (after white space), read and dropped;
    // `depth` containers enclose it.
    void skipValue(int depth);
    // A scalar value at p (after white space): a string, a number or a literal.
    kineto::Scalar scalar(std::string& scratch);

private:
    void escape(std::string& out);
    void literal(std::string_view word);

    TraceBytes& bytes_;
    const char* base_;
    std::string skipped_;  // escapes decoded while skipping
};

}  // namespace json_in_place
}  // namespace osc
