// Drop, throttle share, spread, the slow-GPU rule and memory health changes during the soak.
#include "kernels/gpu/stress_math.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace nodeaudit::gpu {

int interval_count(double duration_s, double interval_s) {
  if (!(interval_s > 0) || !(duration_s >= interval_s)) return 1;
  // The small slack keeps 300 s / 30 s at 10 despite rounding of parsed durations.
  return static_cast<int>(std::floor(duration_s / interval_s + 1e-9));
}

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

namespace {
template <typename T>
void grew(std::vector<std::string>& out, const std::optional<T>& before, const std::optional<T>& after, const char* what) {
  if (before && after && *after > *before) out.push_back(fmt::format("{} rose from {} to {}", what, *before, *after));
}
void became_true(std::vector<std::string>& out, const std::optional<bool>& before, const std::optional<bool>& after,
                 const char* what) {
  if (before && after && !*before && *after) out.push_back(what);
}
}  // namespace

std::vector<std::string> memory_health_changes(const MemoryHealth& before, const MemoryHealth& after) {
  std::vector<std::string> out;
  grew(out, before.ecc_volatile_uncorrected, after.ecc_volatile_uncorrected, "uncorrectable ECC errors (volatile)");
  grew(out, before.repair.retired_pages, after.repair.retired_pages, "retired pages");
  grew(out, before.repair.remapped_rows_correctable, after.repair.remapped_rows_correctable, "rows remapped after correctable errors");
  grew(out, before.repair.remapped_rows_uncorrectable, after.repair.remapped_rows_uncorrectable, "rows remapped after uncorrectable errors");
  became_true(out, before.repair.retired_pages_pending, after.repair.retired_pages_pending, "a page retirement became pending");
  became_true(out, before.repair.row_remap_pending, after.repair.row_remap_pending, "a row remap became pending");
  became_true(out, before.repair.row_remap_failed, after.repair.row_remap_failed, "a row remap failed");
  return out;
}

}  // namespace nodeaudit::gpu
