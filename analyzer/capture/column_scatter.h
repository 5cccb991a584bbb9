// Internal to the SQLite reader: moving rows read into one flat columnar
// table out to the tables they belong to (per device, per process).
// The tables are structs of vectors; `columns` is a tuple of pointers to
// their vector members, so one template serves every table type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <vector>

namespace osc::sqlread {

template <typename T>
void appendColumn(std::vector<T>& dst, std::vector<T>& src) {
    if (dst.empty())
        dst.swap(src);
    else
        dst.insert(dst.end(), src.begin(), src.end());
    std::vector<T>().swap(src);
}

// Appends value(0) .. value(n - 1) to `column`: the vector grows once, and
// its end stays in a register through the loop.
template <typename T, typename Value>
void appendEach(std::vector<T>& column, size_t n, Value value) {
    const size_t at = column.size();
    column.resize(at + n);
    T* out = column.data() + at;
    for (size_t i = 0; i < n; ++i) out[i] = value(i);
}

template <typename T>
void scatterColumn(std::vector<T>& src, const std::vector<uint32_t>& slotOf, std::vector<std::vector<T>*>& dst,
                   const std::vector<size_t>& counts) {
    for (size_t s = 0; s < dst.size(); ++s) dst[s]->reserve(dst[s]->size() + counts[s]);
    for (size_t i = 0; i < src.size(); ++i) dst[slotOf[i]]->push_back(src[i]);
    std::vector<T>().swap(src);
}

// Moves row i of `flat` to the end of *dst[slotOf[i]], column by column,
// freeing each flat column as soon as it is copied out.
template <typename Table, typename... Columns>
void distribute(Table& flat, const std::vector<uint32_t>& slotOf, std::vector<Table*> dst,
                const std::tuple<Columns...>& columns) {
    if (dst.empty()) return;
    if (dst.size() == 1) {
        std::apply([&](auto... col) { (appendColumn(dst[0]->*col, flat.*col), ...); }, columns);
        return;
    }
    std::vector<size_t> counts(dst.size(), 0);
    for (uint32_t s : slotOf) ++counts[s];
    auto one = [&](auto col) {
        using Vec = std::remove_reference_t<decltype(flat.*col)>;
        std::vector<Vec*> targets;
        for (auto* t : dst) targets.push_back(&(t->*col));
        scatterColumn(flat.*col, slotOf, targets, counts);
    };
    std::apply([&](auto... col) { (one(col), ...); }, columns);
}

template <typename Table, typename... Columns>
void reserveAll(Table& t, size_t n, const std::tuple<Columns...>& columns) {
    std::apply([&](auto... col) { ((t.*col).reserve(n), ...); }, columns);
}

}  // namespace osc::sqlread
