#include "compare.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

namespace nodeaudit::report {

std::string to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::regression: return "regression";
    case Verdict::improvement: return "improvement";
    case Verdict::incomparable: return "incomparable";
    case Verdict::unchanged: break;
  }
  return "unchanged";
}

int Comparison::count(Verdict verdict) const {
  int total = 0;
  for (const auto& change : metrics) total += change.verdict == verdict ? 1 : 0;
  return total;
}

bool Comparison::has_regression() const {
  if (count(Verdict::regression) > 0) return true;
  for (const auto& change : probes)
    if (change.baseline == "ok" && change.candidate != "ok") return true;
  return false;
}

double tolerance_for(const CompareOptions& options, const MetricRecord& record) {
  const auto qualified = options.metric_tolerance_pct.find(record.probe + ":" + record.name);
  if (qualified != options.metric_tolerance_pct.end()) return qualified->second;
  const auto named = options.metric_tolerance_pct.find(record.name);
  if (named != options.metric_tolerance_pct.end()) return named->second;
  return options.tolerance_pct;
}

namespace {

std::optional<double> delta_percent(double baseline, double candidate) {
  if (baseline == 0) return candidate == 0 ? std::optional<double>(0.0) : std::nullopt;
  return (candidate - baseline) / std::fabs(baseline) * 100.0;
}

// +1 when the candidate is better than the baseline, -1 when worse, 0 when equal.
int direction(const MetricRecord& baseline, double candidate_median) {
  if (candidate_median == baseline.median) return 0;
  const bool larger = candidate_median > baseline.median;
  return larger == baseline.higher_is_better ? 1 : -1;
}

}  // namespace

MetricChange compare_metric(const MetricRecord& baseline, const MetricRecord& candidate, double tolerance_pct) {
  MetricChange change{baseline, candidate, delta_percent(baseline.median, candidate.median), tolerance_pct, false,
                      Verdict::unchanged, ""};
  if (baseline.unit != candidate.unit || baseline.higher_is_better != candidate.higher_is_better) {
    change.verdict = Verdict::incomparable;
    change.why = fmt::format("unit or direction differs ({} vs {})", baseline.unit, candidate.unit);
    return change;
  }
  change.intervals_overlap = candidate.ci_lo <= baseline.ci_hi && baseline.ci_lo <= candidate.ci_hi;
  const bool beyond_tolerance = !change.delta_pct || std::fabs(*change.delta_pct) > tolerance_pct;
  const std::string moved = change.delta_pct ? fmt::format("{:+.1f}%", *change.delta_pct) : "from 0";
  if (!beyond_tolerance) {
    change.why = fmt::format("{} is within the {:g}% tolerance", moved, tolerance_pct);
  } else if (change.intervals_overlap) {
    change.why = fmt::format("{} but the 95% intervals overlap (noise)", moved);
  } else {
    const int better = direction(baseline, candidate.median);
    change.verdict = better > 0 ? Verdict::improvement : Verdict::regression;
    change.why = fmt::format("{} beyond the {:g}% tolerance, 95% intervals apart", moved, tolerance_pct);
  }
  return change;
}

namespace {

std::string text_of(const nlohmann::json& value) {
  if (value.is_null()) return "absent";
  return value.is_string() ? value.get<std::string>() : value.dump();
}

const nlohmann::json& at_path(const nlohmann::json& doc, const nlohmann::json::json_pointer& pointer) {
  static const nlohmann::json absent;
  return doc.contains(pointer) ? doc.at(pointer) : absent;
}

void add_if_different(std::vector<EnvDifference>& out, const std::string& field, const std::string& baseline,
                      const std::string& candidate) {
  if (baseline != candidate) out.push_back({field, baseline, candidate});
}

// "8 x NVIDIA H100 80GB HBM3" per distinct name, so a swapped or missing GPU shows.
std::string gpu_models(const nlohmann::json& env) {
  std::map<std::string, int> models;
  for (const auto& gpu : env.value("gpus", nlohmann::json::array())) ++models[gpu.value("name", "?")];
  std::string text;
  for (const auto& [name, count] : models) text += (text.empty() ? "" : ", ") + fmt::format("{} x {}", count, name);
  return text.empty() ? "none" : text;
}

// Worst PCIe link across GPUs: a link that trained down after an upgrade is a classic cause.
std::string pcie_links(const nlohmann::json& env) {
  std::set<std::string> links;
  for (const auto& gpu : env.value("gpus", nlohmann::json::array()))
    links.insert(fmt::format("gen{} x{}", gpu.value("pcie_gen_current", 0), gpu.value("pcie_width_current", 0)));
  std::string text;
  for (const auto& link : links) text += (text.empty() ? "" : ", ") + link;
  return text.empty() ? "none" : text;
}

}  // namespace

std::vector<EnvDifference> env_differences(const nlohmann::json& baseline_doc, const nlohmann::json& candidate_doc) {
  const nlohmann::json& base = baseline_doc.at("env");
  const nlohmann::json& cand = candidate_doc.at("env");
  std::vector<EnvDifference> out;
  // The driver first, then the CUDA stack, then anything else a contributor recorded (firmware, ...).
  std::vector<std::string> software_keys = {"driver", "cuda_driver", "cuda_runtime", "cublas", "nccl", "mpi"};
  std::set<std::string> others;
  for (const auto* env : {&base, &cand}) {
    const nlohmann::json software = env->value("software", nlohmann::json::object());
    for (const auto& [key, value] : software.items())
      if (std::find(software_keys.begin(), software_keys.end(), key) == software_keys.end()) others.insert(key);
  }
  software_keys.insert(software_keys.end(), others.begin(), others.end());
  for (const auto& key : software_keys) {
    const nlohmann::json::json_pointer pointer("/software/" + key);
    add_if_different(out, "software." + key, text_of(at_path(base, pointer)), text_of(at_path(cand, pointer)));
  }
  add_if_different(out, "GPU count", std::to_string(base.value("gpus", nlohmann::json::array()).size()),
                   std::to_string(cand.value("gpus", nlohmann::json::array()).size()));
  add_if_different(out, "GPU models", gpu_models(base), gpu_models(cand));
  add_if_different(out, "GPU PCIe links", pcie_links(base), pcie_links(cand));
  for (const char* field : {"kernel", "os", "cpu_model", "cores", "ram_total_bytes"}) {
    const nlohmann::json::json_pointer pointer(std::string("/host/") + field);
    add_if_different(out, std::string("host.") + field, text_of(at_path(base, pointer)), text_of(at_path(cand, pointer)));
  }
  add_if_different(out, "tool.version", text_of(at_path(baseline_doc, "/tool/version"_json_pointer)),
                   text_of(at_path(candidate_doc, "/tool/version"_json_pointer)));
  add_if_different(out, "level", text_of(baseline_doc.value("level", nlohmann::json())),
                   text_of(candidate_doc.value("level", nlohmann::json())));
  return out;
}

namespace {

std::vector<ProbeStatusChange> probe_status_changes(const nlohmann::json& baseline_doc, const nlohmann::json& candidate_doc) {
  std::map<std::string, std::pair<std::string, std::string>> statuses;  // id -> (status, reason)
  for (const auto& probe : candidate_doc.at("probes"))
    statuses[probe.at("id").get<std::string>()] = {probe.value("status", "?"), probe.value("reason", "")};
  std::vector<ProbeStatusChange> out;
  std::set<std::string> seen;
  for (const auto& probe : baseline_doc.at("probes")) {
    const std::string id = probe.at("id").get<std::string>();
    if (!seen.insert(id).second) continue;
    const auto it = statuses.find(id);
    const std::string candidate = it == statuses.end() ? "absent" : it->second.first;
    const std::string baseline = probe.value("status", "?");
    if (baseline != candidate) out.push_back({id, baseline, candidate, it == statuses.end() ? "" : it->second.second});
  }
  for (const auto& [id, status] : statuses)
    if (!seen.count(id)) out.push_back({id, "absent", status.first, status.second});
  return out;
}

}  // namespace

Comparison compare_results(const nlohmann::json& baseline_doc, const nlohmann::json& candidate_doc,
                           const CompareOptions& options) {
  Comparison out;
  out.tolerance_pct = options.tolerance_pct;
  out.env = env_differences(baseline_doc, candidate_doc);
  out.probes = probe_status_changes(baseline_doc, candidate_doc);
  std::map<std::string, MetricRecord> candidates;
  std::vector<std::string> candidate_order;
  for (auto& record : collect_metrics(candidate_doc)) {
    const std::string key = pairing_key(record);
    if (candidates.emplace(key, record).second) candidate_order.push_back(key);
  }
  std::set<std::string> paired;
  for (const auto& record : collect_metrics(baseline_doc)) {
    const std::string key = pairing_key(record);
    const auto it = candidates.find(key);
    if (it == candidates.end()) {
      out.only_in_baseline.push_back(record);
    } else if (paired.insert(key).second) {
      out.metrics.push_back(compare_metric(record, it->second, tolerance_for(options, record)));
    }
  }
  for (const auto& key : candidate_order)
    if (!paired.count(key)) out.only_in_candidate.push_back(candidates.at(key));
  return out;
}

}  // namespace nodeaudit::report
