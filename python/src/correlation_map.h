// Values keyed by CUDA correlation id, for the HTA view's joins of GPU rows
// to the host calls that launched them.
//
// CUPTI numbers correlations in sequence, so a trace's are mostly dense: a
// plain vector then, indexed from the smallest key (the joins ran through
// hash maps and were a tenth of the view); a hash map where they are spread
// so thinly that a vector would waste room.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace osc::python {

template <typename T>
class CorrelationMap {
public:
    // `keys`: every key that will be set (any order, repeats allowed).
    explicit CorrelationMap(const std::vector<uint32_t>& keys) {
        if (keys.empty()) return;
        const auto [low, high] = std::minmax_element(keys.begin(), keys.end());
        const uint64_t range = uint64_t{*high} - *low + 1;
        if (range <= 4 * uint64_t{keys.size()} + 65536) {
            low_ = *low;
            dense_.resize(range);
        } else {
            sparse_.reserve(keys.size());
            spread_ = true;
        }
    }

    // `key` must be one of the constructor's keys.
    void set(uint32_t key, T value) {
        if (spread_)
            sparse_[key] = std::move(value);
        else
            dense_[key - low_] = std::move(value);
    }

    const T* find(uint32_t key) const {
        if (spread_) {
            const auto it = sparse_.find(key);
            return it == sparse_.end() ? nullptr : &it->second;
        }
        if (key < low_ || key - low_ >= dense_.size() || !dense_[key - low_]) return nullptr;
        return &*dense_[key - low_];
    }
    bool contains(uint32_t key) const { return find(key) != nullptr; }

private:
    bool spread_ = false;
    uint32_t low_ = 0;
    std::vector<std::optional<T>> dense_;
    std::unordered_map<uint32_t, T> sparse_;
};

}  // namespace osc::python
