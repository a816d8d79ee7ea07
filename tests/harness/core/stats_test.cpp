// Summary statistics against values computed by hand.
#include <gtest/gtest.h>

#include <vector>

#include "harness/core/stats.hpp"

using nodeaudit::percentile;
using nodeaudit::summarize;

TEST(Stats, SummaryOfFiveValues) {
  const std::vector<double> v = {4, 1, 3, 2, 5};
  const auto s = summarize(v);
  EXPECT_EQ(s.n, 5u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.median, 3);
  // Sample variance: (4+1+0+1+4)/4 = 2.5.
  EXPECT_NEAR(s.stdev, 1.5811388300841898, 1e-12);
  EXPECT_NEAR(s.cv, 1.5811388300841898 / 3, 1e-12);
  // Type-7 percentiles: position q*(n-1) = 0.2 -> 1 + 0.2*(2-1) = 1.2; 3.8 -> 4.8.
  EXPECT_NEAR(s.p5, 1.2, 1e-12);
  EXPECT_NEAR(s.p95, 4.8, 1e-12);
  // Fewer than 6 samples: the median CI is the full range.
  EXPECT_DOUBLE_EQ(s.ci95_lo, 1);
  EXPECT_DOUBLE_EQ(s.ci95_hi, 5);
}

TEST(Stats, EvenCountMedianInterpolates) {
  const std::vector<double> v = {10, 20, 30, 40};
  EXPECT_DOUBLE_EQ(summarize(v).median, 25);
  EXPECT_DOUBLE_EQ(percentile(v, 0.25), 17.5);
}

TEST(Stats, SingleValueHasNoSpread) {
  const std::vector<double> v = {7.5};
  const auto s = summarize(v);
  EXPECT_EQ(s.n, 1u);
  EXPECT_DOUBLE_EQ(s.median, 7.5);
  EXPECT_DOUBLE_EQ(s.stdev, 0);
  EXPECT_DOUBLE_EQ(s.cv, 0);
  EXPECT_DOUBLE_EQ(s.ci95_lo, 7.5);
  EXPECT_DOUBLE_EQ(s.ci95_hi, 7.5);
}

TEST(Stats, EmptyInputIsAllZero) {
  const auto s = summarize(std::vector<double>{});
  EXPECT_EQ(s.n, 0u);
  EXPECT_DOUBLE_EQ(s.median, 0);
}

TEST(Stats, MedianConfidenceRanksMatchBinomialTable) {
  // Exact binomial(100, 1/2) 95% interval of the median: the 40th and 61st order statistics.
  auto r = nodeaudit::median_ci95_ranks(100);
  EXPECT_EQ(r.lo, 39u);
  EXPECT_EQ(r.hi, 60u);
  // n = 10: ranks 2 and 9 (1-based), coverage 97.9%.
  r = nodeaudit::median_ci95_ranks(10);
  EXPECT_EQ(r.lo, 1u);
  EXPECT_EQ(r.hi, 8u);
}

TEST(Stats, ConfidenceIntervalUsesOrderStatistics) {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  const auto s = summarize(v);
  EXPECT_DOUBLE_EQ(s.ci95_lo, 40);
  EXPECT_DOUBLE_EQ(s.ci95_hi, 61);
  EXPECT_DOUBLE_EQ(s.median, 50.5);
}
