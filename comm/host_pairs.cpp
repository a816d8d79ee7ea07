#include "comm/host_pairs.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "comm/p2p_math.hpp"

namespace nodeaudit::comm {

std::vector<std::vector<std::pair<int, int>>> round_robin_rounds(int hosts) {
  std::vector<std::vector<std::pair<int, int>>> rounds;
  if (hosts < 2) return rounds;
  const int n = hosts % 2 == 0 ? hosts : hosts + 1;  // an odd count gets a resting slot (index n-1)
  // Circle method: slot 0 stays, the others rotate by one each round.
  std::vector<int> slots(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) slots[static_cast<std::size_t>(i)] = i;
  for (int r = 0; r < n - 1; ++r) {
    std::vector<std::pair<int, int>> pairs;
    for (int i = 0; i < n / 2; ++i) {
      const int a = slots[static_cast<std::size_t>(i)], b = slots[static_cast<std::size_t>(n - 1 - i)];
      if (a < hosts && b < hosts) pairs.emplace_back(std::min(a, b), std::max(a, b));
    }
    rounds.push_back(std::move(pairs));
    std::rotate(slots.begin() + 1, slots.end() - 1, slots.end());
  }
  return rounds;
}

int pair_in_round(const std::vector<std::pair<int, int>>& round, int host) {
  for (std::size_t i = 0; i < round.size(); ++i)
    if (round[i].first == host || round[i].second == host) return static_cast<int>(i);
  return -1;
}

std::vector<int> pair_colors(const std::vector<std::pair<int, int>>& round, const std::vector<int>& host_of_rank) {
  std::vector<int> colors;
  for (const int host : host_of_rank) colors.push_back(pair_in_round(round, host));
  return colors;
}

std::vector<HostJudgement> judge_hosts(const std::vector<std::string>& names, const std::vector<PairFigure>& pairs,
                                       double factor) {
  std::vector<HostJudgement> judged;
  for (int h = 0; h < static_cast<int>(names.size()); ++h) {
    std::vector<double> mine, others;
    for (const PairFigure& p : pairs) (p.a == h || p.b == h ? mine : others).push_back(p.gbps);
    if (mine.empty()) continue;
    HostJudgement j;
    j.host = h;
    j.median_gbps = median_of(mine);
    j.others_median_gbps = median_of(others);
    if (others.empty() || j.median_gbps <= 0) {
      judged.push_back(j);
      continue;
    }
    j.times_below = j.others_median_gbps / j.median_gbps;
    j.slow = j.times_below >= factor;
    j.every_pair_slow = std::all_of(mine.begin(), mine.end(), [&](double v) { return v < j.others_median_gbps / factor; });
    const std::string& name = names[static_cast<std::size_t>(h)];
    if (j.slow) {
      std::string slow_paths;
      for (const PairFigure& p : pairs)
        if ((p.a == h || p.b == h) && p.gbps < j.others_median_gbps / factor)
          slow_paths += fmt::format("{}{}-{} {:.3g} GB/s", slow_paths.empty() ? "" : ", ", names[static_cast<std::size_t>(p.a)],
                                    names[static_cast<std::size_t>(p.b)], p.gbps);
      j.sentence = fmt::format("{}: {:.3g} GB/s (median of its {} pairs), {:.1f}x below the {:.3g} GB/s median of the pairs "
                               "without it; {}",
                               name, j.median_gbps, mine.size(), j.times_below, j.others_median_gbps,
                               j.every_pair_slow ? fmt::format("every pair with {} is slow: {}'s link or NIC", name, name)
                                                 : "slow paths: " + slow_paths);
    }
    judged.push_back(j);
  }
  return judged;
}

}  // namespace nodeaudit::comm
