// Interned strings: names are stored once and referred to by 32-bit ids,
// which keeps the per-event columns small and name comparisons integer-cheap.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

namespace osc {

class StringTable {
public:
    StringTable();
    StringTable(const StringTable& other);
    StringTable& operator=(const StringTable& other);
    StringTable(StringTable&&) noexcept = default;
    StringTable& operator=(StringTable&&) noexcept = default;

    uint32_t intern(std::string_view text);
    // Empty string view for an unknown id (kNoId included).
    std::string_view at(uint32_t id) const;
    // kNoId when the text was never interned.
    uint32_t find(std::string_view text) const;
    size_t size() const { return values_.size(); }
    // Forgets every string from id `size` on (a reader that gave up, before
    // another reads the same file again).
    void truncate(size_t size);

private:
    // A deque keeps the strings' addresses stable, so the index can key on views.
    std::deque<std::string> values_;
    std::unordered_map<std::string_view, uint32_t> index_;
};

}  // namespace osc
