// Drop, throttle share, spread and the slow-GPU rule.
#include "stress_math.hpp"

#include <algorithm>

namespace nodeaudit::gpu {

double drop_pct(const std::vector<double>& interval_tflops) {
  if (interval_tflops.size() < 2 || interval_tflops.front() <= 0) return 0;
  return (interval_tflops.front() - interval_tflops.back()) / interval_tflops.front() * 100.0;
}

double throttle_pct(const std::vector<std::optional<unsigned long long>>& masks) {
  std::size_t counted = 0, throttled = 0;
  for (const auto& mask : masks) {
    if (!mask) continue;
    ++counted;
    throttled += (*mask & throttling_bits) != 0;
  }
  return counted ? 100.0 * static_cast<double>(throttled) / static_cast<double>(counted) : 0.0;
}

double spread_pct(const std::vector<double>& per_gpu) {
  if (per_gpu.size() < 2) return 0;
  const auto [lo, hi] = std::minmax_element(per_gpu.begin(), per_gpu.end());
  return *hi > 0 ? (*hi - *lo) / *hi * 100.0 : 0.0;
}

std::map<int, double> slower_than_fastest(const std::map<int, double>& per_gpu, double threshold_pct) {
  std::map<int, double> slow;
  double fastest = 0;
  for (const auto& [gpu, value] : per_gpu) fastest = std::max(fastest, value);
  if (fastest <= 0) return slow;
  for (const auto& [gpu, value] : per_gpu) {
    const double slower = (fastest - value) / fastest * 100.0;
    if (slower > threshold_pct) slow[gpu] = slower;
  }
  return slow;
}

}  // namespace nodeaudit::gpu
