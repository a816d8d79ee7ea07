// Run cost: price x predicted hours + extras, and the cheaper node is the one with the cheaper run.
#include <gtest/gtest.h>

#include "harness/score/cost.hpp"

namespace ns = nodeaudit::score;

TEST(RunCost, DearerNodeThatFinishesSoonerIsCheaper) {
  ns::CostOptions a, b;
  a.price_per_hour = 12;
  b.price_per_hour = 20;
  const ns::RunCost cost_a = ns::run_cost(a, 10, 1e9, "tokens");  // 12/h x 10 h = 120
  const ns::RunCost cost_b = ns::run_cost(b, 4, 1e9, "tokens");   // 20/h x 4 h = 80
  EXPECT_DOUBLE_EQ(cost_a.total, 120);
  EXPECT_DOUBLE_EQ(cost_b.total, 80);
  EXPECT_EQ(ns::cheapest({cost_a, cost_b}), 1);
  // 80 per 1e9 tokens = 0.08 per 1M tokens.
  EXPECT_DOUBLE_EQ(cost_b.per_million, 0.08);
}

TEST(RunCost, ExtrasAreAddedOncePerRun) {
  ns::CostOptions options;
  options.price_per_hour = 12;
  options.storage_cost = 5;
  options.transfer_cost = 2;
  options.ops_cost = 3;
  const ns::RunCost cost = ns::run_cost(options, 10, 2e6, "samples");
  EXPECT_DOUBLE_EQ(cost.compute_cost, 120);
  EXPECT_DOUBLE_EQ(cost.extras, 10);
  EXPECT_DOUBLE_EQ(cost.total, 130);
  EXPECT_DOUBLE_EQ(cost.per_million, 65);  // 130 / 2 M samples
  EXPECT_EQ(ns::cheapest({}), -1);
}
