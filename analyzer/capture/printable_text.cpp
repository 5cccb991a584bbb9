#include "analyzer/capture/printable_text.h"

#include <cstdio>

namespace osc {

size_t utf8SequenceLength(std::string_view text, size_t i) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char c = byte(i);
    if (c < 0x80) return 1;
    const size_t length = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (length == 0 || i + length > text.size()) return 0;
    for (size_t k = 1; k < length; ++k)
        if ((byte(i + k) & 0xc0) != 0x80) return 0;
    const unsigned char second = byte(i + 1);
    if (c == 0xe0 && second < 0xa0) return 0;   // overlong
    if (c == 0xed && second >= 0xa0) return 0;  // UTF-16 surrogates
    if (c == 0xf0 && second < 0x90) return 0;   // overlong
    if (c == 0xf4 && second >= 0x90) return 0;  // past U+10FFFF
    return length;
}

std::string printable(std::string_view text, bool keepLineBreaks) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if ((c >= 0x20 && c < 0x7f) || (keepLineBreaks && (c == '\n' || c == '\t'))) {
            out += static_cast<char>(c);
            ++i;
            continue;
        }
        size_t length = c >= 0x80 ? utf8SequenceLength(text, i) : 0;
        // C1 controls (U+0080..U+009F) act like escapes on some terminals.
        if (length == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) length = 0;
        if (length == 0) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
            ++i;
            continue;
        }
        out.append(text.substr(i, length));
        i += length;
    }
    return out;
}

std::string printableLine(std::string_view text, size_t limit) {
    std::string out = printable(text);
    if (out.size() <= limit) return out;
    size_t cut = limit;
    // printable() output is ASCII and whole UTF-8 sequences: cut before one starts.
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xc0) == 0x80) --cut;
    const size_t more = out.size() - cut;
    out.resize(cut);
    return out + "... (" + std::to_string(more) + " bytes more)";
}

}  // namespace osc
