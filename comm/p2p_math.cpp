#include "comm/p2p_math.hpp"

#include <algorithm>

namespace nodeaudit::comm {

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

std::vector<std::size_t> slow_pairs(const std::vector<double>& bandwidth_gbps, double fraction) {
  std::vector<std::size_t> slow;
  if (bandwidth_gbps.size() < 2) return slow;
  for (std::size_t i = 0; i < bandwidth_gbps.size(); ++i) {
    std::vector<double> others;
    for (std::size_t j = 0; j < bandwidth_gbps.size(); ++j)
      if (j != i) others.push_back(bandwidth_gbps[j]);
    if (bandwidth_gbps[i] < fraction * median_of(others)) slow.push_back(i);
  }
  return slow;
}

}  // namespace nodeaudit::comm
