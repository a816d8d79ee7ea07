// Judging a fleet against itself, with robust statistics: for each figure the fleet median and
// the median absolute deviation (MAD) of the nodes' figures, and a node fails a figure when it is
// worse than the median by more than K scaled MADs and by more than a floor percentage (the floor
// keeps a fleet of near-identical nodes, MAD ~ 0, from failing on noise). The same rule judges each
// GPU against all the fleet's GPUs; inside a node, a GPU more than a percentage below the node's
// best GPU on a higher-is-better figure fails (gpu-fryer's rule). A failed, crashed or timed-out
// probe and a `fail` finding fail the node too. Configuration drift is listed, and fails only the
// nodes off the most common value when asked to.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/report/fleet_drift.hpp"
#include "harness/report/fleet_model.hpp"

namespace nodeaudit::report {

struct FleetOptions {
  double outlier_mad = 3;          // K: scaled MADs (1.4826 x MAD estimates a standard deviation)
  double outlier_floor_pct = 5;    // and at least this far from the median, in percent of it
  double gpu_below_best_pct = 10;  // a GPU this far below its node's best GPU fails
  bool fail_on_drift = false;
  bool all_runs = false;  // every result of a node, each run its own row; else the newest alone
  std::size_t min_nodes = 3;  // fewer nodes with a figure: the figure is not judged
};

// The fleet's statistics of one set of values (node figures, or all GPUs' figures).
struct RobustStats {
  std::size_t count = 0;
  double median = 0, mad = 0;
  double limit = 0;  // a value worse than this fails
};

struct FigureVerdict {
  std::uint32_t figure = 0;
  std::size_t disturbed = 0;        // nodes whose figure was taken beside foreign load: not judged
  std::string not_judged;           // why, when too few nodes have the figure
  RobustStats nodes;                // over the nodes' figures (per-GPU figures: each node's median GPU)
  std::optional<RobustStats> gpus;  // over every GPU's figure, for per-GPU figures
  double worst = 0, best = 0;       // among the nodes' figures
  std::vector<std::size_t> outlier_nodes;
};

struct GpuOutlier {
  std::size_t node = 0;
  std::int32_t gpu = 0;
  std::uint32_t figure = 0;
  double value = 0;
  std::optional<double> node_best;     // set when below the node's best GPU by more than the limit
  std::optional<double> fleet_median;  // set when past the fleet's GPU limit
};

struct FleetVerdict {
  FleetOptions options;
  std::vector<FigureVerdict> figures;  // FleetInput::figures order
  std::vector<GpuOutlier> gpu_outliers;
  std::vector<DriftSetting> drift;
  std::vector<std::vector<std::string>> reasons;  // per node: why it fails (empty: it passes)
  std::vector<std::string> provenance;
  std::size_t failed_nodes = 0;
};

FleetVerdict judge_fleet(const FleetInput& fleet, const FleetOptions& options);

// Median and MAD of `values` and the limit past which a value is worse (direction from higher_is_better).
RobustStats robust_stats(std::vector<double> values, bool higher_is_better, const FleetOptions& options);
bool is_worse(double value, const RobustStats& stats, bool higher_is_better);

}  // namespace nodeaudit::report
