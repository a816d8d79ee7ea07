#include "harness/report/chart_data.hpp"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>

#include "harness/core/stats.hpp"
#include "harness/score/label_selectors.hpp"
#include "harness/score/resource_probes.hpp"

namespace nodeaudit::report {

bool BarChart::has_data() const {
  for (const auto& group : values)
    for (const auto& value : group)
      if (value) return true;
  return false;
}

bool LineChart::has_data() const {
  for (const auto& line : points)
    if (!line.empty()) return true;
  return false;
}

namespace {

namespace R = score::resource_figure;
using Filter = std::function<bool(const MetricRecord&)>;

// A label that should hold a number ("1048576", "4"); absent when it does not.
std::optional<double> label_number(const MetricRecord& record, const std::string& key) {
  const std::string text = label(record, key);
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

std::vector<MetricRecord> select(const NodeReport& node, const std::string& probe, const std::string& name, const Filter& keep) {
  std::vector<MetricRecord> out;
  for (auto& record : collect_metrics(node.doc))
    if (record.probe == probe && record.name == name && (!keep || keep(record))) out.push_back(record);
  return out;
}

// The records carrying every label of the selector (a "" value: the record lacks that label), as
// the scorer's select_metrics reads a result.
Filter selected_by(const score::LabelFilter& selector) {
  return [selector](const MetricRecord& r) {
    return std::all_of(selector.begin(), selector.end(),
                       [&](const auto& pair) { return label(r, pair.first) == pair.second; });
  };
}

std::optional<double> median_of(const std::vector<MetricRecord>& records) {
  if (records.empty()) return std::nullopt;
  std::vector<double> medians;
  for (const auto& r : records) medians.push_back(r.median);
  return percentile(medians, 0.5);
}

std::optional<double> max_of(const std::vector<MetricRecord>& records) {
  std::optional<double> best;
  for (const auto& r : records) best = std::max(best.value_or(r.median), r.median);
  return best;
}

std::vector<std::string> node_names(const Report& report) {
  std::vector<std::string> names;
  for (const auto& node : report.nodes) names.push_back(node.name);
  return names;
}

BarChart gemm_chart(const Report& report) {
  BarChart chart{"chart-gemm", "GEMM throughput per dtype", "TFLOP/s", "median over the node's GPUs of gpu.gemm tflops",
                 node_names(report), {}, {}};
  for (const char* dtype : {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8"}) {
    std::vector<std::optional<double>> row;
    for (const auto& node : report.nodes)
      row.push_back(median_of(select(node, R::compute.probe, R::compute.metric, [&](const MetricRecord& r) { return label(r, "dtype") == dtype; })));
    if (std::any_of(row.begin(), row.end(), [](const auto& v) { return v.has_value(); }))
      chart.categories.push_back(dtype), chart.values.push_back(row);
  }
  return chart;
}

BarChart one_bandwidth(const Report& report, const std::string& id, const std::string& title, const std::string& note,
                       const std::function<std::optional<double>(const NodeReport&)>& figure) {
  BarChart chart{id, title, "GB/s", note, node_names(report), {title}, {{}}};
  for (const auto& node : report.nodes) chart.values[0].push_back(figure(node));
  return chart;
}

std::vector<BarChart> bandwidth_charts(const Report& report) {
  std::vector<BarChart> charts;
  charts.push_back(one_bandwidth(report, "chart-hbm", "GPU memory (HBM)", "gpu.memory-bandwidth kernel=copy, median over GPUs",
                                 [](const NodeReport& n) {
                                   return median_of(select(n, R::gpu_memory_bandwidth.probe, R::gpu_memory_bandwidth.metric,
                                                           selected_by(score::label_selector::copy_kernel)));
                                 }));
  charts.push_back(one_bandwidth(report, "chart-pcie", "PCIe host to device", "gpu.pcie h2d_bandwidth pinned, one GPU at a time, median over GPUs",
                                 [](const NodeReport& n) {
                                   return median_of(select(n, R::host_to_device.probe, R::host_to_device.metric,
                                                           selected_by(score::label_selector::pinned_one_gpu_at_a_time)));
                                 }));
  charts.push_back(one_bandwidth(report, "chart-storage", "Storage sequential read", "storage.read pattern=seq, best series",
                                 [](const NodeReport& n) {
                                   return max_of(select(n, R::storage_sequential.probe, R::storage_sequential.metric,
                                                        selected_by(score::label_selector::sequential_read)));
                                 }));
  charts.push_back(one_bandwidth(report, "chart-busbw", "All-reduce bus bandwidth", "comm.allreduce busbw_peak",
                                 [](const NodeReport& n) { return max_of(select(n, R::communication.probe, "busbw_peak", nullptr)); }));
  return charts;
}

LineChart curve(const Report& report, LineChart chart, const std::string& probe, const std::string& name, const std::string& x_label_key) {
  chart.series = node_names(report);
  for (const auto& node : report.nodes) {
    std::map<double, double> by_x;
    for (const auto& r : select(node, probe, name, [&](const MetricRecord& m) { return label_number(m, x_label_key).has_value(); }))
      by_x.emplace(*label_number(r, x_label_key), r.median);
    chart.points.emplace_back(by_x.begin(), by_x.end());
  }
  return chart;
}

BarChart uniformity_chart(const Report& report) {
  std::map<std::string, int> dtype_count;
  for (const auto& node : report.nodes)
    for (const auto& r : select(node, R::compute.probe, R::compute.metric, nullptr)) ++dtype_count[label(r, "dtype")];
  std::string dtype = dtype_count.count("bf16") ? "bf16" : dtype_count.empty() ? "" : dtype_count.begin()->first;
  BarChart chart{"chart-uniformity", "Per-GPU uniformity (GEMM " + dtype + ")", "TFLOP/s",
                 "gpu.gemm tflops dtype=" + dtype + " per GPU: a slow GPU holds back every synchronous step", node_names(report), {}, {}};
  std::set<std::pair<double, std::string>> gpus;  // numeric order: GPU 2 before GPU 10
  for (const auto& node : report.nodes)
    for (const auto& r : select(node, R::compute.probe, R::compute.metric, [&](const MetricRecord& m) { return label(m, "dtype") == dtype; }))
      gpus.insert({label_number(r, "gpu").value_or(1e9), label(r, "gpu")});
  for (const auto& [order, gpu] : gpus) {
    chart.categories.push_back("GPU " + gpu);
    std::vector<std::optional<double>> row;
    for (const auto& node : report.nodes)
      row.push_back(median_of(select(node, R::compute.probe, R::compute.metric, [&](const MetricRecord& m) {
        return label(m, "dtype") == dtype && label(m, "gpu") == gpu;
      })));
    chart.values.push_back(row);
  }
  return chart;
}

}  // namespace

ChartSet build_charts(const Report& report) {
  ChartSet set;
  set.gemm = gemm_chart(report);
  set.bandwidth = bandwidth_charts(report);
  set.allreduce_curve = curve(report, {"chart-allreduce", "All-reduce bus bandwidth by message size", "message size", "GB/s",
                                       "comm.allreduce busbw per size (nccl-tests bus factor)", true, {}, {}},
                              R::communication.probe, R::communication.metric, "size");
  set.storage_sweep = curve(report, {"chart-storage-sweep", "Storage worker sweep (small-file dataset)", "workers", "samples/s",
                                     "storage.dataset samples_per_s per worker count", false, {}, {}},
                            R::storage_samples.probe, R::storage_samples.metric, "workers");
  set.uniformity = uniformity_chart(report);
  return set;
}

}  // namespace nodeaudit::report
