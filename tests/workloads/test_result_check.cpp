// Result checkers: fingerprints, cross-rank comparison, tolerance compare,
// bf16 decoding and the median.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "reference_workloads/support/result_check.h"

namespace oscwl {
namespace {

TEST(Fingerprint, KnownFnv1aValues) {
    EXPECT_EQ(fingerprint("", 0), 0xcbf29ce484222325ull);
    EXPECT_EQ(fingerprint("a", 1), 0xaf63dc4c8601ec8cull);
    EXPECT_EQ(fingerprint("foobar", 6), 0x85944171f73967e8ull);
}

TEST(Fingerprint, OneFlippedBitChangesIt) {
    std::vector<float> v(1000, 1.5f);
    const auto a = fingerprint(v.data(), v.size() * 4);
    std::uint32_t bits;
    std::memcpy(&bits, &v[517], 4);
    bits ^= 1;
    std::memcpy(&v[517], &bits, 4);
    EXPECT_NE(a, fingerprint(v.data(), v.size() * 4));
}

TEST(CrossRank, IdenticalPassesAndDifferenceIsNamed) {
    std::vector<std::vector<std::uint64_t>> same(4, {11, 22, 33});
    EXPECT_FALSE(check_identical_across_ranks(same, {"g0", "g1", "g2"}).has_value());
    auto bad = same;
    bad[2][1] = 99;
    auto msg = check_identical_across_ranks(bad, {"gradient of layer 0", "gradient of layer 1", "x"});
    ASSERT_TRUE(msg.has_value());
    EXPECT_EQ(*msg, "gradient of layer 1 differs between rank 0 and rank 2");
    bad[2].pop_back();
    EXPECT_TRUE(check_identical_across_ranks(bad, {}).has_value());
    EXPECT_FALSE(check_identical_across_ranks({}, {}).has_value());
}

TEST(CompareClose, WithinAndOutsideTolerance) {
    std::vector<float> e{1.0f, -2.0f, 100.0f};
    EXPECT_TRUE(compare_close(e, {1.0005f, -2.001f, 100.09f}, 1e-3, 1e-3).ok);
    CloseResult r = compare_close(e, {1.0f, -2.0f, 100.5f}, 1e-3, 1e-3);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.worst_index, 2u);
    EXPECT_NEAR(r.max_abs_error, 0.5, 1e-6);
    EXPECT_NE(r.message().find("element 2"), std::string::npos);
}

TEST(CompareClose, NanFailsAndIsReported) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    CloseResult r = compare_close({1, 2, 3}, {1, nan, 3}, 1, 1);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.worst_index, 1u);
    EXPECT_FALSE(compare_close({nan}, {nan}, 1, 1).ok);
}

TEST(CompareClose, ToleranceScaledByTheLargestExpectedValue) {
    // rel 1%: atol = 0.01 * 100 = 1, so element 1 may be off by 1 + 0.01 * 1.
    const std::vector<float> want{100.0f, 1.0f, -50.0f};
    EXPECT_TRUE(compare_close_to_largest(want, {100.0f, 1.5f, -50.0f}, 0.01).ok);
    EXPECT_TRUE(compare_close_to_largest(want, {100.0f, 2.0f, -50.0f}, 0.01).ok);
    const CloseResult off = compare_close_to_largest(want, {100.0f, 2.1f, -50.0f}, 0.01);
    EXPECT_FALSE(off.ok);
    EXPECT_EQ(off.worst_index, 1u);
    // The same 0.5 error with the tolerance of element 1 alone fails.
    EXPECT_FALSE(compare_close(want, {100.0f, 1.5f, -50.0f}, 0.01, 0.0).ok);
    // The scale is the largest magnitude, a negative value included.
    EXPECT_TRUE(compare_close_to_largest({-200.0f, 0.0f}, {-200.0f, 1.9f}, 0.01).ok);
    EXPECT_FALSE(compare_close_to_largest({-200.0f, 0.0f}, {-200.0f, 2.1f}, 0.01).ok);
}

TEST(Bf16, DecodesKnownPatterns) {
    EXPECT_EQ(bf16_to_float(0x3F80), 1.0f);
    EXPECT_EQ(bf16_to_float(0xC000), -2.0f);
    EXPECT_EQ(bf16_to_float(0x3E80), 0.25f);
    EXPECT_TRUE(std::isinf(bf16_to_float(0x7F80)));
    const std::uint16_t raw[] = {0x3F80, 0x4040};  // 1, 3
    EXPECT_EQ(to_float(raw, 2, true), (std::vector<float>{1.0f, 3.0f}));
    const float f[] = {0.5f, 7.0f};
    EXPECT_EQ(to_float(f, 2, false), (std::vector<float>{0.5f, 7.0f}));
}

TEST(Median, OddEvenAndEmpty) {
    EXPECT_DOUBLE_EQ(median({5, 1, 3}), 3.0);
    EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
    EXPECT_DOUBLE_EQ(median({7}), 7.0);
    EXPECT_THROW(median({}), std::invalid_argument);
}

}  // namespace
}  // namespace oscwl
