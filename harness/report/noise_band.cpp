#include "harness/report/noise_band.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/core/stats.hpp"

namespace nodeaudit::report {

double relative_spread_pct(std::span<const double> values) {
  if (values.size() < 2) return 0;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  const double median = percentile(values, 0.5);
  return median == 0 ? 0 : (*hi - *lo) / std::fabs(median) * 100.0;
}

double centre_of(std::span<const double> runs) { return percentile(runs, 0.5); }

namespace {

bool is_percentile_token(const std::string& token) {
  if (token.size() < 3 || token[0] != 'p' || token[1] != '9') return false;
  return std::all_of(token.begin() + 1, token.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

bool is_tail_figure(const std::string& metric) {
  std::vector<std::string> tokens;
  std::string token;
  for (const char c : metric + "_") {
    if (c != '_') {
      token += c;
      continue;
    }
    if (!token.empty()) tokens.push_back(token);
    token.clear();
  }
  for (const auto& t : tokens)
    if (is_percentile_token(t)) return true;
  const bool maximum = std::find(tokens.begin(), tokens.end(), "max") != tokens.end();
  return maximum && (metric.rfind("latency", 0) == 0 || metric.rfind("step_time", 0) == 0);
}

double t_quantile_99(int degrees_of_freedom) {
  // Student's t at 0.995 for 1..30 degrees of freedom (standard tables); beyond, the normal 2.576
  // is within 7%.
  static constexpr double table[] = {63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169,
                                     3.106,  3.055, 3.012, 2.977, 2.947, 2.921, 2.898, 2.878, 2.861, 2.845,
                                     2.831,  2.819, 2.807, 2.797, 2.787, 2.779, 2.771, 2.763, 2.756, 2.750};
  if (degrees_of_freedom < 1) return table[0];
  if (degrees_of_freedom <= 30) return table[degrees_of_freedom - 1];
  return 2.576;
}

namespace {

// Sample variance of `values` relative to their median, in percent squared.
double relative_variance_pct2(std::span<const double> values) {
  const Summary summary = summarize(values);
  if (summary.n < 2 || summary.median == 0) return 0;
  const double sd_pct = summary.stdev / std::fabs(summary.median) * 100.0;
  return sd_pct * sd_pct;
}

}  // namespace

NoiseBand noise_band(const std::vector<double>& baseline_runs, const std::vector<double>& candidate_runs,
                     const std::string& metric) {
  NoiseBand band;
  band.tail = is_tail_figure(metric);
  std::string parts;
  double pooled_sum = 0;
  int degrees_of_freedom = 0;
  for (const auto& [side, runs] : {std::pair{"baseline", &baseline_runs}, std::pair{"candidate", &candidate_runs}}) {
    if (runs->size() < 2) {
      parts += fmt::format("{}{} 1 run", parts.empty() ? "" : ", ", side);
      continue;
    }
    const double spread = relative_spread_pct(*runs);
    band.spread_pct = band.measured ? std::max(band.spread_pct, spread) : spread;
    band.measured = true;
    const int df = static_cast<int>(runs->size()) - 1;
    pooled_sum += df * relative_variance_pct2(*runs);
    degrees_of_freedom += df;
    parts += fmt::format("{}{} {} runs {:.1f}%", parts.empty() ? "" : ", ", side, runs->size(), spread);
  }
  band.source = band.measured ? parts : "noise not measured on this node (one run each side, no rounds)";
  if (!band.measured) return band;
  const double n_base = static_cast<double>(std::max<std::size_t>(baseline_runs.size(), 1));
  const double n_cand = static_cast<double>(std::max<std::size_t>(candidate_runs.size(), 1));
  const double pooled_sd_pct = std::sqrt(pooled_sum / degrees_of_freedom);
  band.band_pct = t_quantile_99(degrees_of_freedom) * pooled_sd_pct * std::sqrt(1 / n_base + 1 / n_cand) *
                  (band.tail ? 1.5 : 1.0);
  return band;
}

}  // namespace nodeaudit::report
