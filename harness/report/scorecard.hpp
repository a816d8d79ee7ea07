// The table a vendor report opens with: per node the verdict, the bottleneck, the cost of one
// effective run, and one row per resource the scorer divides by (GEMM at the profile's dtype,
// usable GPU memory, HBM, pinned host-to-device, all-reduce busbw at the gradient size, storage at
// the profile's pattern, CPU loader, host RAM per GPU). Each cell keeps the figure, its unit, its
// ratio to the best node and its status: measured on this node, GPU table (published measurement or datasheet peak), or not measured with
// the reason. Every figure is read from the node's assessment, so the scorecard and the verdict
// cannot disagree.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/report/report_model.hpp"

namespace nodeaudit::report {

struct ScorecardCell {
  std::optional<double> value;          // in the row's unit; absent when not measured
  std::string unit;                     // this node's unit (a fallback metric can differ from the others')
  std::string status;                   // "measured on this node", "GPU table, not measured on this node", "not measured: <why>", ...
  std::string source;                   // the metric the figure came from ("" when none)
  std::optional<double> ratio_to_best;  // value / the best node's value, same unit only
};

struct ScorecardRow {
  std::string resource;              // compute, gpu_memory, gpu_memory_bandwidth, host_to_device, ...
  std::string label;                 // "GEMM bf16 (slowest GPU)"
  std::vector<ScorecardCell> cells;  // node order
  int best = -1;                     // the strictly best node; -1 for fewer than two figures or a tie
};

struct Scorecard {
  bool assessed = false;  // false without --profile: only the verdict row says why
  std::vector<ScorecardRow> rows;
};

Scorecard build_scorecard(const Report& report);

// "500 TFLOP/s", "37.25 GiB": the cell's figure with its unit ("-" when there is none).
std::string cell_figure(const ScorecardCell& cell);
// "1.00x (best)", "0.50x", "" when there is no ratio.
std::string cell_ratio(const ScorecardCell& cell, bool best);
// The bottleneck sentence up to its advice: "storage: 0.8 GB/s of 1.6 GB/s needed (800 of 1641 samples/s)".
std::string short_bottleneck(const NodeReport& node);
// "2.12" and the ratio to the cheapest run, or why there is no cost.
std::string short_cost(const Report& report, std::size_t node);

}  // namespace nodeaudit::report
