#include "harness/core/change_test.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "harness/core/stats.hpp"

namespace nodeaudit {
namespace {

// The continued fraction of the regularized incomplete beta function I_x(a, b), evaluated by the
// modified Lentz method; it converges fast for x < (a + 1) / (a + b + 2).
double beta_continued_fraction(double x, double a, double b) {
  constexpr double tiny = 1e-300;
  constexpr double epsilon = 1e-15;
  double c = 1.0;
  double d = 1.0 - (a + b) * x / (a + 1.0);
  d = 1.0 / (std::fabs(d) < tiny ? tiny : d);
  double fraction = d;
  for (int m = 1; m <= 500; ++m) {
    const double m2 = 2.0 * m;
    // Even step, then odd step of the fraction's terms.
    for (const double term :
         {m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)), -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0))}) {
      d = 1.0 + term * d;
      d = 1.0 / (std::fabs(d) < tiny ? tiny : d);
      c = 1.0 + term / c;
      if (std::fabs(c) < tiny) c = tiny;
      const double step = c * d;
      fraction *= step;
      if (term != 0 && std::fabs(step - 1.0) < epsilon) return fraction;
    }
  }
  return fraction;
}

double regularized_incomplete_beta(double x, double a, double b) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double log_front =
      a * std::log(x) + b * std::log1p(-x) - (std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b));
  const double front = std::exp(log_front);
  if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_continued_fraction(x, a, b) / a;
  return 1.0 - front * beta_continued_fraction(1.0 - x, b, a) / b;
}

// The sum of squared deviations from the mean, from the sample standard deviation.
double squares_about_mean(const Summary& values) {
  return static_cast<double>(values.n - 1) * values.stdev * values.stdev;
}

}  // namespace

double t_cdf(double t, double degrees_of_freedom) {
  if (std::isnan(t) || !(degrees_of_freedom > 0)) return std::numeric_limits<double>::quiet_NaN();
  const double x = degrees_of_freedom / (degrees_of_freedom + t * t);
  const double one_tail = 0.5 * regularized_incomplete_beta(x, degrees_of_freedom / 2.0, 0.5);
  return t > 0 ? 1.0 - one_tail : one_tail;
}

double t_quantile(double p, double degrees_of_freedom) {
  if (!(p > 0 && p < 1) || !(degrees_of_freedom > 0)) return std::numeric_limits<double>::quiet_NaN();
  if (p < 0.5) return -t_quantile(1.0 - p, degrees_of_freedom);
  if (p == 0.5) return 0;
  // Bisection on the monotone CDF: bracket, then halve until the bracket is below 1e-12 relative.
  double lo = 0, hi = 1;
  while (t_cdf(hi, degrees_of_freedom) < p && hi < 1e300) {
    lo = hi;
    hi *= 2;
  }
  for (int i = 0; i < 400 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (t_cdf(mid, degrees_of_freedom) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

bool ChangeTest::significant() const {
  return measured() && std::fabs(change) > half_width;
}

std::string ChangeTest::statistic() const {
  if (!measured()) return fmt::format("{} + {} runs: no scatter between runs measured", baseline_runs, candidate_runs);
  return fmt::format("{:g}% t-interval of the difference of means, {} + {} runs: {:+.1f}% +/- {:.1f}%",
                     change_confidence * 100, baseline_runs, candidate_runs, change * 100, half_width * 100);
}

ChangeTest test_change(std::span<const double> baseline, std::span<const double> candidate, double widen) {
  ChangeTest test;
  test.baseline_runs = baseline.size();
  test.candidate_runs = candidate.size();
  if (baseline.empty() || candidate.empty()) return test;
  const Summary base = summarize(baseline), cand = summarize(candidate);
  test.baseline_mean = base.mean;
  test.candidate_mean = cand.mean;
  const double difference = test.candidate_mean - test.baseline_mean;
  const double scale = std::fabs(test.baseline_mean);
  test.change = scale > 0 ? difference / scale : (difference == 0 ? 0 : std::copysign(HUGE_VAL, difference));
  test.degrees_of_freedom = static_cast<int>(baseline.size() + candidate.size()) - 2;
  if (!test.measured()) return test;
  const double squares = squares_about_mean(base) + squares_about_mean(cand);
  test.pooled_sd = std::sqrt(squares / test.degrees_of_freedom);
  test.t_value = t_quantile(0.5 + change_confidence / 2, test.degrees_of_freedom);
  const double width =
      widen * test.t_value * test.pooled_sd *
      std::sqrt(1.0 / static_cast<double>(baseline.size()) + 1.0 / static_cast<double>(candidate.size()));
  test.half_width = scale > 0 ? width / scale : HUGE_VAL;
  return test;
}

double smallest_callable_change(double relative_sd, std::size_t baseline_runs, std::size_t candidate_runs) {
  const int degrees_of_freedom = static_cast<int>(baseline_runs + candidate_runs) - 2;
  if (degrees_of_freedom < 1 || baseline_runs == 0 || candidate_runs == 0) return HUGE_VAL;
  return t_quantile(0.5 + change_confidence / 2, degrees_of_freedom) * relative_sd *
         std::sqrt(1.0 / static_cast<double>(baseline_runs) + 1.0 / static_cast<double>(candidate_runs));
}

}  // namespace nodeaudit
