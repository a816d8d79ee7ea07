#include "harness/report/noise_band.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/core/change_test.hpp"
#include "harness/core/stats.hpp"

namespace nodeaudit::report {

double relative_spread_pct(std::span<const double> values) {
  if (values.size() < 2) return 0;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  const double median = percentile(values, 0.5);
  return median == 0 ? 0 : (*hi - *lo) / std::fabs(median) * 100.0;
}

double centre_of(std::span<const double> runs) { return summarize(runs).mean; }

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

NoiseBand noise_band(const std::vector<double>& baseline_runs, const std::vector<double>& candidate_runs,
                     const std::string& metric) {
  NoiseBand band;
  band.tail = is_tail_figure(metric);
  std::string parts;
  for (const auto& [side, runs] : {std::pair{"baseline", &baseline_runs}, std::pair{"candidate", &candidate_runs}}) {
    if (runs->size() < 2) {
      parts += fmt::format("{}{} 1 run", parts.empty() ? "" : ", ", side);
      continue;
    }
    const double spread = relative_spread_pct(*runs);
    band.spread_pct = band.measured ? std::max(band.spread_pct, spread) : spread;
    band.measured = true;
    parts += fmt::format("{}{} {} runs {:.1f}%", parts.empty() ? "" : ", ", side, runs->size(), spread);
  }
  band.source = band.measured ? parts : "noise not measured on this node (one run each side, no rounds)";
  if (!band.measured) return band;
  const ChangeTest test = test_change(baseline_runs, candidate_runs, band.tail ? 1.5 : 1.0);
  band.band_pct = test.half_width * 100.0;
  band.statistic = test.statistic() + (band.tail ? " (widened by half for a tail figure)" : "");
  return band;
}

}  // namespace nodeaudit::report
