// A map keyed by std::string that is searched with a std::string_view, so a
// lookup of a text already present makes no string.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace osc {

struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

template <typename Value>
using TextMap = std::unordered_map<std::string, Value, TextHash, std::equal_to<>>;

}  // namespace osc
