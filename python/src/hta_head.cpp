#include "python/src/hta_head.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/import/decimal_time.h"
#include "analyzer/import/inflate_stream.h"
#include "analyzer/load/input_kind.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <string_view>
#include <vector>

namespace osc::python {
namespace {

constexpr std::string_view kEvents = "\"traceEvents\"";
constexpr size_t kChunk = size_t{1} << 20;

// Reads from `in` into `text` until `done(text)` or the end; at most about
// `limit` bytes, in chunks that start small and double (a trace's head is
// mostly a few KiB). The files are read on this thread, no further than
// asked (GzReader's thread read 6 MB ahead of each file's head, and a job's
// files were looked at twice).
template <typename Done>
void readUntil(InflateStream& in, std::string& text, size_t limit, Done done) {
    std::vector<char> chunk;
    for (size_t size = 16384; !done(text) && text.size() < limit; size = std::min(2 * size, kChunk)) {
        chunk.resize(size);
        const size_t n = in.read(chunk.data(), chunk.size());
        if (n == 0) return;
        text.append(chunk.data(), n);
    }
}

std::optional<int64_t> integerAfter(std::string_view text, size_t keyEnd) {
    size_t i = keyEnd;
    while (i < text.size() &&
           (text[i] == ' ' || text[i] == ':' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r'))
        ++i;
    int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data() + i, text.data() + text.size(), value);
    if (error != std::errc() || end == text.data() + i) return std::nullopt;
    return value;
}

// The end of the JSON object that starts at `open` ('{'), or npos.
size_t objectEnd(std::string_view text, size_t open) {
    int depth = 0;
    bool inString = false;
    for (size_t i = open; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '{') {
            ++depth;
        } else if (c == '}' && --depth == 0) {
            return i + 1;
        }
    }
    return std::string_view::npos;
}

// Whether `text` holds the first element of the array after "traceEvents"
// (at `events`) whole, or shows there is none.
bool firstEventRead(std::string_view text, size_t events) {
    const size_t bracket = text.find('[', events + kEvents.size());
    if (bracket == std::string_view::npos) return false;
    size_t open = bracket + 1;
    while (open < text.size() && (text[open] == ' ' || text[open] == '\n' || text[open] == '\r' || text[open] == '\t'))
        ++open;
    if (open >= text.size()) return false;
    return text[open] != '{' || objectEnd(text, open) != std::string_view::npos;
}

// The top-level fields of one event that HTA's parser looks at.
struct FirstEvent : nlohmann::json_sax<nlohmann::json> {
    int depth = 0;
    std::string field;
    std::optional<std::string> ph, cat, ts;
    bool hasDur = false, catNull = false;
    std::optional<int64_t> stream, correlation;

    void value(const std::string& text, bool isNull = false) {
        if (depth != 1) return;
        if (field == "ph") ph = text;
        if (field == "cat") {
            cat = text;
            catNull = isNull;
        }
        if (field == "ts" && !isNull) ts = text;
        if (field == "dur") hasDur = !isNull;
    }
    void integer(int64_t v, const std::string& text) {
        value(text);
        if (depth == 2 && field == "stream") stream = v;
        if (depth == 2 && field == "correlation") correlation = v;
    }
    bool null() override {
        value("", true);
        return true;
    }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t v) override {
        integer(v, std::to_string(v));
        return true;
    }
    bool number_unsigned(number_unsigned_t v) override {
        integer(v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v), std::to_string(v));
        return true;
    }
    bool number_float(number_float_t, const string_t& s) override {
        value(s);
        return true;
    }
    bool string(string_t& s) override {
        value(s);
        return true;
    }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override {
        ++depth;
        return true;
    }
    bool key(string_t& k) override {
        field = k;
        return true;
    }
    bool end_object() override {
        --depth;
        return true;
    }
    bool start_array(std::size_t) override {
        ++depth;
        return true;
    }
    bool end_array() override {
        --depth;
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
};

std::optional<TraceHead::Row> firstRow(std::string_view head) {
    const size_t events = head.find(kEvents);
    if (events == std::string_view::npos) return std::nullopt;
    const size_t bracket = head.find('[', events + kEvents.size());
    if (bracket == std::string_view::npos) return std::nullopt;
    size_t open = bracket + 1;
    while (open < head.size() && (head[open] == ' ' || head[open] == '\n' || head[open] == '\r' || head[open] == '\t'))
        ++open;
    if (open >= head.size() || head[open] != '{') return std::nullopt;
    const size_t end = objectEnd(head, open);
    if (end == std::string_view::npos) return std::nullopt;
    FirstEvent e;
    if (!nlohmann::json::sax_parse(head.substr(open, end - open), &e)) return std::nullopt;
    // hta/common/trace_parser.py: rows without "dur" or "cat" are dropped, and "Trace" spans.
    if (!e.hasDur || !e.cat || e.catNull || *e.cat == "Trace" || !e.ts) return std::nullopt;
    const auto ts = microsToNs(*e.ts);
    if (!ts) return std::nullopt;
    TraceHead::Row row;
    row.tsNs = *ts;
    row.correlation = e.correlation.value_or(-1);
    row.gpu = e.stream.value_or(-1) >= 0 && row.correlation >= 0;
    return row;
}

}  // namespace

TraceHead readTraceHead(const std::string& path, bool baseFromTail) {
    constexpr std::string_view base = "\"baseTimeNanoseconds\"";
    TraceHead out;
    InflateStream in(path);
    std::string head;
    // Until the first event is whole, or a MiB past the array's start
    // (an event is far smaller).
    readUntil(in, head, 4 * kChunk, [&](const std::string& t) {
        const size_t events = t.find(kEvents);
        return events != std::string::npos && (firstEventRead(t, events) || t.size() > events + kChunk);
    });
    out.firstRow = firstRow(head);
    const size_t events = head.find(kEvents);
    if (const size_t at = head.find(base); at != std::string::npos && at < events) {
        out.baseNs = integerAfter(head, at + base.size()).value_or(0);
        return out;
    }
    if (!baseFromTail) return out;
    // Older PyTorch wrote it after the events: the tail of the whole file
    // (inflated by ISA-L, a fraction of what loading it took).
    std::string tail = std::move(head);
    std::vector<char> chunk(kChunk);
    for (size_t n; (n = in.read(chunk.data(), chunk.size())) > 0;) {
        tail.append(chunk.data(), n);
        if (tail.size() > 2 * kChunk) tail.erase(0, tail.size() - 65536);
    }
    const size_t closed = tail.rfind(']');
    if (const size_t at = tail.rfind(base); at != std::string::npos && (closed == std::string::npos || at > closed))
        out.baseNs = integerAfter(tail, at + base.size()).value_or(0);
    return out;
}

std::string traceFileKind(const std::string& path) {
    const InputKind kind = sniff(path);
    if (kind == InputKind::SqliteCapture) return "capture";
    if (kind != InputKind::KinetoTrace && kind != InputKind::Unknown) return describe(kind);
    InflateStream in(path);
    std::string text;
    std::vector<char> chunk(kChunk / 16);
    // "traceEvents" is near the start of a trace; other JSON is read to its end.
    for (size_t n; (n = in.read(chunk.data(), chunk.size())) > 0;) {
        const size_t from = text.size() > kEvents.size() ? text.size() - kEvents.size() : 0;
        text.append(chunk.data(), n);
        if (text.find(kEvents, from) != std::string::npos) return "trace";
        if (text.size() > 4 * kChunk) text.erase(0, text.size() - kEvents.size());
        if (text.find("\"nodes\"") != std::string::npos && text.find("\"schema\"") != std::string::npos)
            return "a PyTorch execution trace (no \"traceEvents\")";
    }
    size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && text[first] == '[') return "not a profiler trace (a JSON list)";
    return "not a profiler trace (no \"traceEvents\")";
}

bool holdsMtiaEvents(const std::string& path) {
    constexpr std::string_view needle = "\"mtia_";
    InflateStream in(path);
    std::string text;
    std::vector<char> chunk(kChunk);
    for (size_t n; (n = in.read(chunk.data(), chunk.size())) > 0;) {
        const size_t keep = text.size() > needle.size() ? needle.size() : text.size();
        text.erase(0, text.size() - keep);
        text.append(chunk.data(), n);
        if (text.find(needle) != std::string::npos) return true;
    }
    return false;
}

}  // namespace osc::python
