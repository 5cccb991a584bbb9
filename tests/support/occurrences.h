// How many times a piece of text occurs in another (overlapping ones
// counted), for tests that count lines or elements of an output.
#pragma once

#include <cstddef>
#include <string>

namespace osc::testsupport {

inline size_t occurrences(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

}  // namespace osc::testsupport
