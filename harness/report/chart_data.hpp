// What the HTML report draws, taken from each node's metrics: GEMM TFLOP/s per dtype, bandwidth
// per resource (HBM, PCIe, storage, all-reduce busbw), the all-reduce busbw curve by message size,
// the storage worker sweep, and per-GPU GEMM uniformity. A per-node figure over several GPUs is the
// median of the per-GPU medians (harness/core/stats percentile), and every chart's note says so.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/report/report_model.hpp"

namespace nodeaudit::report {

struct BarChart {
  std::string id, title, unit, note;
  std::vector<std::string> series;      // node names
  std::vector<std::string> categories;  // one bar group each
  std::vector<std::vector<std::optional<double>>> values;  // [category][series]
  bool has_data() const;
};

struct LineChart {
  std::string id, title, x_label, unit, note;
  bool x_is_bytes = false;  // tick labels as sizes (1 MiB) rather than counts
  std::vector<std::string> series;
  std::vector<std::vector<std::pair<double, double>>> points;  // [series] -> (x, y), x ascending
  bool has_data() const;
};

struct ChartSet {
  BarChart gemm;
  std::vector<BarChart> bandwidth;  // one panel per resource: their scales differ by 1000x
  LineChart allreduce_curve;
  LineChart storage_sweep;
  BarChart uniformity;
};

ChartSet build_charts(const Report& report);

}  // namespace nodeaudit::report
