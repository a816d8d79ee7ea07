#include "harness/report/report_model.hpp"

#include <map>
#include <set>

#include <fmt/format.h>

#include "harness/core/errors.hpp"
#include "harness/report/provenance.hpp"
#include "harness/report/redact.hpp"
#include "harness/score/result_view.hpp"

namespace nodeaudit::report {

namespace {

std::optional<score::RunCost> cost_from_assessment(const nlohmann::json& assessment, std::string& note) {
  const nlohmann::json cost = assessment.is_object() ? assessment.value("cost", nlohmann::json()) : nlohmann::json();
  if (cost.is_null()) {
    note = "no price given";
    return std::nullopt;
  }
  if (cost.contains("not_judged")) {
    note = cost["not_judged"].get<std::string>();
    return std::nullopt;
  }
  score::RunCost run;
  run.predicted_hours = cost.at("predicted_hours").get<double>();
  run.compute_cost = cost.at("compute_cost").get<double>();
  run.total = cost.at("run_cost").get<double>();
  run.extras = run.total - run.compute_cost;
  run.per_million = cost.at("per_million").get<double>();
  run.unit = cost.at("per_million_unit").get<std::string>();
  return run;
}

NodeReport node_report(const NodeInput& input, const score::Profile* profile, bool redact,
                       const score::TargetGpus* target) {
  NodeReport node{input.name, redact ? redact_result(input.doc) : input.doc, nullptr, std::nullopt, ""};
  if (!profile) {
    node.cost_note = "no profile given";
    return node;
  }
  score::CostOptions cost;
  cost.price_per_hour = input.price_per_hour;
  node.assessment = score::assess(*profile, node.doc, cost, target);  // the redacted doc: its text cannot leak a name
  node.cost = cost_from_assessment(node.assessment, node.cost_note);
  return node;
}

// The node strictly best on this metric; -1 on a tie for best (nothing to single out).
int best_of(const std::vector<MetricRecord>& records) {
  int best = 0;
  bool tied = false;
  for (std::size_t i = 1; i < records.size(); ++i) {
    const double here = records[i].median, there = records[static_cast<std::size_t>(best)].median;
    if (here == there) tied = true;
    else if (records[i].higher_is_better ? here > there : here < there) best = static_cast<int>(i), tied = false;
  }
  return tied ? -1 : best;
}

void add_shared_rows(Report& report) {
  std::vector<std::map<std::string, MetricRecord>> by_key(report.nodes.size());
  std::set<std::string> every_key;
  for (std::size_t i = 0; i < report.nodes.size(); ++i)
    for (auto& record : collect_metrics(report.nodes[i].doc)) {
      const std::string key = pairing_key(record);
      every_key.insert(key);
      by_key[i].emplace(key, record);
    }
  std::set<std::string> done;
  for (const auto& record : collect_metrics(report.nodes.front().doc)) {
    const std::string key = pairing_key(record);
    if (!done.insert(key).second) continue;
    SharedRow row{display_name(record), record.unit, record.higher_is_better, {}, -1};
    for (const auto& node_metrics : by_key) {
      const auto it = node_metrics.find(key);
      if (it == node_metrics.end() || it->second.unit != record.unit) break;
      row.per_node.push_back(it->second);
    }
    if (row.per_node.size() != report.nodes.size()) continue;
    row.best_node = best_of(row.per_node);
    report.shared.push_back(row);
  }
  report.not_shared = every_key.size() - report.shared.size();
}

}  // namespace

Report build_report(const std::vector<NodeInput>& inputs, const score::Profile* profile, bool redact,
                    const score::TargetGpus* target) {
  Report report;
  report.redacted = redact;
  report.profile = profile ? profile->name : "";
  report.dtype = profile ? profile->model.dtype : "";
  if (target && profile)
    report.target_note = fmt::format(
        "Judged for {} x {} (--target-gpus {}): every node's GPU-side figures (GEMM rate, GPU memory, host-to-device, "
        "all-reduce) come from {}, not measured on these nodes: each a published measurement (another node) or a "
        "datasheet peak, with its source; storage, CPUs and RAM are each node's own measurements, measured on that "
        "node. Each rule resting on the table says so in the result's assessment; the nodes' own GPUs, where they have "
        "some, were not used.",
        target->count, target->model.description, target->spec,
        target->file.empty() ? "the built-in GPU table" : target->file);
  for (const auto& input : inputs) {
    if (input.price_per_hour && !profile)
      throw UsageError("--price " + input.name, "pricing a run needs --profile (the run length and speed come from it)");
    report.nodes.push_back(node_report(input, profile, redact, target));
  }
  if (report.nodes.empty()) return report;
  std::vector<Provenance> provenance;
  for (const auto& input : inputs) provenance.push_back(provenance_of(input.name, input.doc));
  report.provenance = provenance_notes(provenance, report.profile);
  add_shared_rows(report);
  std::vector<score::RunCost> costs;
  std::vector<int> index_of_cost;
  for (std::size_t i = 0; i < report.nodes.size(); ++i)
    if (report.nodes[i].cost) costs.push_back(*report.nodes[i].cost), index_of_cost.push_back(static_cast<int>(i));
  const int best = score::cheapest(costs);
  report.cheapest = best < 0 ? -1 : index_of_cost[static_cast<std::size_t>(best)];
  return report;
}

std::string expected_values_of(const NodeReport& node) {
  if (!node.assessment.is_object() || !node.assessment.contains("rules")) return "";
  for (const auto& rule : node.assessment["rules"])
    if (rule.value("rule", "") == "expected_values") return rule.value("verdict", "") + " " + rule.value("text", "");
  return "";
}

std::string node_summary(const nlohmann::json& doc) {
  const nlohmann::json& env = doc.at("env");
  const nlohmann::json gpus = env.value("gpus", nlohmann::json::array());
  std::string text = gpus.empty() ? env.value("gpu_status", "no GPUs")
                                  : fmt::format("{} x {}", gpus.size(), gpus.front().value("name", "GPU"));
  const nlohmann::json software = env.value("software", nlohmann::json::object());
  for (const auto& [key, label] : std::vector<std::pair<std::string, std::string>>{
           {"driver", "driver"}, {"cuda_runtime", "CUDA"}, {"nccl", "NCCL"}})
    if (software.contains(key)) text += fmt::format(", {} {}", label, software[key].get<std::string>());
  const nlohmann::json host = env.value("host", nlohmann::json::object());
  if (host.contains("cpu_model")) text += fmt::format("; {}", host["cpu_model"].get<std::string>());
  if (host.contains("kernel")) text += fmt::format(", kernel {}", host["kernel"].get<std::string>());
  return text;
}

}  // namespace nodeaudit::report
