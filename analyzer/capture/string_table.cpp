#include "analyzer/capture/string_table.h"

#include "analyzer/capture/model.h"

namespace osc {

StringTable::StringTable() { intern(""); }

StringTable::StringTable(const StringTable& other) : StringTable() { *this = other; }

StringTable& StringTable::operator=(const StringTable& other) {
    if (this == &other) return *this;
    values_.clear();
    index_.clear();
    for (const auto& v : other.values_) intern(v);
    return *this;
}

uint32_t StringTable::intern(std::string_view text) {
    if (auto it = index_.find(text); it != index_.end()) return it->second;
    const auto id = static_cast<uint32_t>(values_.size());
    values_.emplace_back(text);
    index_.emplace(values_.back(), id);
    return id;
}

void StringTable::truncate(size_t size) {
    while (values_.size() > size && values_.size() > 1) {
        index_.erase(values_.back());
        values_.pop_back();
    }
}

std::string_view StringTable::at(uint32_t id) const {
    if (id >= values_.size()) return {};
    return values_[id];
}

uint32_t StringTable::find(std::string_view text) const {
    auto it = index_.find(text);
    return it == index_.end() ? kNoId : it->second;
}

}  // namespace osc
