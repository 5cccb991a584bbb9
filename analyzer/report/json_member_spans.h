// Where the elements of one array member of a JSON document's top-level
// object lie in its text, found without parsing the values: a saved report
// of 100,000 devices is 900 MB, and reading it as one document built a DOM
// of 4 GB on one thread (issue 40). With the spans, each element is parsed
// on its own (and on several threads), and the rest of the document without
// them.
//
// Only the structure is followed (strings, escapes, nesting); whether each
// piece is valid JSON is left to the parser that reads it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace osc::report {

struct MemberSpans {
    size_t open = 0, close = 0;                    // offsets of the array's '[' and ']'
    std::vector<std::pair<size_t, size_t>> items;  // [begin, end) of each element, spaces trimmed
};

// The spans of array member `key` of the top-level object, or nullopt when
// the text is not an object holding exactly one such member that is an
// array, or its structure is broken (unterminated string, unbalanced brackets).
std::optional<MemberSpans> topLevelArraySpans(std::string_view text, std::string_view key);

// Thrown by forEachItem when an element is not JSON.
struct ItemNotJson {
    size_t index = 0;
};

// Parses each element of `spans` (in `text`) and calls read(i, element), on
// up to 8 threads, each over a contiguous block of elements (read must be
// safe to call from several threads for different i). An exception from
// read stops that block; afterwards the one of the lowest element is
// rethrown, so the problem reported is the first in the document, as a
// reading in order would find. An element that is not JSON throws ItemNotJson.
void forEachItem(std::string_view text, const MemberSpans& spans,
                 const std::function<void(size_t, const nlohmann::json&)>& read);

}  // namespace osc::report
