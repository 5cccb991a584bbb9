#include "analyzer/report/json_member_spans.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

namespace osc::report {
namespace {

bool space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Characters a scan stops at: std::string_view::find_first_of asks memchr
// about every character, which made the scan of a 900 MB report the
// slowest part of reading it.
struct Stops {
    bool at[256] = {};
    constexpr explicit Stops(std::string_view chars) {
        for (char c : chars) at[static_cast<unsigned char>(c)] = true;
    }
};
constexpr Stops kInString("\"\\");
constexpr Stops kStructure("\"{}[],");

size_t next(std::string_view t, size_t i, const Stops& stops) {
    while (i < t.size() && !stops.at[static_cast<unsigned char>(t[i])]) ++i;
    return i < t.size() ? i : std::string_view::npos;
}

// The offset just past the string starting at `i` (its opening quote), or npos.
size_t skipString(std::string_view t, size_t i) {
    for (++i;;) {
        i = next(t, i, kInString);
        if (i == std::string_view::npos) return i;
        if (t[i] == '"') return i + 1;
        i += 2;  // an escaped character
    }
}

}  // namespace

std::optional<MemberSpans> topLevelArraySpans(std::string_view t, std::string_view key) {
    size_t i = 0;
    while (i < t.size() && space(t[i])) ++i;
    if (i >= t.size() || t[i] != '{') return std::nullopt;
    std::optional<MemberSpans> found;
    int depth = 0;
    // The last string seen at depth 1 and where it ended: a key when ':' follows.
    std::string_view lastString;
    size_t afterString = std::string_view::npos;
    for (; i < t.size(); ++i) {
        const char c = t[i];
        if (c == '"') {
            const size_t end = skipString(t, i);
            if (end == std::string_view::npos) return std::nullopt;
            if (depth == 1) lastString = t.substr(i + 1, end - i - 2), afterString = end;
            i = end - 1;
        } else if (c == '{' || c == '[') {
            ++depth;
        } else if (c == '}' || c == ']') {
            if (--depth < 0) return std::nullopt;
            if (depth == 0) {
                // Only spaces may follow the document.
                for (++i; i < t.size(); ++i)
                    if (!space(t[i])) return std::nullopt;
                return found;
            }
        } else if (c == ':' && depth == 1 && afterString != std::string_view::npos && lastString == key) {
            size_t j = i + 1;
            while (j < t.size() && space(t[j])) ++j;
            if (found || j >= t.size() || t[j] != '[') return std::nullopt;  // twice, or not an array
            MemberSpans spans;
            spans.open = j;
            // The elements: split at commas at the array's own depth.
            int inner = 0;
            size_t itemBegin = j + 1;
            for (++j; j < t.size(); ++j) {
                // Straight to the next character that changes the structure.
                j = next(t, j, kStructure);
                if (j == std::string_view::npos) return std::nullopt;
                const char d = t[j];
                if (d == '"') {
                    const size_t end = skipString(t, j);
                    if (end == std::string_view::npos) return std::nullopt;
                    j = end - 1;
                } else if (d == '{' || d == '[') {
                    ++inner;
                } else if ((d == '}' || d == ']') && inner > 0) {
                    --inner;
                } else if ((d == ',' || d == ']') && inner == 0) {
                    size_t b = itemBegin, e = j;
                    while (b < e && space(t[b])) ++b;
                    while (e > b && space(t[e - 1])) --e;
                    if (b < e)
                        spans.items.emplace_back(b, e);
                    else if (d == ',' || !spans.items.empty())
                        return std::nullopt;  // an empty element
                    itemBegin = j + 1;
                    if (d == ']') break;
                } else if (d == '}' && inner == 0) {
                    return std::nullopt;
                }
            }
            if (j >= t.size()) return std::nullopt;
            spans.close = j;
            found = std::move(spans);
            i = j;  // past the array; depth is back at 1
        }
        if (c != '"' && !space(c) && c != ':') afterString = std::string_view::npos;
    }
    return std::nullopt;  // the top-level object never closed
}

void forEachItem(std::string_view text, const MemberSpans& spans,
                 const std::function<void(size_t, const nlohmann::json&)>& read) {
    const size_t n = spans.items.size();
    std::vector<std::exception_ptr> problem(n);
    std::atomic<bool> notJson{false};
    std::atomic<size_t> firstNotJson{n};
    const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
    auto work = [&](size_t t) {
        for (size_t i = n * t / threads; i < n * (t + 1) / threads && !notJson.load(); ++i) {
            const auto [b, e] = spans.items[i];
            nlohmann::json item;
            try {
                item = nlohmann::json::parse(text.begin() + static_cast<std::ptrdiff_t>(b),
                                             text.begin() + static_cast<std::ptrdiff_t>(e));
            } catch (const nlohmann::json::exception&) {
                size_t seen = firstNotJson.load();
                while (i < seen && !firstNotJson.compare_exchange_weak(seen, i)) {}
                notJson = true;
                return;
            }
            try {
                read(i, item);
            } catch (...) {
                problem[i] = std::current_exception();
                return;  // the elements after it in this block cannot come first
            }
        }
    };
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
    for (auto& th : pool) th.join();
    if (notJson) throw ItemNotJson{firstNotJson.load()};
    for (const auto& p : problem)
        if (p) std::rethrow_exception(p);
}

}  // namespace osc::report
