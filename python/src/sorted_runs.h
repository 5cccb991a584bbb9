// Sorting rows that come nearly in order, as the HTA view's do: a capture's
// tables are start-ordered, and the unions' sweeps are ordered but where
// inward rounding gives an event a negative length.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace osc::python {

// Sorts [first, last) by `less` as std::stable_sort does, in O(n + inversions)
// for rows nearly in order; past a budget of moves, std::stable_sort itself
// (equal rows never passed each other, so the result is the same).
template <typename It, typename Less>
void sortNearlyOrdered(It first, It last, Less less) {
    size_t budget = 8 * static_cast<size_t>(last - first) + 64;
    for (It i = first; i != last; ++i) {
        if (i == first || !less(*i, *(i - 1))) continue;
        auto moving = std::move(*i);
        It hole = i;
        for (; hole != first && less(moving, *(hole - 1)) && budget > 0; --hole, --budget)
            *hole = std::move(*(hole - 1));
        *hole = std::move(moving);
        if (budget == 0) {
            std::stable_sort(first, last, less);
            return;
        }
    }
}

// Sorts `rows` by `less` as one std::stable_sort of them all would, where
// the rows are runs [bounds[k], bounds[k + 1]) each nearly in order: each
// run sorted alone, then the runs merged, earlier runs first among equals.
template <typename Row, typename Less>
void stableSortRuns(std::vector<Row>& rows, const std::vector<size_t>& bounds, Less less) {
    const auto at = [&](size_t k) { return rows.begin() + static_cast<std::ptrdiff_t>(bounds[k]); };
    for (size_t k = 1; k < bounds.size(); ++k) sortNearlyOrdered(at(k - 1), at(k), less);
    for (size_t k = 2; k < bounds.size(); ++k) std::inplace_merge(rows.begin(), at(k - 1), at(k), less);
}

}  // namespace osc::python
