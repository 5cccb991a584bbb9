// Interval algebra, checked by hand-worked cases and against a 1-ns cell
// model on random inputs (independent of the sweep implementation).
#include "analyzer/metrics/intervals.h"

#include <gtest/gtest.h>

#include <random>

namespace osc {
namespace {

constexpr TimeNs kSpan = 120;

std::vector<bool> cells(const std::vector<Interval>& v) {
    std::vector<bool> c(kSpan, false);
    for (const auto& i : v)
        for (TimeNs t = std::max<TimeNs>(i.start, 0); t < std::min(i.end, kSpan); ++t) c[static_cast<size_t>(t)] = true;
    return c;
}

// A canonical set: sorted, non-empty, disjoint and non-touching.
void expectCanonical(const IntervalSet& s) {
    for (size_t i = 0; i < s.size(); ++i) {
        EXPECT_LT(s[i].start, s[i].end);
        if (i) {
            EXPECT_GT(s[i].start, s[i - 1].end);
        }
    }
}

std::vector<Interval> randomIntervals(std::mt19937& rng, int n) {
    std::uniform_int_distribution<TimeNs> at(0, kSpan - 1), len(-3, 20);
    std::vector<Interval> v;
    for (int i = 0; i < n; ++i) {
        const TimeNs s = at(rng);
        v.push_back({s, std::min(kSpan, s + len(rng))});  // some empty, some inverted
    }
    return v;
}

TEST(Intervals, UnionMergesOverlappingAndTouchingAndDropsEmpty) {
    const IntervalSet u = unionOf({{10, 20}, {0, 5}, {5, 8}, {15, 30}, {40, 40}, {50, 45}});
    EXPECT_EQ(u, (IntervalSet{{0, 8}, {10, 30}}));
    EXPECT_EQ(totalLength(u), 28);
}

TEST(Intervals, SetOperationsByHand) {
    const IntervalSet a{{0, 10}, {20, 30}}, b{{5, 25}};
    EXPECT_EQ(intersect(a, b), (IntervalSet{{5, 10}, {20, 25}}));
    EXPECT_EQ(subtract(a, b), (IntervalSet{{0, 5}, {25, 30}}));
    EXPECT_EQ(subtract(b, a), (IntervalSet{{10, 20}}));
    EXPECT_EQ(unite(a, b), (IntervalSet{{0, 30}}));
    EXPECT_EQ(clip(a, {8, 22}), (IntervalSet{{8, 10}, {20, 22}}));
    EXPECT_EQ(lengthWithin(a, {8, 22}), 4);
    EXPECT_TRUE(clip(a, {22, 8}).empty());
}

TEST(Intervals, BuilderHandlesUnsortedInput) {
    IntervalSetBuilder b;
    for (Interval i : std::vector<Interval>{{10, 20}, {30, 40}, {0, 12}, {25, 26}, {39, 50}, {7, 7}}) b.add(i);
    EXPECT_EQ(b.finish(), (IntervalSet{{0, 20}, {25, 26}, {30, 50}}));
}

TEST(CoverageIndex, CoveredByHand) {
    const CoverageIndex c(IntervalSet{{0, 10}, {20, 30}, {40, 45}});
    EXPECT_EQ(c.total(), 25);
    EXPECT_EQ(c.covered(5, 25), 10);
    EXPECT_EQ(c.covered(-100, 100), 25);
    EXPECT_EQ(c.covered(10, 20), 0);
    EXPECT_EQ(c.covered(42, 43), 1);
    EXPECT_EQ(c.covered(30, 10), 0);
    EXPECT_EQ(CoverageIndex().covered(0, 10), 0);
}

TEST(Intervals, RandomAgainstCells) {
    std::mt19937 rng(1234);
    for (int round = 0; round < 300; ++round) {
        const auto ra = randomIntervals(rng, round % 9);
        const auto rb = randomIntervals(rng, round % 7);
        IntervalSetBuilder builder;
        for (const auto& i : ra) builder.add(i);
        const IntervalSet a = unionOf(ra), b = unionOf(rb);
        const IntervalSet built = builder.finish();
        EXPECT_EQ(built, a);
        expectCanonical(a);
        const auto ca = cells(ra), cb = cells(rb);
        std::vector<bool> cu(kSpan), ci(kSpan), cd(kSpan);
        for (size_t t = 0; t < kSpan; ++t) {
            cu[t] = ca[t] || cb[t];
            ci[t] = ca[t] && cb[t];
            cd[t] = ca[t] && !cb[t];
        }
        EXPECT_EQ(cells(a), ca);
        const auto u = unite(a, b), in = intersect(a, b), d = subtract(a, b);
        expectCanonical(u);
        expectCanonical(in);
        expectCanonical(d);
        EXPECT_EQ(cells(u), cu);
        EXPECT_EQ(cells(in), ci);
        EXPECT_EQ(cells(d), cd);

        const CoverageIndex idx(a);
        std::uniform_int_distribution<TimeNs> at(-5, kSpan + 5);
        for (int q = 0; q < 20; ++q) {
            const TimeNs x = at(rng), y = at(rng);
            TimeNs expected = 0;
            for (TimeNs t = std::max<TimeNs>(x, 0); t < std::min(y, kSpan); ++t) expected += ca[static_cast<size_t>(t)];
            EXPECT_EQ(idx.covered(x, y), expected) << "[" << x << "," << y << ")";
            EXPECT_EQ(lengthWithin(a, {x, y}), expected);
            EXPECT_EQ(totalLength(clip(a, {x, y})), expected);
        }
    }
}

TEST(CoverageWalker, ForwardWalkAgainstCells) {
    // Times that only grow, by steps from 0 (the same pixel column twice) to
    // far past several intervals (the gallop), before and past the set.
    std::mt19937 rng(99);
    std::uniform_int_distribution<TimeNs> step(0, 25);
    for (int round = 0; round < 300; ++round) {
        const auto raw = randomIntervals(rng, round % 11);
        const auto c = cells(raw);
        const CoverageIndex index(unionOf(raw));
        CoverageWalker walker(index);
        TimeNs expected = 0;  // covered cells before t
        for (TimeNs t = -10, counted = -10; t < kSpan + 20; t += step(rng)) {
            for (; counted < t; ++counted)
                if (counted >= 0 && counted < kSpan) expected += c[static_cast<size_t>(counted)];
            ASSERT_EQ(walker.coveredBefore(t), expected) << "round " << round << " t=" << t;
        }
    }
}

TEST(CoverageWalker, CoveredFromGrowingStartsAgainstCells) {
    // Kernels in start order: starts that only grow, ends anywhere after
    // them (short and long kernels), some empty or reversed.
    std::mt19937 rng(7);
    std::uniform_int_distribution<TimeNs> step(0, 9), length(-3, 40);
    for (int round = 0; round < 300; ++round) {
        const auto raw = randomIntervals(rng, round % 11);
        const auto c = cells(raw);
        const CoverageIndex index(unionOf(raw));
        CoverageWalker walker(index);
        for (TimeNs a = -10; a < kSpan + 20; a += step(rng)) {
            const TimeNs b = a + length(rng);
            TimeNs expected = 0;
            for (TimeNs t = std::max<TimeNs>(a, 0); t < std::min(b, kSpan); ++t) expected += c[static_cast<size_t>(t)];
            ASSERT_EQ(walker.covered(a, b), expected) << "round " << round << " [" << a << "," << b << ")";
        }
    }
}

}  // namespace
}  // namespace osc
