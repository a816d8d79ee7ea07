// A generated fleet for the fleet report's tests (no figure is typed by hand): node-01..node-NN,
// each a copy of the recorded tests/fixtures/results/balanced.json (8 GPUs) whose figures are
// scaled by a deterministic spread of +-1% per node, with known faults planted:
//   node-07      every gpu.gemm figure 20% low on all GPUs (a slow node)
//   node-12      GPU 3's gpu.gemm figures 15% low (an outlier GPU; spread_pct recomputed)
//   node-03, -09, -15   NVIDIA driver 550.90.07 instead of 550.54.15 (drift on 3 nodes)
//   node-18      storage.read disturbed by foreign load and 30% low (shown, not judged)
// A fleet smaller than a node number simply lacks that fault.
#pragma once

#include <algorithm>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tests/harness/report/fixture_util.hpp"

namespace nodeaudit::test {

inline void scale_metric(nlohmann::json& metric, double factor) {
  for (const char* key : {"median", "mean", "min", "max", "p5", "p95", "stdev"})
    if (metric.contains(key)) metric[key] = metric[key].get<double>() * factor;
  for (const char* key : {"ci95", "samples", "round_medians"})
    if (metric.contains(key))
      for (auto& value : metric[key]) value = value.get<double>() * factor;
}

inline bool gpu_is(const nlohmann::json& metric, const std::string& gpu) {
  return metric["labels"].value("gpu", "") == gpu;
}

// gpu.gemm's spread_pct [dtype] = (fastest - slowest) / fastest x 100 over the per-GPU tflops.
inline void recompute_gemm_spread(nlohmann::json& probe) {
  for (auto& spread : probe["metrics"]) {
    if (spread["name"] != "spread_pct") continue;
    const std::string dtype = spread["labels"].value("dtype", "");
    double fastest = 0, slowest = 1e300;
    for (const auto& m : probe["metrics"])
      if (m["name"] == "tflops" && m["labels"].value("dtype", "") == dtype)
        fastest = std::max(fastest, m["median"].get<double>()), slowest = std::min(slowest, m["median"].get<double>());
    const double pct = fastest > 0 ? (fastest - slowest) / fastest * 100 : 0;
    scale_metric(spread, spread["median"].get<double>() > 0 ? pct / spread["median"].get<double>() : 1);
  }
}

inline nlohmann::json fleet_node(const nlohmann::json& base, int number) {
  nlohmann::json doc = base;
  doc["assessment"] = nullptr;  // the recorded one was for the unscaled figures
  doc["env"]["host"]["hostname"] = fmt::format("node-{:02}", number);
  if (number == 3 || number == 9 || number == 15) doc["env"]["software"]["driver"] = "550.90.07";
  const double node_factor = 1 + ((number * 7) % 11 - 5) * 0.002;
  for (auto& probe : doc["probes"]) {
    const std::string id = probe["id"];
    for (auto& metric : probe["metrics"]) {
      double factor = node_factor;
      if (id == "gpu.gemm" && metric["name"] != "spread_pct") {
        if (number == 7) factor *= 0.80;
        if (number == 12 && gpu_is(metric, "3")) factor *= 0.85;
      }
      if (id == "storage.read" && number == 18) factor *= metric["better"] == "higher" ? 0.70 : 1 / 0.70;
      scale_metric(metric, factor);
    }
    if (id == "gpu.gemm") recompute_gemm_spread(probe);
    if (id == "storage.read" && number == 18) {
      probe["disturbed"] = true;
      probe["disturbance"] = {
          {"disturbed", true},
          {"evidence", "other processes used 40 CPU-seconds in 10 s, 6% of the 64 CPUs (threshold 5%)"}};
    }
  }
  return doc;
}

// {"node-01.json", doc}, ... in node order.
inline std::vector<std::pair<std::string, nlohmann::json>> generated_fleet(int nodes) {
  const nlohmann::json base = load_result_file(results_fixture("balanced.json"));
  std::vector<std::pair<std::string, nlohmann::json>> fleet;
  for (int number = 1; number <= nodes; ++number)
    fleet.emplace_back(fmt::format("node-{:02}.json", number), fleet_node(base, number));
  return fleet;
}

inline void write_generated_fleet(const std::string& dir, int nodes) {
  for (const auto& [file, doc] : generated_fleet(nodes)) std::ofstream(dir + "/" + file) << doc.dump(1) << "\n";
}

}  // namespace nodeaudit::test
