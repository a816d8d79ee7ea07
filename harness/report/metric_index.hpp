// The metrics of a result document, flattened and keyed for pairing across documents.
// Pairing key (results/SCHEMA.md): probe id, params, metric name, labels. Only the figures a
// comparison needs are kept: the median, its 95% confidence interval, unit, direction, n.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nodeaudit::report {

struct MetricRecord {
  std::string probe;
  nlohmann::json params;  // the probe's params block, as recorded
  std::string name;
  std::map<std::string, std::string> labels;
  std::string unit;
  bool higher_is_better = true;
  std::size_t n = 0;
  double median = 0, ci_lo = 0, ci_hi = 0;
  std::vector<double> round_medians;  // one per round with --rounds N > 1; empty otherwise
  bool disturbed = false;             // the probe ran beside foreign load (results/SCHEMA.md)
  std::string disturbance;            // its evidence, when disturbed
};

// "probe|params|name|labels", stable across documents (params and labels are sorted by key).
std::string pairing_key(const MetricRecord& record);
// "gpu.memory-bandwidth bandwidth [gpu=0, kernel=copy]": what a person reads.
std::string display_name(const MetricRecord& record);
// "gpu=0, kernel=copy" (empty when unlabelled).
std::string labels_text(const std::map<std::string, std::string>& labels);

// Every metric of every probe, in document order.
std::vector<MetricRecord> collect_metrics(const nlohmann::json& result_doc);

// The label value as a string, empty when absent.
std::string label(const MetricRecord& record, const std::string& key);

}  // namespace nodeaudit::report
