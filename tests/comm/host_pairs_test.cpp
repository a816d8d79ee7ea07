// --pairs' schedule and judgement, on hand-made figures.
#include <gtest/gtest.h>

#include <set>

#include "comm/host_pairs.hpp"

using namespace nodeaudit::comm;

namespace {

void expect_every_pair_once(int hosts) {
  const auto rounds = round_robin_rounds(hosts);
  EXPECT_EQ(static_cast<int>(rounds.size()), hosts % 2 == 0 ? hosts - 1 : hosts) << hosts << " hosts";
  std::set<std::pair<int, int>> met;
  for (const auto& round : rounds) {
    std::set<int> busy;
    for (const auto& [a, b] : round) {
      EXPECT_LT(a, b);
      EXPECT_TRUE(busy.insert(a).second && busy.insert(b).second) << "a host twice in one round";
      EXPECT_TRUE(met.insert({a, b}).second) << a << "-" << b << " met twice";
    }
  }
  EXPECT_EQ(met.size(), static_cast<std::size_t>(hosts * (hosts - 1) / 2)) << hosts << " hosts";
}

}  // namespace

TEST(HostPairs, RoundRobinMeetsEveryPairOnceWithEachHostOncePerRound) {
  for (int hosts : {2, 3, 4, 5, 8, 9, 64}) expect_every_pair_once(hosts);
  EXPECT_TRUE(round_robin_rounds(1).empty());
  EXPECT_EQ(round_robin_rounds(1000).size(), 999u);  // N-1 rounds: the wall time grows with N, not N^2
}

// The NCCL collectives' pairwise mode: 3 hosts of 2 GPUs each (ranks 0-5, two per host). Each
// round, the 4 ranks of the paired hosts share one communicator and the resting host's 2 wait.
TEST(HostPairs, EveryGpuOfBothHostsJoinsItsPairsCommunicator) {
  const std::vector<int> host_of_rank = {0, 0, 1, 1, 2, 2};
  std::set<std::pair<int, int>> met;
  for (const auto& round : round_robin_rounds(3)) {
    const std::vector<int> colors = pair_colors(round, host_of_rank);
    ASSERT_EQ(colors.size(), host_of_rank.size());
    ASSERT_EQ(round.size(), 1u);
    const auto [a, b] = round.front();
    met.insert({a, b});
    for (std::size_t rank = 0; rank < colors.size(); ++rank) {
      const bool paired = host_of_rank[rank] == a || host_of_rank[rank] == b;
      EXPECT_EQ(colors[rank], paired ? 0 : -1) << "rank " << rank << " in round " << a << "-" << b;
    }
  }
  EXPECT_EQ(met.size(), 3u);
  // 4 hosts: 2 pairs a round at once, each with its own color.
  const std::vector<int> four = {0, 1, 2, 3};
  for (const auto& round : round_robin_rounds(4)) {
    const std::vector<int> colors = pair_colors(round, four);
    EXPECT_EQ(std::set<int>(colors.begin(), colors.end()), (std::set<int>{0, 1}));
    for (int host = 0; host < 4; ++host) EXPECT_EQ(colors[host], pair_in_round(round, host));
  }
}

TEST(HostPairs, AHostWhosePairsAreAllSlowIsNamedAsItsOwnLink) {
  const std::vector<std::string> names = {"h1", "h2", "h3"};
  const auto judged = judge_hosts(names, {{0, 1, 1.49}, {0, 2, 0.30}, {1, 2, 0.32}}, 2.0);
  ASSERT_EQ(judged.size(), 3u);
  EXPECT_FALSE(judged[0].slow);
  EXPECT_FALSE(judged[1].slow);
  EXPECT_TRUE(judged[2].slow);
  EXPECT_TRUE(judged[2].every_pair_slow);
  EXPECT_EQ(judged[2].sentence,
            "h3: 0.31 GB/s (median of its 2 pairs), 4.8x below the 1.49 GB/s median of the pairs without it; every pair "
            "with h3 is slow: h3's link or NIC");
}

TEST(HostPairs, OneSlowPathIsNotASlowHost) {
  const std::vector<std::string> names = {"h1", "h2", "h3", "h4"};
  const auto judged = judge_hosts(names, {{0, 1, 0.2}, {0, 2, 1.5}, {0, 3, 1.5}, {1, 2, 1.4}, {1, 3, 1.6}, {2, 3, 1.5}}, 2.0);
  for (const auto& j : judged) EXPECT_FALSE(j.slow) << names[static_cast<std::size_t>(j.host)] << ": " << j.times_below;
}

TEST(HostPairs, TwoHostsHaveNothingToCompare) {
  const auto judged = judge_hosts({"h1", "h2"}, {{0, 1, 0.1}}, 2.0);
  for (const auto& j : judged) EXPECT_FALSE(j.slow);
}
