#include "harness/report/metric_index.hpp"

#include "harness/core/figure_info.hpp"

namespace nodeaudit::report {

std::string labels_text(const std::map<std::string, std::string>& labels) {
  std::string text;
  for (const auto& [key, value] : labels) text += (text.empty() ? "" : ", ") + key + "=" + value;
  return text;
}

std::string pairing_key(const MetricRecord& record) {
  // nlohmann::json objects keep keys sorted, so dump() is canonical for equal params.
  return record.probe + "|" + record.params.dump() + "|" + record.name + "|" + labels_text(record.labels);
}

std::string display_name(const MetricRecord& record) {
  std::string text = record.probe + " " + record.name;
  if (!record.labels.empty()) text += " [" + labels_text(record.labels) + "]";
  return text;
}

std::string label(const MetricRecord& record, const std::string& key) {
  const auto it = record.labels.find(key);
  return it == record.labels.end() ? std::string() : it->second;
}

namespace {

MetricRecord record_of(const nlohmann::json& probe_entry, const nlohmann::json& params, const nlohmann::json& metric) {
  const std::string probe = probe_entry.at("id").get<std::string>();
  MetricRecord record;
  record.probe = probe;
  record.params = params;
  record.name = metric.at("name").get<std::string>();
  for (const auto& [key, value] : metric.at("labels").items())
    record.labels[key] = value.is_string() ? value.get<std::string>() : value.dump();
  FigureInfo figure = figure_info(probe, metric);
  record.unit = std::move(figure.unit);
  record.higher_is_better = figure.higher_is_better;
  record.n = metric.at("n").get<std::size_t>();
  record.median = metric.at("median").get<double>();
  record.ci_lo = metric.at("ci95").at(0).get<double>();
  record.ci_hi = metric.at("ci95").at(1).get<double>();
  if (metric.contains("round_medians")) record.round_medians = metric["round_medians"].get<std::vector<double>>();
  record.disturbed = probe_entry.value("disturbed", false);
  if (record.disturbed)
    record.disturbance = probe_entry.at("disturbance").value("evidence", "foreign load while the probe ran");
  return record;
}

}  // namespace

std::vector<MetricRecord> collect_metrics(const nlohmann::json& result_doc) {
  std::vector<MetricRecord> records;
  for (const auto& probe : result_doc.at("probes")) {
    const nlohmann::json params = probe.value("params", nlohmann::json::object());
    for (const auto& metric : probe.at("metrics")) records.push_back(record_of(probe, params, metric));
  }
  return records;
}

}  // namespace nodeaudit::report
