// The change rule's t distribution against published table values, and its interval against sums
// worked by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "harness/core/change_test.hpp"

using nodeaudit::t_cdf;
using nodeaudit::t_quantile;
using nodeaudit::test_change;

TEST(ChangeTest, TQuantileMatchesPublishedTables) {
  // Two-sided 99% (p = 0.995) and 95% (p = 0.975) critical values, from any statistics table.
  EXPECT_NEAR(t_quantile(0.995, 1), 63.657, 5e-4);
  EXPECT_NEAR(t_quantile(0.995, 2), 9.925, 5e-4);
  EXPECT_NEAR(t_quantile(0.995, 4), 4.604, 5e-4);
  EXPECT_NEAR(t_quantile(0.995, 30), 2.750, 5e-4);
  EXPECT_NEAR(t_quantile(0.995, 40), 2.704, 5e-4);
  EXPECT_NEAR(t_quantile(0.995, 120), 2.617, 5e-4);
  EXPECT_NEAR(t_quantile(0.975, 10), 2.228, 5e-4);
  EXPECT_NEAR(t_quantile(0.95, 5), 2.015, 5e-4);
  // Very many degrees of freedom approach the normal quantile 2.5758.
  EXPECT_NEAR(t_quantile(0.995, 1e6), 2.5758, 5e-4);
  EXPECT_NEAR(t_quantile(0.005, 2), -9.925, 5e-4);
  EXPECT_TRUE(std::isnan(t_quantile(1.0, 3)));
}

TEST(ChangeTest, TCdfHasItsClosedForms) {
  // One degree of freedom is the Cauchy distribution: F(1) = 3/4. Two: F(t) = 1/2 + t / (2 sqrt(2 + t^2)).
  EXPECT_NEAR(t_cdf(1, 1), 0.75, 1e-12);
  EXPECT_NEAR(t_cdf(2, 2), 0.5 + 2 / (2 * std::sqrt(6.0)), 1e-12);
  EXPECT_NEAR(t_cdf(-2, 2), 0.5 - 2 / (2 * std::sqrt(6.0)), 1e-12);
  EXPECT_NEAR(t_cdf(0, 7), 0.5, 1e-15);
}

TEST(ChangeTest, TwoRunsASideNeedAWideGap) {
  // Means 11 and 15; squares 2 + 2 about them; df 2; s = sqrt(2); half width 9.925 * sqrt(2) * 1 = 14.04,
  // over the baseline mean 11: 127.6%. A 36.4% change is not called.
  const std::vector<double> baseline = {10, 12}, candidate = {14, 16};
  const auto test = test_change(baseline, candidate);
  EXPECT_EQ(test.degrees_of_freedom, 2);
  EXPECT_NEAR(test.change, 4.0 / 11, 1e-12);
  EXPECT_NEAR(test.pooled_sd, std::sqrt(2.0), 1e-12);
  EXPECT_NEAR(test.half_width, 9.9248 * std::sqrt(2.0) / 11, 1e-4);
  EXPECT_FALSE(test.significant());
}

TEST(ChangeTest, ThreeRunsASideCallATenPercentGap) {
  // Means 100 and 110; s = 1; df 4; half width 4.604 * sqrt(2/3) = 3.759 -> 3.76% of 100: 10% is called.
  const std::vector<double> baseline = {100, 101, 99}, candidate = {110, 111, 109};
  const auto test = test_change(baseline, candidate);
  EXPECT_NEAR(test.half_width, 4.6041 * std::sqrt(2.0 / 3) / 100, 1e-5);
  EXPECT_TRUE(test.significant());
  EXPECT_NE(test.statistic().find("99% t-interval of the difference of means, 3 + 3 runs: +10.0% +/- 3.8%"),
            std::string::npos)
      << test.statistic();
}

TEST(ChangeTest, OneRunEachSideMeasuresNoScatter) {
  const std::vector<double> baseline = {100}, candidate = {150};
  const auto test = test_change(baseline, candidate);
  EXPECT_FALSE(test.measured());
  EXPECT_FALSE(test.significant());
  // One run against three still has two degrees of freedom from the three.
  const std::vector<double> three = {149, 150, 151};
  EXPECT_EQ(test_change(baseline, three).degrees_of_freedom, 2);
}

TEST(ChangeTest, SmallestCallableChangeIsTheHalfWidth) {
  // 2% scatter, five runs against one: t(0.995, 4) * 2% * sqrt(1/5 + 1) = 10.09%.
  EXPECT_NEAR(nodeaudit::smallest_callable_change(0.02, 5, 1), 4.6041 * 0.02 * std::sqrt(1.2), 1e-5);
  EXPECT_TRUE(std::isinf(nodeaudit::smallest_callable_change(0.02, 1, 1)));
}
