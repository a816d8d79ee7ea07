// Latency histogram: exact below 64 ns, within 1/64 above, percentiles by nearest rank.
#include <gtest/gtest.h>

#include "io/latency_histogram.hpp"

using nodeaudit::io::LatencyHistogram;

TEST(LatencyHistogram, SmallValuesAreExact) {
  LatencyHistogram h;
  for (std::uint64_t v = 1; v <= 10; ++v) h.record(v);
  EXPECT_EQ(h.count(), 10u);
  EXPECT_DOUBLE_EQ(h.percentile_ns(0.5), 5);
  EXPECT_DOUBLE_EQ(h.percentile_ns(0.9), 9);
  EXPECT_DOUBLE_EQ(h.percentile_ns(1.0), 10);
  EXPECT_EQ(h.max_ns(), 10u);
}

TEST(LatencyHistogram, UniformMicrosecondsWithinBucketError) {
  LatencyHistogram h;
  for (std::uint64_t us = 1; us <= 1000; ++us) h.record(us * 1000);
  EXPECT_NEAR(h.percentile_ns(0.50), 500'000, 500'000 / 64.0);
  EXPECT_NEAR(h.percentile_ns(0.90), 900'000, 900'000 / 64.0);
  EXPECT_NEAR(h.percentile_ns(0.99), 990'000, 990'000 / 64.0);
  EXPECT_NEAR(h.percentile_ns(0.999), 999'000, 999'000 / 64.0);
  EXPECT_EQ(h.max_ns(), 1'000'000u);
}

TEST(LatencyHistogram, TailIsSeparatedFromBody) {
  LatencyHistogram h;
  for (int i = 0; i < 990; ++i) h.record(100'000);   // 100 us
  for (int i = 0; i < 10; ++i) h.record(50'000'000);  // 50 ms
  EXPECT_NEAR(h.percentile_ns(0.99), 100'000, 100'000 / 64.0);
  EXPECT_NEAR(h.percentile_ns(0.991), 50'000'000, 50'000'000 / 64.0);
  EXPECT_LE(h.percentile_ns(1.0), 50'000'000);
}

TEST(LatencyHistogram, BucketsCoverEveryValueOnce) {
  for (std::uint64_t v : {0ull, 63ull, 64ull, 127ull, 128ull, 1000ull, 123456789ull, 1ull << 41}) {
    const int b = LatencyHistogram::bucket_of(v);
    EXPECT_LE(LatencyHistogram::bucket_low(b), v) << v;
    EXPECT_GT(LatencyHistogram::bucket_low(b) + LatencyHistogram::bucket_width(b), v) << v;
  }
  EXPECT_EQ(LatencyHistogram::bucket_of(~0ull), LatencyHistogram::bucket_count - 1);
}

TEST(LatencyHistogram, MergeAddsCountsAndKeepsMax) {
  LatencyHistogram a, b;
  a.record(10), a.record(20);
  b.record(30), b.record(1'000'000);
  a.merge(b);
  EXPECT_EQ(a.count(), 4u);
  EXPECT_EQ(a.max_ns(), 1'000'000u);
  EXPECT_DOUBLE_EQ(a.percentile_ns(0.5), 20);
  EXPECT_TRUE(LatencyHistogram{}.percentile_ns(0.5) == 0);
}
