// Bus factors, nccl-tests size accounting, the size schedule and the curve summaries.
#include <gtest/gtest.h>

#include "comm/collective_math.hpp"

using namespace nodeaudit::comm;

TEST(BusFactor, MatchesNcclTests) {
  EXPECT_DOUBLE_EQ(bus_factor(Collective::allreduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::allgather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::reducescatter, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::alltoall, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::broadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::allreduce, 1), 0.0);
}

TEST(Layout, AllGatherCountsTheGatheredBuffer) {
  const auto l = collective_layout(Collective::allgather, 1024, 4, 4);
  EXPECT_EQ(l.send_elements, 64u);
  EXPECT_EQ(l.recv_elements, 256u);
  EXPECT_EQ(l.size_bytes, 1024u);
  EXPECT_EQ(device_bytes_needed(l, 4), (64u + 256u) * 4);
}

TEST(Layout, ChunkedSizesRoundDownToRanks) {
  const auto l = collective_layout(Collective::reducescatter, 64, 3, 4);  // 16 floats -> 5 per rank
  EXPECT_EQ(l.chunk_elements, 5u);
  EXPECT_EQ(l.send_elements, 15u);
  EXPECT_EQ(l.size_bytes, 60u);
  EXPECT_EQ(collective_layout(Collective::alltoall, 8, 3, 4).chunk_elements, 0u);
}

TEST(Rates, AlgbwAndBusbw) {
  const auto f = rate_figures(Collective::allreduce, 1'000'000'000, 8, 0.5);
  EXPECT_DOUBLE_EQ(f.algbw_gbps, 2.0);
  EXPECT_DOUBLE_EQ(f.busbw_gbps, 2.0 * 1.75);
  EXPECT_DOUBLE_EQ(f.time_us, 500000.0);
}

TEST(Schedule, PowersOfTwoBoundedByMaxAndMemory) {
  auto s = size_schedule(8, 1 << 20, 1ull << 40, 0.8, Collective::allreduce, 2, 4);
  ASSERT_EQ(s.size(), 18u);  // 8 B .. 1 MiB
  EXPECT_EQ(s.front(), 8u);
  EXPECT_EQ(s.back(), 1u << 20);
  // allreduce needs 2 x size: 1 MiB free * 0.8 allows 256 KiB (512 KiB of buffers)
  s = size_schedule(8, 1 << 30, 1 << 20, 0.8, Collective::allreduce, 2, 4);
  EXPECT_EQ(s.back(), 256u << 10);
  // 3 ranks: 8 B (2 floats) cannot give each rank an element, so all-gather starts at 16 B
  s = size_schedule(8, 64, 1 << 20, 0.8, Collective::allgather, 3, 4);
  EXPECT_EQ(s.front(), 16u);
  EXPECT_TRUE(size_schedule(8, 64, 10, 0.8, Collective::allreduce, 2, 4).empty());
}

TEST(Curve, PeakAndSizeAt90Pct) {
  const std::vector<CurvePoint> curve = {{8, 0.1, 10}, {1024, 50, 20}, {4096, 95, 40}, {8192, 100, 80}, {16384, 98, 160}};
  EXPECT_DOUBLE_EQ(curve_peak_gbps(curve), 100);
  EXPECT_EQ(size_at_fraction_of_peak(curve, 0.9), 4096u);
  EXPECT_EQ(size_at_fraction_of_peak(curve, 1.0), 8192u);
  EXPECT_EQ(size_at_fraction_of_peak({}, 0.9), 0u);
}

TEST(Iterations, TargetDurationClamped) {
  EXPECT_EQ(iterations_for(0.001, 0.01, 1000), 10);
  EXPECT_EQ(iterations_for(1.0, 0.01, 1000), 1);
  EXPECT_EQ(iterations_for(1e-9, 0.01, 1000), 1000);
  EXPECT_EQ(iterations_for(0.0, 0.01, 1000), 1);
}

TEST(Names, RoundTrip) {
  for (auto kind : {Collective::allreduce, Collective::allgather, Collective::reducescatter, Collective::broadcast, Collective::alltoall})
    EXPECT_EQ(parse_collective(collective_name(kind)), kind);
  EXPECT_FALSE(parse_collective("reduce").has_value());
}
