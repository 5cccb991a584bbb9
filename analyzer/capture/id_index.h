// Values looked up by a table's integer ids (StringIds, kernel launches):
// a vector indexed by id when the ids are dense, as in every file nsys or
// our writer makes, and a hash map when they are not. A trimmed export keeps
// only the strings it uses, a few hundred ids spread up to millions; such a
// file is valid, and memory must follow its rows, never its largest id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace osc::sqlread {

template <typename T>
class IdIndex {
public:
    // From the table's min(id), max(id) and row count; nothing stored yet.
    void prepare(int64_t minId, int64_t maxId, int64_t rows) {
        // A vector costs one slot per id up to the largest; allow it while
        // that is within a few times the rows (plus a floor that small
        // tables never notice).
        dense_ = minId >= 0 && maxId >= 0 && maxId <= 4 * rows + (int64_t{1} << 20);
        if (dense_)
            byId_.assign(static_cast<size_t>(maxId + 1), T{});
        else
            sparse_.reserve(static_cast<size_t>(rows));
    }
    void set(int64_t id, T value) {
        if (!dense_) {
            sparse_[id] = value;
        } else if (id >= 0 && static_cast<uint64_t>(id) < byId_.size()) {
            byId_[static_cast<size_t>(id)] = value;
        }
    }
    // T{} for ids the table does not have.
    T get(int64_t id) const {
        if (dense_) return id >= 0 && static_cast<uint64_t>(id) < byId_.size() ? byId_[static_cast<size_t>(id)] : T{};
        const auto it = sparse_.find(id);
        return it == sparse_.end() ? T{} : it->second;
    }
    bool dense() const { return dense_; }
    // Slots held: the ids up to the largest when dense, the rows otherwise.
    size_t slots() const { return dense_ ? byId_.size() : sparse_.size(); }

private:
    bool dense_ = true;
    std::vector<T> byId_;
    std::unordered_map<int64_t, T> sparse_;
};

}  // namespace osc::sqlread
