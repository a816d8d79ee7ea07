#include "harness/core/rounds.hpp"

#include <fmt/format.h>

#include <map>
#include <regex>
#include <set>
#include <string>

#include "harness/core/metric.hpp"
#include "harness/core/result.hpp"

namespace nodeaudit {

std::vector<std::size_t> round_order(std::size_t probe_count, int round) {
  std::vector<std::size_t> order;
  if (probe_count == 0) return order;
  const std::size_t shift = static_cast<std::size_t>(round < 0 ? 0 : round) % probe_count;
  for (std::size_t i = 0; i < probe_count; ++i) order.push_back((i + shift) % probe_count);
  return order;
}

namespace {

// A metric's identity inside one probe entry: name and labels (params are the probe's, shared).
std::string metric_identity(const nlohmann::json& metric) {
  return metric.at("name").get<std::string>() + "|" + metric.at("labels").dump();
}

struct PooledMetric {
  Metric metric;
  std::vector<double> round_medians;
};

Metric metric_shell(const nlohmann::json& recorded) {
  Metric m;
  m.name = recorded.at("name").get<std::string>();
  m.unit = recorded.at("unit").get<std::string>();
  m.better = recorded.at("better") == "higher" ? Better::higher : Better::lower;
  for (const auto& [key, value] : recorded.at("labels").items()) m.labels[key] = value.get<std::string>();
  return m;
}

nlohmann::json pooled_metrics(const std::vector<nlohmann::json>& entries) {
  std::map<std::string, PooledMetric> pooled;
  std::vector<std::string> order;
  for (const auto& entry : entries) {
    for (const auto& recorded : entry.value("metrics", nlohmann::json::array())) {
      const std::string key = metric_identity(recorded);
      auto [it, fresh] = pooled.try_emplace(key);
      if (fresh) {
        it->second.metric = metric_shell(recorded);
        order.push_back(key);
      }
      for (const auto& sample : recorded.at("samples")) it->second.metric.samples.push_back(sample.get<double>());
      it->second.round_medians.push_back(recorded.at("median").get<double>());
    }
  }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& key : order) {
    nlohmann::json metric = metric_to_json(pooled.at(key).metric);
    metric["round_medians"] = pooled.at(key).round_medians;
    out.push_back(std::move(metric));
  }
  return out;
}

// A finding's identity across rounds: its code, severity and message with the measured figures taken
// out (numbers with a decimal point, and any number followed by a unit: "4 GB/s" is the 4.39 GB/s of
// another round printed to three digits), so the same slow host found in every round is reported
// once, in the first round's words. Other whole numbers stay: they name things (GPU 3, h3, 2 pairs).
std::string finding_identity(const nlohmann::json& finding) {
  static const std::regex decimal(R"((^|[^0-9A-Za-z_.])[0-9][0-9,]*\.[0-9]+)");
  static const std::regex with_unit(
      R"((^|[^0-9A-Za-z_.])[0-9][0-9,]*(?= ?(GB/s|MB/s|kB/s|TFLOP/s|samples/s|IOPS|TiB|GiB|MiB|KiB|%|x\b|ms\b|us\b|s\b|B\b|W\b|MHz\b)))");
  std::string message = std::regex_replace(finding.value("message", std::string()), decimal, "$1#");
  message = std::regex_replace(message, with_unit, "$1#");
  return finding.value("code", std::string()) + '\n' + finding.value("severity", std::string()) + '\n' + message;
}

nlohmann::json merged_findings(const std::vector<nlohmann::json>& entries) {
  nlohmann::json out = nlohmann::json::array();
  std::set<std::string> seen;
  for (const auto& entry : entries)
    for (const auto& finding : entry.value("findings", nlohmann::json::array()))
      if (seen.insert(finding.is_object() ? finding_identity(finding) : finding.dump()).second) out.push_back(finding);
  return out;
}

// The round with the most foreign CPU use among the disturbed ones (else among all), with how many
// rounds were disturbed: one disturbed round is enough to distrust the pooled figures.
nlohmann::json merged_disturbance(const std::vector<nlohmann::json>& entries) {
  const nlohmann::json* worst = nullptr;
  int disturbed_rounds = 0, judged_rounds = 0;
  for (const auto& entry : entries) {
    if (!entry.contains("disturbance")) continue;
    const nlohmann::json& d = entry["disturbance"];
    ++judged_rounds;
    const bool disturbed = d.value("disturbed", false);
    disturbed_rounds += disturbed ? 1 : 0;
    const bool worst_disturbed = worst && worst->value("disturbed", false);
    const bool worse = !worst || (disturbed && !worst_disturbed) ||
                       (disturbed == worst_disturbed &&
                        d.value("cpu_foreign_share_pct", 0.0) > worst->value("cpu_foreign_share_pct", 0.0));
    if (worse) worst = &d;
  }
  if (!worst) return nullptr;
  nlohmann::json out = *worst;
  out["rounds_disturbed"] = disturbed_rounds;
  out["rounds_judged"] = judged_rounds;
  return out;
}

}  // namespace

nlohmann::json merge_rounds(const std::vector<nlohmann::json>& entries, int planned_rounds) {
  // One round only, or a probe that did not end ok in its first round: nothing to pool.
  if (entries.size() == 1 && (planned_rounds <= 1 || entries.front().value("status", "ok") != "ok"))
    return entries.front();
  nlohmann::json merged = entries.front();
  merged["rounds"] = static_cast<int>(entries.size());
  merged["rounds_planned"] = planned_rounds;
  double duration_s = 0;
  for (const auto& entry : entries) duration_s += entry.value("duration_s", 0.0);
  merged["duration_s"] = duration_s;
  merged["metrics"] = pooled_metrics(entries);
  merged["findings"] = merged_findings(entries);
  for (std::size_t r = 0; r < entries.size(); ++r) {
    const std::string status = entries[r].value("status", "ok");
    if (status == "ok") continue;
    merged["status"] = status;
    merged["reason"] = fmt::format("round {} of {}: {}", r + 1, planned_rounds, entries[r].value("reason", ""));
    if (entries[r].contains("telemetry")) merged["telemetry"] = entries[r]["telemetry"];
    if (entries[r].value("input_error", false)) merged["input_error"] = true;
    break;
  }
  if (merged.value("status", "ok") == "ok" && static_cast<int>(entries.size()) < planned_rounds) {
    merged["status"] = "interrupted";
    merged["reason"] = fmt::format("interrupted after {} of {} rounds", entries.size(), planned_rounds);
  }
  const nlohmann::json disturbance = merged_disturbance(entries);
  if (!disturbance.is_null()) {
    merged["disturbance"] = disturbance;
    merged["disturbed"] = disturbance.value("rounds_disturbed", 0) > 0;
  }
  return merged;
}

}  // namespace nodeaudit
