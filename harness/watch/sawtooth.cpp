#include "harness/watch/sawtooth.hpp"

#include <cmath>

#include "harness/core/stats.hpp"

namespace nodeaudit::watch {

DropAnalysis analyse_drops(const std::vector<double>& t_s, const std::vector<double>& util_pct,
                           const DropThresholds& th) {
  DropAnalysis out;
  std::vector<double> onsets, drop_lengths, busy_values;
  bool was_busy = false, in_drop = false;
  double drop_start = 0, last_t = 0;
  std::size_t finite_n = 0, near_zero_n = 0;
  for (std::size_t i = 0; i < t_s.size() && i < util_pct.size(); ++i) {
    const double u = util_pct[i];
    if (!std::isfinite(u)) continue;
    ++finite_n;
    last_t = t_s[i];
    if (u <= th.low_pct) ++near_zero_n;
    if (u >= th.high_pct) busy_values.push_back(u);
    if (in_drop && u >= th.high_pct) {
      drop_lengths.push_back(t_s[i] - drop_start);
      in_drop = false;
    }
    if (!in_drop && was_busy && u <= th.low_pct) {
      onsets.push_back(t_s[i]);
      drop_start = t_s[i];
      in_drop = true;
      was_busy = false;
    }
    if (u >= th.high_pct) was_busy = true;
  }
  if (in_drop) drop_lengths.push_back(last_t - drop_start);
  out.drops = onsets.size();
  out.near_zero_share = finite_n == 0 ? 0 : static_cast<double>(near_zero_n) / static_cast<double>(finite_n);
  out.busy_level_pct = busy_values.empty() ? 0 : percentile(busy_values, 0.5);
  if (!drop_lengths.empty()) out.mean_drop_s = summarize(drop_lengths).mean;
  if (onsets.size() < 2) return out;
  std::vector<double> intervals;
  for (std::size_t i = 1; i < onsets.size(); ++i) intervals.push_back(onsets[i] - onsets[i - 1]);
  const Summary s = summarize(intervals);
  out.period_s = s.median;
  out.period_cv = intervals.size() < 2 ? 0 : s.cv;
  out.periodic = out.drops >= th.min_drops && out.period_cv <= th.max_period_cv;
  return out;
}

}  // namespace nodeaudit::watch
