#include "harness/core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace nodeaudit {
namespace {

double percentile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

}  // namespace

double percentile(std::span<const double> values, double q) {
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  return percentile_sorted(sorted, std::clamp(q, 0.0, 1.0));
}

double median_or_nan(std::span<const double> values) {
  return values.empty() ? std::nan("") : percentile(values, 0.5);
}

RankInterval median_ci95_ranks(std::size_t n) {
  // Normal approximation to binomial(n, 1/2): 1-based ranks n/2 - 1.96*sqrt(n)/2 and
  // 1 + n/2 + 1.96*sqrt(n)/2, rounded to the nearest rank (n = 100 gives ranks 40 and 61, as the
  // exact binomial table does).
  const double half_width = 1.959964 * std::sqrt(static_cast<double>(n)) / 2.0;
  const double centre = static_cast<double>(n) / 2.0;
  long lo_1based = std::lround(centre - half_width);
  long hi_1based = std::lround(centre + half_width + 1.0);
  lo_1based = std::max(1L, lo_1based);
  hi_1based = std::min(static_cast<long>(n), hi_1based);
  return {static_cast<std::size_t>(lo_1based - 1), static_cast<std::size_t>(hi_1based - 1)};
}

Summary summarize(std::span<const double> values) {
  Summary s;
  s.n = values.size();
  if (s.n == 0) return s;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(s.n);
  s.median = percentile_sorted(sorted, 0.5);
  s.p5 = percentile_sorted(sorted, 0.05);
  s.p95 = percentile_sorted(sorted, 0.95);
  if (s.n >= 2) {
    double squares = 0;
    for (double v : sorted) squares += (v - s.mean) * (v - s.mean);
    s.stdev = std::sqrt(squares / static_cast<double>(s.n - 1));
  }
  s.cv = s.mean != 0 ? s.stdev / std::fabs(s.mean) : 0;
  if (s.n < 6) {
    s.ci95_lo = s.min;
    s.ci95_hi = s.max;
  } else {
    const RankInterval ranks = median_ci95_ranks(s.n);
    s.ci95_lo = sorted[ranks.lo];
    s.ci95_hi = sorted[ranks.hi];
  }
  return s;
}

int knee_workers(const std::vector<std::int64_t>& workers, const std::vector<double>& rates) {
  const std::size_t n = std::min(workers.size(), rates.size());
  double best_rate = 0;
  for (std::size_t i = 0; i < n; ++i) best_rate = std::max(best_rate, rates[i]);
  std::int64_t knee = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (rates[i] >= knee_share_of_best_rate * best_rate && (knee == 0 || workers[i] < knee)) knee = workers[i];
  return static_cast<int>(knee);
}

}  // namespace nodeaudit
