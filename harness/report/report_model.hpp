// Several nodes' results side by side: the metrics they share, each node's assessment for one
// workload profile, and the cost of one effective training run on each (hourly price x predicted
// hours, from the scorer), with the cheapest named. Pure: documents in, a Report out.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/report/metric_index.hpp"
#include "harness/score/score.hpp"

namespace nodeaudit::report {

struct NodeInput {
  std::string name;  // shown in every table and chart
  std::string path;  // the file it came from
  nlohmann::json doc;
  std::optional<double> price_per_hour;
};

struct NodeReport {
  std::string name;
  nlohmann::json doc;         // redacted when asked
  nlohmann::json assessment;  // null without a profile
  std::optional<score::RunCost> cost;
  std::string cost_note;  // why there is no cost, when there is none
};

// One metric present in every node: the records in node order.
struct SharedRow {
  std::string display;
  std::string unit;
  bool higher_is_better = true;
  std::vector<MetricRecord> per_node;
  int best_node = -1;
};

struct Report {
  std::string profile;  // empty when none was given
  std::string dtype;    // the profile's GEMM dtype, empty without a profile
  std::vector<NodeReport> nodes;
  std::vector<SharedRow> shared;
  std::size_t not_shared = 0;  // distinct metrics missing from at least one node
  int cheapest = -1;           // index into nodes, -1 when fewer than one node has a cost
  bool redacted = false;
  // With --target-gpus: "Judged for 8 x H100 ... : GPU-side figures from the GPU table, not measured on this node ...".
  std::string target_note;
  // Results that do not belong together, named (another profile, level or nodeaudit version).
  std::vector<std::string> provenance;
};

// profile may be null (no assessment, no cost); target may be null (each node's own GPUs). Throws
// UsageError for a price without a profile.
Report build_report(const std::vector<NodeInput>& inputs, const score::Profile* profile, bool redact,
                    const score::TargetGpus* target = nullptr);

// The node's expected_values rule as "<VERDICT> expected_values: ..." ("" when nothing was graded).
std::string expected_values_of(const NodeReport& node);

// "8 x Fixture GPU 80GB, driver 550.54.15, CUDA 12.4, NCCL 2.21.5": a node in one line.
std::string node_summary(const nlohmann::json& doc);

}  // namespace nodeaudit::report
