#include "harness/report/prometheus.hpp"

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "harness/core/errors.hpp"
#include "harness/core/result.hpp"
#include "harness/report/metric_index.hpp"
#include "harness/report/prometheus_names.hpp"

namespace nodeaudit::report {

namespace {

std::string sanitize_name(const std::string& text) {
  std::string out;
  for (const char c : text) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "_" + out;
  return out;
}

std::string escape_label_value(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string escape_help(const std::string& text) {
  std::string out;
  for (const char c : text) out += c == '\\' ? "\\\\" : c == '\n' ? "\\n" : std::string(1, c);
  return out;
}

std::string sample_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", value);
}

std::string label_block(const std::map<std::string, std::string>& labels) {
  if (labels.empty()) return "";
  std::string out;
  for (const auto& [key, value] : labels)
    out += (out.empty() ? "" : ",") + sanitize_name(key) + "=\"" + escape_label_value(value) + "\"";
  return "{" + out + "}";
}

struct Family {
  std::string help, type = "gauge";
  std::vector<std::string> samples;
  std::set<std::string> series;  // label blocks seen: a repeated series would make the file invalid
};

struct Families {
  std::map<std::string, Family> by_name;
  std::vector<std::string> order;

  void add(const std::string& name, const std::string& help, const std::map<std::string, std::string>& labels,
           double value, const char* type = "gauge") {
    auto [it, inserted] = by_name.try_emplace(name);
    if (inserted) order.push_back(name), it->second.help = help, it->second.type = type;
    const std::string block = label_block(labels);
    if (!it->second.series.insert(block).second) return;  // the first of duplicate series wins
    it->second.samples.push_back(name + block + " " + sample_value(value));
  }
};

// One series per state, 1 for the state reached: an alert is `nodeaudit_verdict{verdict="FAIL"} == 1`.
void add_state_set(Families& families, const std::string& name, const std::string& help,
                   std::map<std::string, std::string> labels, const std::string& state_label,
                   const std::vector<std::string>& states, const std::string& state) {
  for (const std::string& each : states) {
    labels[state_label] = each;
    families.add(name, help, labels, each == state ? 1 : 0);
  }
}

void add_probe_metrics(Families& families, const nlohmann::json& doc) {
  for (const auto& probe : doc.at("probes")) {
    const std::string id = probe.at("id").get<std::string>();
    families.add("nodeaudit_probe_ok", "1 when the probe's status is ok, else 0 (the status is a label)",
                 {{"probe", id}, {"status", probe.value("status", "?")}}, probe.value("status", "") == "ok" ? 1 : 0);
    families.add("nodeaudit_probe_duration_seconds", "Wall time of the probe, including set-up", {{"probe", id}},
                 probe.value("duration_s", 0.0));
  }
  for (const auto& record : collect_metrics(doc)) {
    const PrometheusSeries series = prometheus_series(record.probe, record.name, record.unit);
    std::map<std::string, std::string> labels = record.labels;
    std::string what = record.name;
    if (series.quantile) {
      labels["quantile"] = *series.quantile;
      what = "latency percentiles (quantile label; the probe's " + record.name + " and its siblings)";
    }
    const std::string unit = series.base_unit.empty() ? record.unit
                             : series.scale == 1
                                 ? series.base_unit
                                 : fmt::format("{} (the probe reports {})", series.base_unit, record.unit);
    const std::string help = fmt::format("{} {} in {}, {} is better; median of the repetitions, measured on this node", record.probe, what,
                                         unit.empty() ? "no unit" : unit, record.higher_is_better ? "higher" : "lower");
    families.add(series.family, help, labels, record.median * series.scale, series.quantile ? "summary" : "gauge");
  }
}

// The assessment's verdicts, so a fleet dashboard can alert on them: the overall verdict, each
// rule's, and each expected-value grade with how far below its reference the figure is.
void add_assessment(Families& families, const nlohmann::json& doc) {
  if (!doc.contains("assessment") || !doc["assessment"].is_object()) return;
  const nlohmann::json& assessment = doc["assessment"];
  const std::vector<std::string> verdicts{"PASS", "WARN", "FAIL", "NOT_JUDGED"};
  const std::string profile = assessment.value("profile", "");
  if (assessment.contains("overall") && assessment["overall"].is_object())
    add_state_set(families, "nodeaudit_verdict",
                  "The run's overall verdict for the profile: 1 for the verdict reached, 0 for the others",
                  {{"profile", profile}}, "verdict", verdicts, assessment["overall"].value("verdict", ""));
  for (const auto& rule : assessment.value("rules", nlohmann::json::array()))
    add_state_set(
        families, "nodeaudit_rule_verdict", "Each rule's verdict: 1 for the verdict reached, 0 for the others",
        {{"profile", profile}, {"rule", rule.value("rule", "")}}, "verdict", verdicts, rule.value("verdict", ""));
  if (!assessment.contains("expected") || !assessment["expected"].is_object()) return;
  const nlohmann::json limits = assessment["expected"].value("limits", nlohmann::json::object());
  for (const auto& [figure, limit] : limits.items())
    for (const char* which : {"warn", "fail"})
      families.add("nodeaudit_expected_limit_ratio",
                   "The grading limits per figure, as a fraction below the expected value, and where each came from "
                   "(built-in table, profile, --expect FILE)",
                   {{"figure", figure}, {"limit", which}, {"source", limit.value(std::string(which) + "_source", "")}},
                   limit.value(std::string(which) + "_below_pct", 0.0) / 100);
  for (const auto& grade : assessment["expected"].value("grades", nlohmann::json::array())) {
    std::map<std::string, std::string> labels{
        {"figure", grade.value("figure", "")}, {"gpu", grade.value("gpu", "")}, {"model", grade.value("model", "")}};
    add_state_set(families, "nodeaudit_expected_grade",
                  "Each measured GPU figure graded against the published reference for its GPU model: 1 for the "
                  "grade reached, 0 for the others",
                  labels, "grade", {"PASS", "WARN", "FAIL"}, grade.value("verdict", ""));
    families.add("nodeaudit_expected_below_ratio",
                 "How far each graded figure is below its reference, (expected - measured) / expected; negative "
                 "when above",
                 labels, grade.value("below_pct", 0.0) / 100);
  }
}

}  // namespace

std::string render_prometheus(const nlohmann::json& doc) {
  Families families;
  add_probe_metrics(families, doc);
  add_assessment(families, doc);
  std::string out = std::string(prometheus_header) + "\n";
  for (const auto& name : families.order) {
    const Family& family = families.by_name.at(name);
    out += "# HELP " + name + " " + escape_help(family.help) + "\n# TYPE " + name + " " + family.type + "\n";
    for (const auto& sample : family.samples) out += sample + "\n";
  }
  return out;
}

namespace {

bool is_our_textfile(const std::string& path) {
  std::ifstream in(path);
  std::string first_line;
  return in && std::getline(in, first_line) && first_line == prometheus_header;
}

}  // namespace

void write_prometheus_textfile(const nlohmann::json& result_doc, const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !is_our_textfile(path))
    throw UsageError("--prometheus " + path,
                     "exists and was not written by nodeaudit (its first line is not \"" + std::string(prometheus_header) +
                         "\"); choose a new file or remove it");
  write_file_atomic(path, render_prometheus(result_doc), false);
}

}  // namespace nodeaudit::report
