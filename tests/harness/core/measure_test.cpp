// The measurement loop: warm-up discarded, repetition bounds, cancel, device-timed work, rates.
#include <gtest/gtest.h>

#include "harness/core/measure.hpp"

using namespace nodeaudit;

TEST(Measure, WarmupIsDiscardedAndMinimumHonoured) {
  int calls = 0;
  const RepeatPolicy p{.warmup = 2, .min_repetitions = 5, .max_repetitions = 5, .budget_s = 0};
  const Measurement m = run_repetitions(p, [&] { ++calls; return Work{.bytes = 1}; }, {});
  EXPECT_EQ(calls, 7);
  EXPECT_EQ(m.seconds.size(), 5u);
  EXPECT_FALSE(m.cancelled);
}

TEST(Measure, MaximumCapsTheCount) {
  const RepeatPolicy p{.warmup = 0, .min_repetitions = 1, .max_repetitions = 3, .budget_s = 1e9};
  EXPECT_EQ(run_repetitions(p, [] { return Work{}; }, {}).seconds.size(), 3u);
}

TEST(Measure, StopRequestEndsTheLoop) {
  int calls = 0;
  const RepeatPolicy p{.warmup = 0, .min_repetitions = 100, .max_repetitions = 100};
  const Measurement m = run_repetitions(p, [&] { ++calls; return Work{}; }, [&] { return calls >= 4; });
  EXPECT_EQ(m.seconds.size(), 4u);
  EXPECT_TRUE(m.cancelled);
}

TEST(Measure, DeviceTimeReplacesHostTime) {
  const RepeatPolicy p{.warmup = 0, .min_repetitions = 2, .max_repetitions = 2};
  const Measurement m = run_repetitions(p, [] { return Work{.bytes = 4e9, .flops = 2e12, .ops = 10, .elapsed_s = 2.0}; }, {});
  ASSERT_EQ(m.seconds.size(), 2u);
  EXPECT_DOUBLE_EQ(m.seconds[0], 2.0);
  EXPECT_EQ(rate_samples(m, RateKind::gb_per_s), (std::vector<double>{2.0, 2.0}));
  EXPECT_EQ(rate_samples(m, RateKind::tflop_per_s), (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(rate_samples(m, RateKind::ops_per_s), (std::vector<double>{5.0, 5.0}));
  EXPECT_STREQ(rate_unit(RateKind::gb_per_s), "GB/s");
}

TEST(Measure, ZeroTimeRepetitionGivesNoRate) {
  Measurement m;
  m.seconds = {0.0, 1.0};
  m.work = {Work{.bytes = 1e9}, Work{.bytes = 1e9}};
  EXPECT_EQ(rate_samples(m, RateKind::gb_per_s), (std::vector<double>{1.0}));
}

TEST(Measure, TargetCvStopsEarlyOnStableTimings) {
  int calls = 0;
  const RepeatPolicy p{.warmup = 0, .min_repetitions = 3, .max_repetitions = 50, .budget_s = 1e9, .target_cv = 0.01};
  run_repetitions(p, [&] { ++calls; return Work{.elapsed_s = 1.0}; }, {});
  EXPECT_EQ(calls, 3);
}
