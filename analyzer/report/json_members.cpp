#include "analyzer/report/json_members.h"

#include <nlohmann/json.hpp>

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace osc::report {

namespace {

// Whether dump() writes `v` as it is: printable ASCII but for the quote and
// the backslash. Sixteen bytes at a time where the CPU can: every
// collective's kernel name passes here.
bool plainAscii(std::string_view v) {
    const char* p = v.data();
    const char* end = p + v.size();
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    const __m128i below = _mm_set1_epi8(0x20 - 0x80), above = _mm_set1_epi8(0x7E - 0x80), flip = _mm_set1_epi8(-128);
    for (; end - p >= 16; p += 16) {
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        const __m128i s = _mm_xor_si128(x, flip);  // unsigned order as signed
        const __m128i bad = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
                                         _mm_or_si128(_mm_cmplt_epi8(s, below), _mm_cmpgt_epi8(s, above)));
        if (_mm_movemask_epi8(bad) != 0) return false;
    }
#endif
    for (; p < end; ++p) {
        const auto u = static_cast<unsigned char>(*p);
        if (u < 0x20 || u > 0x7E || u == '"' || u == '\\') return false;
    }
    return true;
}

}  // namespace

void appendJsonString(std::string& out, std::string_view v) {
    // Anything but plain printable ASCII (controls, UTF-8, invalid bytes)
    // goes through dump() itself.
    if (!plainAscii(v)) {
        out += nlohmann::json(std::string(v)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        return;
    }
    char quoted[256];  // most names: one append
    if (v.size() + 2 > sizeof quoted) {
        out += '"';
        out += v;
        out += '"';
        return;
    }
    quoted[0] = '"';
    std::memcpy(quoted + 1, v.data(), v.size());
    quoted[v.size() + 1] = '"';
    out.append(quoted, v.size() + 2);
}

void appendJsonDouble(std::string& out, double v) {
    if (!std::isfinite(v)) {
        out += "null";
        return;
    }
    std::array<char, 64> buf;  // the size of dump()'s own number buffer
    const char* end = nlohmann::detail::to_chars(buf.data(), buf.data() + buf.size(), v);
    out.append(buf.data(), static_cast<size_t>(end - buf.data()));
}

JsonMembers::JsonMembers(std::string& out, int indent) : out_(out), indent_(indent) { out_ += '{'; }

// `"k"` and then `after`, in one step (keys are the report's own names:
// no escaping).
void JsonMembers::appendKey(std::string_view k, std::string_view after) {
    char text[128];
    const size_t n = 1 + k.size() + after.size();
    if (n > sizeof text) {
        out_ += '"';
        out_ += k;
        out_ += after;
        return;
    }
    text[0] = '"';
    std::memcpy(text + 1, k.data(), k.size());
    std::memcpy(text + 1 + k.size(), after.data(), after.size());
    out_.append(text, n);
}

// Every member of a big report passes here (twenty per collective): the
// separators go in with their lengths, not as C strings (two strlen calls a
// member, 2 % of a 1 GB trace's report).
void JsonMembers::key(std::string_view k) {
    if (indent_ < 0) {
        if (!first_) out_ += ',';
        appendKey(k, "\":");
    } else {
        // The separator and the indent in one append where the indent is no
        // deeper than reports go (a fill of spaces was the slower path).
        static constexpr std::string_view kLead = ",\n                                                ";
        const size_t pad = static_cast<size_t>(indent_) + 2;
        if (pad + 2 <= kLead.size()) {
            out_.append(first_ ? kLead.substr(1, pad + 1) : kLead.substr(0, pad + 2));
        } else {
            out_.append(first_ ? "\n" : ",\n");
            out_.append(pad, ' ');
        }
        appendKey(k, "\": ");
    }
    first_ = false;
}

void JsonMembers::integer(std::string_view k, int64_t v) {
    key(k);
    std::array<char, 24> buf;
    const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
    out_.append(buf.data(), r.ptr);
}

void JsonMembers::number(std::string_view k, const std::optional<double>& v) {
    key(k);
    if (v)
        appendJsonDouble(out_, *v);
    else
        out_ += "null";
}

void JsonMembers::unsignedOrNull(std::string_view k, const std::optional<uint64_t>& v) {
    key(k);
    if (!v) {
        out_ += "null";
        return;
    }
    std::array<char, 24> buf;
    const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), *v);
    out_.append(buf.data(), r.ptr);
}

void JsonMembers::string(std::string_view k, std::string_view v) {
    key(k);
    appendJsonString(out_, v);
}

void JsonMembers::stringOrNull(std::string_view k, std::string_view v) {
    if (v.empty())
        null(k);
    else
        string(k, v);
}

void JsonMembers::boolean(std::string_view k, bool v) {
    key(k);
    out_ += v ? "true" : "false";
}

void JsonMembers::integerOrNull(std::string_view k, const std::optional<int64_t>& v) {
    if (v)
        integer(k, *v);
    else
        null(k);
}

void JsonMembers::pairs(std::string_view k, const std::vector<std::pair<int, int>>& items, std::string_view first,
                        std::string_view second) {
    objects(k, items.size(), [&](size_t i, JsonMembers& o) {
        o.integer(first, items[i].first);
        o.integer(second, items[i].second);
    });
}

void JsonMembers::closeArray(size_t n) {
    if (n && indent_ >= 0) {
        out_ += '\n';
        out_.append(static_cast<size_t>(indent_) + 2, ' ');
    }
    out_ += ']';
}

void JsonMembers::null(std::string_view k) {
    key(k);
    out_ += "null";
}

void JsonMembers::close() {
    if (indent_ >= 0 && !first_) {
        out_ += '\n';
        out_.append(static_cast<size_t>(indent_), ' ');
    }
    out_ += '}';
}

}  // namespace osc::report
