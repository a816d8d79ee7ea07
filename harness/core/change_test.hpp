// The one rule behind every `better`, `worse`, `improvement` and `regression` nodeaudit prints
// (learn --vary, compare, fleet): the two-sided 99% Student-t interval of the difference of the two
// sides' means, with the scatter pooled over the runs of both sides. A change is called only when
// that interval leaves zero, i.e. |mean_c - mean_b| > t(0.995, n_b + n_c - 2) * s * sqrt(1/n_b + 1/n_c).
//
// Why this test and not a rank test: with two or three runs a side (what a user can afford), the
// Mann-Whitney U test cannot reach a small p-value at all (two runs a side: the smallest two-sided
// p is 1/3; three a side: 1/10), so it could never call a change at a 1% level. The t-interval can,
// and its false-call rate is the stated 1% whatever the number of runs, as long as the runs' scatter
// is roughly normal and alike on both sides; bench/stats/ measures both the false calls and the power
// by simulation. Pooling (rather than Welch) keeps a usable number of degrees of freedom with two
// runs a side (2 instead of as few as 1).
// The runs must be independent runs (fresh processes, rounds, repeats, earlier results), never the
// repetitions inside one process: those share clocks, caches and file placement.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace nodeaudit {

// Two-sided confidence of the interval; 1 - this is the false-call rate the rule is built for.
inline constexpr double change_confidence = 0.99;

struct ChangeTest {
  std::size_t baseline_runs = 0, candidate_runs = 0;
  int degrees_of_freedom = 0;  // n_b + n_c - 2; below 1 the scatter is not measured
  double baseline_mean = 0, candidate_mean = 0;
  double change = 0;      // (candidate_mean - baseline_mean) / |baseline_mean|, a fraction
  double half_width = 0;  // half the interval of `change`, as a fraction of |baseline_mean|
  double pooled_sd = 0;   // the pooled standard deviation of one run, in the figure's unit
  double t_value = 0;     // t(0.995, degrees_of_freedom)

  bool measured() const { return degrees_of_freedom >= 1; }
  // The interval leaves zero: a change this rule calls.
  bool significant() const;
  // How the verdict was reached, e.g. "99% t-interval of the difference of means, 3 + 3 runs: -4.1% +/- 2.0%".
  std::string statistic() const;
};

// The test on the per-run figures of both sides (either may have one run when the other has two or
// more). `widen` multiplies the interval (tail figures take 1.5, see noise_band.hpp).
ChangeTest test_change(std::span<const double> baseline, std::span<const double> candidate, double widen = 1.0);

// The half-width of the rule's interval, as a fraction, for a figure whose runs scatter by
// `relative_sd` (a fraction of the figure) and the given run counts: the smallest change a compare
// with that many runs can call.
double smallest_callable_change(double relative_sd, std::size_t baseline_runs, std::size_t candidate_runs);

// Student's t distribution: P(T <= t) and its inverse (for p in (0, 1)), any degrees of freedom >= 1.
double t_cdf(double t, double degrees_of_freedom);
double t_quantile(double p, double degrees_of_freedom);

}  // namespace nodeaudit
