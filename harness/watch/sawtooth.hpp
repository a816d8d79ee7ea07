// Periodic drops of GPU utilization to near zero: the data-loader signature. The GPU computes a few
// steps, drains the prefetched batches, then waits for the loader; the wait repeats every N steps.
// Detection uses hysteresis so noise around one threshold does not count as drops: a drop starts when
// utilization falls to <= low_pct after having been >= high_pct, and ends when it is back >= high_pct.
// The period is the median time between drop onsets; it is "periodic" when those intervals vary
// little (coefficient of variation <= max_period_cv). Pitfall: a period shorter than two sampling
// intervals cannot be seen (aliasing); sample faster (--interval 250ms) for short steps.
#pragma once

#include <cstddef>
#include <vector>

namespace nodeaudit::watch {

struct DropThresholds {
  double low_pct = 10;   // "near zero"
  double high_pct = 50;  // busy again
  std::size_t min_drops = 3;
  double max_period_cv = 0.35;
};

struct DropAnalysis {
  std::size_t drops = 0;
  double period_s = 0;       // median interval between onsets (0 with fewer than 2 drops)
  double period_cv = 0;      // stdev / mean of the intervals
  double near_zero_share = 0;  // share of samples <= low_pct
  double mean_drop_s = 0;    // how long utilization stays down per drop
  double busy_level_pct = 0; // median utilization of the samples >= high_pct
  bool periodic = false;
};

// `t_s` and `util_pct` are aligned; non-finite readings are skipped.
DropAnalysis analyse_drops(const std::vector<double>& t_s, const std::vector<double>& util_pct,
                           const DropThresholds& thresholds = {});

}  // namespace nodeaudit::watch
