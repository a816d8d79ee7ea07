// Summary statistics of repeated measurements. Pure functions, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace nodeaudit {

struct Summary {
  std::size_t n = 0;
  double min = 0, max = 0, mean = 0, median = 0, p5 = 0, p95 = 0;
  double stdev = 0;  // sample standard deviation (n - 1); 0 for n < 2
  double cv = 0;     // stdev / mean; 0 when mean is 0
  double ci95_lo = 0, ci95_hi = 0;  // 95% CI of the median; [min, max] when n < 6
};

// Linear interpolation between order statistics (the "type 7" definition used by numpy and R).
// q in [0, 1]; values need not be sorted. Empty input returns 0.
double percentile(std::span<const double> values, double q);

// The median, or NaN for no values (a figure that was never measured, not a zero).
double median_or_nan(std::span<const double> values);

Summary summarize(std::span<const double> values);

// Indices (0-based, into the sorted samples) bounding a distribution-free 95% confidence interval
// of the median: the binomial(n, 1/2) order statistics, normal approximation. Valid for n >= 6.
struct RankInterval {
  std::size_t lo, hi;
};
RankInterval median_ci95_ranks(std::size_t n);

// The knee of a worker sweep, the one definition every probe uses: the fewest workers whose rate
// reaches 90% of the best rate measured (`rates[i]` with `workers[i]`, in any order); 0 for none.
// Chosen over "the count after which the next step gains under 10%" because it reads the whole
// curve: a flat step before a big gain (1 -> 2 workers +5%, then 2 -> 4 workers +185%) does not
// stop it at the flat step, and it does not depend on how far apart the swept counts are.
inline constexpr double knee_share_of_best_rate = 0.9;
int knee_workers(const std::vector<std::int64_t>& workers, const std::vector<double>& rates);

}  // namespace nodeaudit
