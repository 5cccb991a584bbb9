// python/src/sorted_runs.h against std::stable_sort: rows nearly in order
// (a few local swaps), rows far out of order (past the insertion budget),
// and runs merged, with equal keys told apart by their place.
#include "python/src/sorted_runs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace {

struct Row {
    int key;
    int place;  // where it was before sorting: what a stable sort keeps among equal keys
    bool operator==(const Row&) const = default;
};

bool byKey(const Row& a, const Row& b) { return a.key < b.key; }

std::vector<Row> numbered(const std::vector<int>& keys) {
    std::vector<Row> rows;
    for (size_t i = 0; i < keys.size(); ++i) rows.push_back({keys[i], static_cast<int>(i)});
    return rows;
}

std::vector<int> nearlyOrdered(std::mt19937& random, size_t n) {
    std::vector<int> keys;
    for (size_t i = 0; i < n; ++i) keys.push_back(static_cast<int>(i / 3));  // ties of three
    for (size_t i = 1; i < n; i += 7) std::swap(keys[i - 1], keys[i]);       // local inversions
    if (n > 10) std::swap(keys[random() % n], keys[random() % n]);           // one far apart
    return keys;
}

TEST(SortedRuns, NearlyOrderedRowsSortAsAStableSortDoes) {
    std::mt19937 random(7);
    for (size_t n : {0, 1, 2, 5, 64, 1000}) {
        std::vector<Row> rows = numbered(nearlyOrdered(random, n));
        std::vector<Row> want = rows;
        std::stable_sort(want.begin(), want.end(), byKey);
        osc::python::sortNearlyOrdered(rows.begin(), rows.end(), byKey);
        EXPECT_EQ(rows, want) << n;
    }
}

TEST(SortedRuns, RowsPastTheBudgetOfMovesSortAsAStableSortDoes) {
    // Descending keys with ties: about n^2 / 2 moves, far past 8n + 64.
    std::vector<int> keys;
    for (int i = 2000; i > 0; --i) keys.push_back(i / 4);
    std::vector<Row> rows = numbered(keys);
    std::vector<Row> want = rows;
    std::stable_sort(want.begin(), want.end(), byKey);
    osc::python::sortNearlyOrdered(rows.begin(), rows.end(), byKey);
    EXPECT_EQ(rows, want);
    std::mt19937 random(11);
    std::vector<int> shuffled(3000);
    for (int& k : shuffled) k = static_cast<int>(random() % 100);
    rows = numbered(shuffled);
    want = rows;
    std::stable_sort(want.begin(), want.end(), byKey);
    osc::python::sortNearlyOrdered(rows.begin(), rows.end(), byKey);
    EXPECT_EQ(rows, want);
}

TEST(SortedRuns, RunsMergedAsOneStableSortOfThemAll) {
    std::mt19937 random(3);
    std::vector<int> keys;
    std::vector<size_t> bounds{0};
    for (size_t run : {300, 0, 1, 500, 40}) {  // an empty run too
        const std::vector<int> part = nearlyOrdered(random, run);
        keys.insert(keys.end(), part.begin(), part.end());
        bounds.push_back(keys.size());
    }
    std::vector<Row> rows = numbered(keys);
    std::vector<Row> want = rows;
    std::stable_sort(want.begin(), want.end(), byKey);
    osc::python::stableSortRuns(rows, bounds, byKey);
    EXPECT_EQ(rows, want);
}

}  // namespace
