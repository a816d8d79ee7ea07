#include "harness/report/fleet_judge.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "harness/core/stats.hpp"
#include "harness/core/table.hpp"

namespace nodeaudit::report {

namespace {

// 1.4826 x MAD estimates the standard deviation of normally distributed figures.
constexpr double mad_to_sigma = 1.4826;

double median_of(const std::vector<double>& values) {
  return percentile(values, 0.5);
}

// "12.0% below the fleet median 500.0 (limit 475.0)"; the direction follows the figure's.
std::string distance_text(double value, double reference, bool higher_is_better, const std::string& what) {
  const double worse_by = higher_is_better ? reference - value : value - reference;
  const std::string side = higher_is_better ? "below" : "above";
  if (reference == 0) return fmt::format("{} {} {}", side, what, format_figure(reference));
  return fmt::format("{:.1f}% {} {} {}", worse_by / std::fabs(reference) * 100, side, what, format_figure(reference));
}

std::string figure_with_unit(double value, const FleetFigure& figure) {
  return format_figure(value) + (figure.unit.empty() ? "" : " " + figure.unit);
}

struct Gathered {
  std::vector<std::vector<std::pair<std::size_t, double>>> node_figures;  // [figure] -> (node, value)
  std::vector<std::vector<double>> gpu_figures;                           // [figure] -> every GPU's value
  std::vector<std::size_t> disturbed;                                     // [figure] -> nodes
};

// A node's values of one figure grouped per GPU, in GPU order of the document.
using PerGpu = std::map<std::uint32_t, std::vector<std::pair<std::int32_t, double>>>;

PerGpu per_gpu_of(const FleetNode& node) {
  PerGpu grouped;
  for (const auto& v : node.values)
    if (v.gpu >= 0 && !v.disturbed) grouped[v.figure].emplace_back(v.gpu, v.value);
  return grouped;
}

Gathered gather(const FleetInput& fleet) {
  const std::size_t figures = fleet.figures.size();
  Gathered g{std::vector<std::vector<std::pair<std::size_t, double>>>(figures),
             std::vector<std::vector<double>>(figures), std::vector<std::size_t>(figures, 0)};
  for (std::size_t n = 0; n < fleet.nodes.size(); ++n) {
    std::vector<bool> disturbed(figures, false);
    for (const auto& v : fleet.nodes[n].values) {
      if (v.disturbed)
        disturbed[v.figure] = true;
      else if (v.gpu < 0)
        g.node_figures[v.figure].emplace_back(n, v.value);
    }
    for (const auto& [figure, gpus] : per_gpu_of(fleet.nodes[n])) {
      std::vector<double> values;
      for (const auto& [gpu, value] : gpus) values.push_back(value), g.gpu_figures[figure].push_back(value);
      g.node_figures[figure].emplace_back(n, median_of(values));
    }
    for (std::size_t f = 0; f < figures; ++f) g.disturbed[f] += disturbed[f] ? 1 : 0;
  }
  return g;
}

FigureVerdict judge_figure(const FleetInput& fleet, std::uint32_t f, const Gathered& g, const FleetOptions& options,
                           FleetVerdict& verdict) {
  const FleetFigure& figure = fleet.figures[f];
  FigureVerdict out;
  out.figure = f;
  out.disturbed = g.disturbed[f];
  const auto& values = g.node_figures[f];
  std::vector<double> plain;
  for (const auto& [node, value] : values) plain.push_back(value);
  if (!plain.empty()) {
    const auto [lo, hi] = std::minmax_element(plain.begin(), plain.end());
    out.worst = figure.higher_is_better ? *lo : *hi;
    out.best = figure.higher_is_better ? *hi : *lo;
  }
  out.nodes = robust_stats(plain, figure.higher_is_better, options);
  if (plain.size() < options.min_nodes) {
    out.not_judged = fmt::format("{} node{} with this figure; {} needed", plain.size(), plain.size() == 1 ? "" : "s",
                                 options.min_nodes);
    return out;
  }
  if (figure.per_gpu) out.gpus = robust_stats(g.gpu_figures[f], figure.higher_is_better, options);
  for (const auto& [node, value] : values) {
    if (!is_worse(value, out.nodes, figure.higher_is_better)) continue;
    out.outlier_nodes.push_back(node);
    verdict.reasons[node].push_back(
        fmt::format("{}{}: {}, {} (limit {})", figure.display(), figure.per_gpu ? " (median GPU)" : "",
                    figure_with_unit(value, figure),
                    distance_text(value, out.nodes.median, figure.higher_is_better, "the fleet median"),
                    format_figure(out.nodes.limit)));
  }
  return out;
}

void judge_gpus(const FleetInput& fleet, std::size_t n, const FleetOptions& options, FleetVerdict& verdict) {
  for (const auto& [f, gpus] : per_gpu_of(fleet.nodes[n])) {
    const FleetFigure& figure = fleet.figures[f];
    const std::optional<RobustStats>& fleet_gpus = verdict.figures[f].gpus;
    double best = 0;
    for (const auto& [gpu, value] : gpus) best = std::max(best, value);
    const bool in_node = figure.higher_is_better && best > 0 && gpus.size() > 1;
    // A node already past the limit on this figure is named for it once, not once per GPU.
    const auto& outlier_nodes = verdict.figures[f].outlier_nodes;
    const bool node_named = std::find(outlier_nodes.begin(), outlier_nodes.end(), n) != outlier_nodes.end();
    for (const auto& [gpu, value] : gpus) {
      GpuOutlier outlier{n, gpu, f, value, std::nullopt, std::nullopt};
      if (in_node && (best - value) / best * 100 > options.gpu_below_best_pct) outlier.node_best = best;
      if (fleet_gpus && !node_named && is_worse(value, *fleet_gpus, figure.higher_is_better))
        outlier.fleet_median = fleet_gpus->median;
      if (!outlier.node_best && !outlier.fleet_median) continue;
      std::string why;
      if (outlier.node_best)
        why = fmt::format("{:.1f}% below the node's best GPU {} (limit {:g}%)", (best - value) / best * 100,
                          format_figure(best), options.gpu_below_best_pct);
      if (outlier.fleet_median)
        why += (why.empty() ? "" : " and ") +
               distance_text(value, fleet_gpus->median, figure.higher_is_better, "the fleet's GPU median") +
               fmt::format(" (limit {})", format_figure(fleet_gpus->limit));
      verdict.reasons[n].push_back(
          fmt::format("GPU {} {}: {}, {}", gpu, figure.display(), figure_with_unit(value, figure), why));
      verdict.gpu_outliers.push_back(outlier);
    }
  }
}

void judge_drift(FleetVerdict& verdict) {
  for (const auto& setting : verdict.drift)
    for (std::size_t v = 1; v < setting.values.size(); ++v)
      for (const std::size_t n : setting.values[v].nodes)
        verdict.reasons[n].push_back(
            fmt::format("{} is {}; most nodes: {}", setting.setting,
                        setting.values[v].value.empty() ? "not recorded" : "`" + setting.values[v].value + "`",
                        setting.values[0].value.empty() ? "not recorded" : "`" + setting.values[0].value + "`"));
}

}  // namespace

RobustStats robust_stats(std::vector<double> values, bool higher_is_better, const FleetOptions& options) {
  RobustStats stats;
  stats.count = values.size();
  if (values.empty()) return stats;
  stats.median = median_of(values);
  for (double& value : values) value = std::fabs(value - stats.median);
  stats.mad = median_of(values);
  const double margin = std::max(options.outlier_mad * mad_to_sigma * stats.mad,
                                 options.outlier_floor_pct / 100 * std::fabs(stats.median));
  stats.limit = higher_is_better ? stats.median - margin : stats.median + margin;
  return stats;
}

bool is_worse(double value, const RobustStats& stats, bool higher_is_better) {
  return higher_is_better ? value < stats.limit : value > stats.limit;
}

FleetVerdict judge_fleet(const FleetInput& fleet, const FleetOptions& options) {
  FleetVerdict verdict;
  verdict.options = options;
  verdict.reasons.resize(fleet.nodes.size());
  for (std::size_t n = 0; n < fleet.nodes.size(); ++n)
    for (const auto& fault : fleet.nodes[n].faults) verdict.reasons[n].push_back(fault);
  const Gathered gathered = gather(fleet);
  for (std::uint32_t f = 0; f < fleet.figures.size(); ++f)
    verdict.figures.push_back(judge_figure(fleet, f, gathered, options, verdict));
  for (std::size_t n = 0; n < fleet.nodes.size(); ++n) judge_gpus(fleet, n, options, verdict);
  verdict.drift = find_drift(fleet.nodes);
  if (options.fail_on_drift) judge_drift(verdict);
  std::vector<Provenance> provenance;
  for (const auto& node : fleet.nodes) provenance.push_back(node.provenance);
  verdict.provenance = provenance_notes(provenance, "");
  for (const auto& reasons : verdict.reasons) verdict.failed_nodes += reasons.empty() ? 0 : 1;
  return verdict;
}

}  // namespace nodeaudit::report
