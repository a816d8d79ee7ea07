// Expected values equal what each collective computes from the inputs (a CPU reference), and the
// check counts exactly the corrupted elements.
#include <gtest/gtest.h>

#include <vector>

#include "comm/verify.hpp"

using namespace nodeaudit::comm;

namespace {
constexpr int ranks = 4;
constexpr std::uint64_t chunk = 70;  // > 61 so the pattern wraps inside a chunk

std::vector<std::vector<float>> inputs(std::uint64_t elements) {
  std::vector<std::vector<float>> in(ranks, std::vector<float>(elements));
  for (int r = 0; r < ranks; ++r) fill_inputs(std::span<float>(in[r]), r);
  return in;
}
}  // namespace

TEST(Expected, AllReduceIsTheSumOfInputs) {
  const auto in = inputs(200);
  for (std::uint64_t i = 0; i < 200; ++i) {
    float sum = 0;
    for (int r = 0; r < ranks; ++r) sum += in[r][i];
    for (int r = 0; r < ranks; ++r) EXPECT_EQ(expected_value(ExpectKind::allreduce, r, ranks, 200, i), sum);
  }
}

TEST(Expected, AllGatherConcatenatesChunks) {
  const auto in = inputs(chunk);
  for (std::uint64_t i = 0; i < chunk * ranks; ++i)
    EXPECT_EQ(expected_value(ExpectKind::allgather, 2, ranks, chunk, i), in[i / chunk][i % chunk]);
}

TEST(Expected, ReduceScatterSumsOwnChunk) {
  const auto in = inputs(chunk * ranks);
  for (int r = 0; r < ranks; ++r)
    for (std::uint64_t j = 0; j < chunk; ++j) {
      float sum = 0;
      for (int s = 0; s < ranks; ++s) sum += in[s][r * chunk + j];
      EXPECT_EQ(expected_value(ExpectKind::reducescatter, r, ranks, chunk, j), sum);
    }
}

TEST(Expected, AllToAllTransposesChunks) {
  const auto in = inputs(chunk * ranks);
  for (int r = 0; r < ranks; ++r)
    for (std::uint64_t i = 0; i < chunk * ranks; ++i)  // rank r's chunk s comes from rank s's chunk r
      EXPECT_EQ(expected_value(ExpectKind::alltoall, r, ranks, chunk, i), in[i / chunk][r * chunk + i % chunk]);
}

TEST(Expected, BroadcastCopiesRoot) {
  const auto in = inputs(100);
  for (std::uint64_t i = 0; i < 100; ++i) EXPECT_EQ(expected_value(ExpectKind::broadcast, 3, ranks, 100, i), in[0][i]);
}

TEST(Expected, InputsDifferAcrossRanks) {
  EXPECT_NE(input_value(0, 5), input_value(1, 5));
  EXPECT_NE(input_value(0, 5), input_value(0, 6));
}

TEST(Verify, CountsCorruptedElements) {
  std::vector<float> recv(1000);
  for (std::uint64_t i = 0; i < recv.size(); ++i) recv[i] = expected_value(ExpectKind::allreduce, 0, ranks, 1000, i);
  EXPECT_EQ(count_wrong(recv, ExpectKind::allreduce, 0, ranks, 1000), 0u);
  recv[3] += 1;
  recv[999] = 0;
  EXPECT_EQ(count_wrong(recv, ExpectKind::allreduce, 0, ranks, 1000), 2u);
}

TEST(Verify, HostFabricSums) {
  std::vector<double> sums(300);
  for (std::uint64_t i = 0; i < sums.size(); ++i) sums[i] = 3 + 2.0 * static_cast<double>(i % 61);  // 2 ranks
  EXPECT_EQ(count_wrong_sums(sums, 2), 0u);
  sums[7] = 0;
  EXPECT_EQ(count_wrong_sums(sums, 2), 1u);
  EXPECT_EQ(count_wrong_sums(sums, 3), 300u);
}

TEST(Expected, LargeRankCountsStayExact) {
  // 4096 ranks: the largest sum is below 2^24, so float holds it exactly
  EXPECT_EQ(sum_of_inputs(4096, 60), 4096.0f * 4097 / 2 + 4096.0f * 60);
}
