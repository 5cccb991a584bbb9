// Disjoint sets over 0..n-1, for the all-to-all exchanges that matched
// sends link together (p2p_match.cpp).
// The smaller index becomes the root, so a set's root is its first member in
// (device, operation) order whichever way the links arrive.
#pragma once

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <vector>

namespace osc::crossrank {

class UnionFind {
public:
    explicit UnionFind(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), size_t{0}); }
    size_t find(size_t x) {
        while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
        return x;
    }
    void unite(size_t a, size_t b) {
        a = find(a);
        b = find(b);
        if (a != b) parent_[std::max(a, b)] = std::min(a, b);
    }

private:
    std::vector<size_t> parent_;
};

}  // namespace osc::crossrank
