// A fleet as the fleet report reads it: per node only what the judgement needs (each metric's
// median per GPU or per node, the configuration strings drift is checked on, the probes that
// failed and the fail findings), collected one result document at a time so a thousand results fit
// in a few megabytes. Inputs that are not results are kept as skipped, each with its reason.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/report/provenance.hpp"

namespace nodeaudit::report {

// One figure across the fleet: a metric's pairing key (results/SCHEMA.md) without its `gpu` label.
struct FleetFigure {
  std::string probe, name, labels, unit;  // labels: "dtype=bf16" (sorted, gpu left out)
  bool higher_is_better = true;
  bool per_gpu = false;         // the metric carries a `gpu` label
  std::string display() const;  // "gpu.gemm tflops [dtype=bf16]"
};

struct NodeValue {
  std::uint32_t figure = 0;
  std::int32_t gpu = -1;   // -1: a node-level figure
  double value = 0;        // the metric's median
  bool disturbed = false;  // its probe ran beside foreign load: shown, never judged
};

// A configuration string that must match across the fleet (driver, kernel, a GPU's power limit,
// a host.config finding's severity), with a sentence that shows what the value means.
struct ConfigEntry {
  std::string setting, value, example;
};

struct FleetNode {
  std::string name, path;
  std::vector<NodeValue> values;
  std::vector<ConfigEntry> config;
  std::vector<std::string> faults;  // "gpu.gemm crashed: signal 11", "finding gemm.mismatch: 12 elements differ"
  Provenance provenance;
};

struct SkippedInput {
  std::string path, reason;
};

struct FleetInput {
  std::vector<FleetFigure> figures;
  std::vector<FleetNode> nodes;
  std::vector<SkippedInput> skipped;
  std::unordered_map<std::string, std::uint32_t> figure_index;  // pairing key without gpu + unit
  std::map<std::string, std::size_t> node_index;                // name -> nodes[]
};

// One result reduced to what the fleet report needs, its figures numbered within the node only, so
// results can be summarized in parallel and added in input order. The node's name is
// env.host.hostname, else the file's stem.
struct NodeSummary {
  FleetNode node;                                            // values[].figure indexes `figures`
  std::vector<std::pair<std::string, FleetFigure>> figures;  // pairing key without gpu + unit, figure
};
NodeSummary summarize_result(const std::string& path, const nlohmann::json& doc);
// Numbers the summary's figures fleet-wide. Throws UsageError naming both files when another
// result already holds the node's name (one result per node).
void add_summary(FleetInput& fleet, NodeSummary summary);
void add_result(FleetInput& fleet, const std::string& path, const nlohmann::json& doc);  // both in one

}  // namespace nodeaudit::report
