// A streaming JSON parser that calls a SAX-style handler, written for speed on
// multi-GB traces: it scans chunks in place, copies only the strings it hands
// over, and gives numbers to the handler as their text (so timestamps keep
// every digit). nlohmann's SAX parser did ~27 MB/s on Kineto traces, this one
// several times that (bench/bench_kineto_import).
//
// Strict RFC 8259 grammar; errors throw JsonSyntaxError (a CaptureError) with
// the file and the line.
// Handler interface: null(), boolean(bool), number_integer(int64_t),
// number_unsigned(uint64_t), number_float(const std::string& text),
// string(std::string&), key(std::string&), start_object(), end_object(),
// start_array(), end_array().
#pragma once

#include "analyzer/capture/capture_error.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace osc {

namespace json_detail {
// Character classes as tables: one load per character in the hot loops.
struct CharTables {
    bool stringStop[256] = {};  // ends a plain run inside a string
    bool numberChar[256] = {};  // may appear in a number's text
    constexpr CharTables() {
        for (int c = 0; c < 0x20; ++c) stringStop[c] = true;
        stringStop[static_cast<int>('"')] = stringStop[static_cast<int>('\\')] = true;
        for (int c = '0'; c <= '9'; ++c) numberChar[c] = true;
        for (char c : {'-', '+', '.', 'e', 'E'}) numberChar[static_cast<unsigned char>(c)] = true;
    }
};
inline constexpr CharTables kCharTables{};

// Code point `cp` (checked by the caller) as UTF-8.
inline void appendUtf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

enum class EscapeProblem : uint8_t { None, Invalid, BadHex, UnpairedSurrogate };

// Decodes one escape of a string, its backslash already read, onto `out`;
// `next()` gives the characters that follow (-1 at the end of the input).
template <typename Next>
EscapeProblem decodeEscape(Next&& next, std::string& out) {
    const int e = next();
    switch (e) {
        case '"':
        case '\\':
        case '/':
            out += static_cast<char>(e);
            return EscapeProblem::None;
        case 'b':
            out += '\b';
            return EscapeProblem::None;
        case 'f':
            out += '\f';
            return EscapeProblem::None;
        case 'n':
            out += '\n';
            return EscapeProblem::None;
        case 'r':
            out += '\r';
            return EscapeProblem::None;
        case 't':
            out += '\t';
            return EscapeProblem::None;
        case 'u':
            break;
        default:
            return EscapeProblem::Invalid;
    }
    const auto hex4 = [&](uint32_t& v) {
        v = 0;
        for (int i = 0; i < 4; ++i) {
            const int h = next();
            v <<= 4;
            if (h >= '0' && h <= '9')
                v |= static_cast<uint32_t>(h - '0');
            else if (h >= 'a' && h <= 'f')
                v |= static_cast<uint32_t>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F')
                v |= static_cast<uint32_t>(h - 'A' + 10);
            else
                return false;
        }
        return true;
    };
    uint32_t cp = 0;
    if (!hex4(cp)) return EscapeProblem::BadHex;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (next() != '\\' || next() != 'u') return EscapeProblem::UnpairedSurrogate;
        uint32_t lo = 0;
        if (!hex4(lo)) return EscapeProblem::BadHex;
        if (lo < 0xDC00 || lo > 0xDFFF) return EscapeProblem::UnpairedSurrogate;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
        return EscapeProblem::UnpairedSurrogate;
    }
    appendUtf8(out, cp);
    return EscapeProblem::None;
}
}  // namespace json_detail

// Input that is not JSON: a CaptureError naming the file and the line.
class JsonSyntaxError : public CaptureError {
public:
    JsonSyntaxError(const std::string& path, uint64_t line, const std::string& syntax)
        : CaptureError(path, "line " + std::to_string(line) + ": invalid JSON: " + syntax), line_(line) {}
    uint64_t line() const { return line_; }

private:
    uint64_t line_;
};

// Source: anything with `size_t read(char*, size_t)` returning 0 at the end.
template <typename Source, typename Handler>
class JsonScanner {
public:
    // Limits that keep hostile input from taking unbounded memory or stack.
    static constexpr size_t kMaxDepth = 512;
    static constexpr size_t kMaxStringBytes = size_t{64} << 20;
    static constexpr size_t kMaxNumberChars = 4096;
    static constexpr const bool* kStringStop = json_detail::kCharTables.stringStop;
    static constexpr const bool* kNumberChar = json_detail::kCharTables.numberChar;

    // `path` names the file in JsonSyntaxErrors.
    JsonScanner(Source& source, Handler& handler, std::string path, size_t chunkSize = size_t{1} << 20)
        : source_(source), handler_(handler), path_(std::move(path)), buffer_(chunkSize) {}

    // Parses one JSON document; throws JsonSyntaxError.
    void parse();
    uint64_t line() const { return line_; }

private:
    enum class Expect : uint8_t { Value, FirstValueOrEnd, Key, FirstKeyOrEnd, CommaOrEnd };

    [[noreturn]] void fail(const std::string& what) const { throw JsonSyntaxError(path_, line_, what); }
    bool refill() {
        const size_t got = source_.read(buffer_.data(), buffer_.size());
        p_ = buffer_.data();
        end_ = p_ + got;
        return got > 0;
    }
    // Next non-space character, not consumed; -1 at the end of input.
    int peekNonSpace() {
        for (;;) {
            while (p_ < end_) {
                const char c = *p_;
                if (c == '\n')
                    ++line_;
                else if (c != ' ' && c != '\t' && c != '\r')
                    return static_cast<unsigned char>(c);
                ++p_;
            }
            if (!refill()) return -1;
        }
    }
    int get() {
        if (p_ == end_ && !refill()) return -1;
        return static_cast<unsigned char>(*p_++);
    }
    void readString(std::string& out);
    void readEscape(std::string& out);
    void readNumber();
    void readLiteral(const char* word);

    Source& source_;
    Handler& handler_;
    std::string path_;
    std::vector<char> buffer_;
    const char* p_ = nullptr;
    const char* end_ = nullptr;
    uint64_t line_ = 1;
    std::string text_;         // the current string or number
    std::vector<char> stack_;  // 'O' or 'A' per open container
};

template <typename Source, typename Handler>
void JsonScanner<Source, Handler>::parse() {
    Expect expect = Expect::Value;
    for (;;) {
        int c = peekNonSpace();
        if (c < 0) fail(stack_.empty() && expect == Expect::Value ? "empty input" : "unexpected end of input");
        bool valueDone = false;
        switch (expect) {
            case Expect::FirstValueOrEnd:
                if (c == ']') {
                    ++p_;
                    stack_.pop_back();
                    handler_.end_array();
                    valueDone = true;
                    break;
                }
                [[fallthrough]];
            case Expect::Value:
                switch (c) {
                    case '{':
                    case '[':
                        ++p_;
                        if (stack_.size() >= kMaxDepth) fail("nesting deeper than 512 levels");
                        stack_.push_back(c == '{' ? 'O' : 'A');
                        if (c == '{') {
                            handler_.start_object();
                            expect = Expect::FirstKeyOrEnd;
                        } else {
                            handler_.start_array();
                            expect = Expect::FirstValueOrEnd;
                        }
                        break;
                    case '"':
                        ++p_;
                        readString(text_);
                        handler_.string(text_);
                        valueDone = true;
                        break;
                    case 't':
                        readLiteral("true");
                        handler_.boolean(true);
                        valueDone = true;
                        break;
                    case 'f':
                        readLiteral("false");
                        handler_.boolean(false);
                        valueDone = true;
                        break;
                    case 'n':
                        readLiteral("null");
                        handler_.null();
                        valueDone = true;
                        break;
                    default:
                        if (c == '-' || (c >= '0' && c <= '9')) {
                            readNumber();
                            valueDone = true;
                        } else {
                            fail(std::string("unexpected character '") + static_cast<char>(c) +
                                 "' where a value should be");
                        }
                }
                break;
            case Expect::FirstKeyOrEnd:
                if (c == '}') {
                    ++p_;
                    stack_.pop_back();
                    handler_.end_object();
                    valueDone = true;
                    break;
                }
                [[fallthrough]];
            case Expect::Key:
                if (c != '"') fail("expected a quoted object key");
                ++p_;
                readString(text_);
                handler_.key(text_);
                if (peekNonSpace() != ':') fail("expected ':' after an object key");
                ++p_;
                expect = Expect::Value;
                break;
            case Expect::CommaOrEnd: {
                ++p_;
                const bool inObject = stack_.back() == 'O';
                if (c == ',') {
                    expect = inObject ? Expect::Key : Expect::Value;
                } else if (c == (inObject ? '}' : ']')) {
                    stack_.pop_back();
                    if (inObject)
                        handler_.end_object();
                    else
                        handler_.end_array();
                    valueDone = true;
                } else {
                    fail(inObject ? "expected ',' or '}'" : "expected ',' or ']'");
                }
                break;
            }
        }
        if (valueDone) {
            if (stack_.empty()) {
                if (peekNonSpace() >= 0) fail("unexpected text after the end of the document");
                return;
            }
            expect = Expect::CommaOrEnd;
        }
    }
}

template <typename Source, typename Handler>
void JsonScanner<Source, Handler>::readString(std::string& out) {
    out.clear();
    for (;;) {
        // Fast path: copy the run up to the next quote, backslash or control char.
        const char* run = p_;
        while (p_ < end_ && !kStringStop[static_cast<unsigned char>(*p_)]) ++p_;
        out.append(run, static_cast<size_t>(p_ - run));
        if (out.size() > kMaxStringBytes) fail("string longer than 64 MiB");
        if (p_ == end_) {
            if (!refill()) fail("unexpected end of input inside a string");
            continue;
        }
        const char c = *p_++;
        if (c == '"') return;
        if (c == '\\') {
            readEscape(out);
            continue;
        }
        fail("control character inside a string");
    }
}

template <typename Source, typename Handler>
void JsonScanner<Source, Handler>::readEscape(std::string& out) {
    switch (json_detail::decodeEscape([this] { return get(); }, out)) {
        case json_detail::EscapeProblem::None:
            return;
        case json_detail::EscapeProblem::Invalid:
            fail("invalid escape in a string");
        case json_detail::EscapeProblem::BadHex:
            fail("invalid \\u escape in a string");
        case json_detail::EscapeProblem::UnpairedSurrogate:
            fail("unpaired surrogate in a \\u escape");
    }
}

template <typename Source, typename Handler>
void JsonScanner<Source, Handler>::readNumber() {
    text_.clear();
    for (;;) {
        const char* run = p_;
        while (p_ < end_ && kNumberChar[static_cast<unsigned char>(*p_)]) ++p_;
        text_.append(run, static_cast<size_t>(p_ - run));
        if (text_.size() > kMaxNumberChars) fail("number longer than 4096 characters");
        if (p_ < end_ || !refill()) break;
    }
    // Grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    const char* s = text_.data();
    const char* e = s + text_.size();
    const bool negative = *s == '-';
    if (negative) ++s;
    auto digits = [&]() {
        const char* from = s;
        while (s < e && *s >= '0' && *s <= '9') ++s;
        return s - from;
    };
    const char* intStart = s;
    const auto intDigits = digits();
    if (intDigits == 0 || (*intStart == '0' && intDigits > 1)) fail("malformed number '" + text_.substr(0, 40) + "'");
    bool integer = true;
    if (s < e && *s == '.') {
        ++s;
        integer = false;
        if (digits() == 0) fail("malformed number '" + text_.substr(0, 40) + "'");
    }
    if (s < e && (*s == 'e' || *s == 'E')) {
        ++s;
        integer = false;
        if (s < e && (*s == '+' || *s == '-')) ++s;
        if (digits() == 0) fail("malformed number '" + text_.substr(0, 40) + "'");
    }
    if (s != e) fail("malformed number '" + text_.substr(0, 40) + "'");
    if (integer && intDigits <= 19) {
        uint64_t v = 0;
        for (const char* d = intStart; d < intStart + intDigits; ++d)
            v = v * 10 + static_cast<uint64_t>(*d - '0');  // 19 digits cannot overflow uint64
        if (!negative) {
            if (v <= static_cast<uint64_t>(INT64_MAX))
                handler_.number_integer(static_cast<int64_t>(v));
            else
                handler_.number_unsigned(v);
            return;
        }
        if (v <= static_cast<uint64_t>(INT64_MAX)) {
            handler_.number_integer(-static_cast<int64_t>(v));
            return;
        }
    }
    handler_.number_float(text_);
}

template <typename Source, typename Handler>
void JsonScanner<Source, Handler>::readLiteral(const char* word) {
    for (const char* w = word; *w; ++w)
        if (get() != *w) fail(std::string("invalid literal (expected '") + word + "')");
}

}  // namespace osc
