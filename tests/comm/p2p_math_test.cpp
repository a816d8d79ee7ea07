// comm.p2p outlier rule: a pair under half the median of the other pairs is flagged.
#include <gtest/gtest.h>

#include "comm/p2p_math.hpp"

using namespace nodeaudit::comm;

TEST(P2pMath, MedianOddEvenEmpty) {
  EXPECT_DOUBLE_EQ(median_of({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(median_of({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median_of({}), 0.0);
}

TEST(P2pMath, FlagsOnlyThePairFarBelowTheOthers) {
  // Six NVLink pairs at ~300 GB/s and one PCIe-staged pair at 20 GB/s.
  const std::vector<double> rates{300, 310, 20, 295, 305, 299, 301};
  const auto slow = slow_pairs(rates, 0.5);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0], 2u);
}

TEST(P2pMath, BoundaryIsStrictlyBelowHalf) {
  // Others' median is 100: 50 is exactly half (not flagged), 49.9 is below (flagged).
  EXPECT_TRUE(slow_pairs({100, 100, 50}, 0.5).empty());
  EXPECT_EQ(slow_pairs({100, 100, 49.9}, 0.5), std::vector<std::size_t>{2});
}

TEST(P2pMath, NothingToCompareWithOnePair) {
  EXPECT_TRUE(slow_pairs({1.0}, 0.5).empty());
  EXPECT_TRUE(slow_pairs({}, 0.5).empty());
}

TEST(P2pMath, TwoPairsCompareWithEachOther) {
  EXPECT_EQ(slow_pairs({100, 10}, 0.5), std::vector<std::size_t>{1});
}
