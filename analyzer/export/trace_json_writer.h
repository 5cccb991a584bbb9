// A minimal streaming JSON writer for trace events: escapes strings, writes
// integers without locale or double rounding, and writes ns times as µs with
// exactly three decimals (so ns survive the trip through a µs format).
#pragma once

#include "analyzer/capture/printable_text.h"

#include <charconv>
#include <cstdint>
#include <ostream>
#include <string_view>

namespace osc {

class TraceJsonWriter {
public:
    explicit TraceJsonWriter(std::ostream& out) : out_(out) {}

    TraceJsonWriter& raw(std::string_view text) {
        out_.write(text.data(), static_cast<std::streamsize>(text.size()));
        return *this;
    }
    TraceJsonWriter& integer(int64_t v) {
        char buf[24];
        const auto r = std::to_chars(buf, buf + sizeof buf, v);
        return raw({buf, static_cast<size_t>(r.ptr - buf)});
    }
    TraceJsonWriter& unsignedInteger(uint64_t v) {
        char buf[24];
        const auto r = std::to_chars(buf, buf + sizeof buf, v);
        return raw({buf, static_cast<size_t>(r.ptr - buf)});
    }
    // 1234567 ns -> 1234.567
    TraceJsonWriter& micros(int64_t ns) {
        if (ns < 0) {
            raw("-");
            // -(INT64_MIN) overflows; times are bounded far below it anyway.
            ns = ns == INT64_MIN ? INT64_MAX : -ns;
        }
        integer(ns / 1000);
        const auto frac = static_cast<int>(ns % 1000);
        const char digits[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                                static_cast<char>('0' + frac % 10)};
        return raw({digits, 4});
    }
    TraceJsonWriter& string(std::string_view s) {
        raw("\"");
        size_t run = 0;
        for (size_t i = 0; i < s.size(); ++i) {
            const auto c = static_cast<unsigned char>(s[i]);
            if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') continue;
            if (c >= 0x80) {
                // Names from files may be broken UTF-8; JSON may not.
                const size_t length = utf8SequenceLength(s, i);
                if (length > 0) {
                    i += length - 1;
                    continue;
                }
                raw(s.substr(run, i - run));
                run = i + 1;
                raw("\\ufffd");
                continue;
            }
            raw(s.substr(run, i - run));
            run = i + 1;
            switch (c) {
                case '"':
                    raw("\\\"");
                    break;
                case '\\':
                    raw("\\\\");
                    break;
                case '\n':
                    raw("\\n");
                    break;
                case '\t':
                    raw("\\t");
                    break;
                case '\r':
                    raw("\\r");
                    break;
                default: {
                    static constexpr char hex[] = "0123456789abcdef";
                    const char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
                    raw({esc, 6});
                }
            }
        }
        raw(s.substr(run));
        return raw("\"");
    }

private:
    std::ostream& out_;
};

}  // namespace osc
