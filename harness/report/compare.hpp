// Baseline vs candidate: which figures moved beyond noise, and what changed in the environment.
// A change is a regression only when it is beyond the tolerance in the metric's bad direction AND
// the two 95% confidence intervals of the median do not overlap; an improvement likewise in the
// good direction; anything else is unchanged. The tolerance alone would flag noisy metrics, the
// interval test alone would flag tiny but well-measured shifts; a gate needs both.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "metric_index.hpp"

namespace nodeaudit::report {

struct CompareOptions {
  double tolerance_pct = 5;
  // Per-metric tolerance: key is a metric name ("latency_p99") or "<probe id>:<metric>"
  // ("storage.read:latency_p99"); the probe-qualified key wins.
  std::map<std::string, double> metric_tolerance_pct;
};

enum class Verdict { unchanged, regression, improvement, incomparable };
std::string to_string(Verdict verdict);

struct MetricChange {
  MetricRecord baseline, candidate;
  std::optional<double> delta_pct;  // absent when the baseline median is 0 and the candidate's is not
  double tolerance_pct = 0;
  bool intervals_overlap = false;
  Verdict verdict = Verdict::unchanged;
  std::string why;  // "within 5% tolerance", "-10.0% but the 95% intervals overlap", ...
};

struct EnvDifference {
  std::string field;  // "software.driver", "GPU count", "host.kernel"
  std::string baseline, candidate;
};

struct ProbeStatusChange {
  std::string probe, baseline, candidate;  // statuses; "absent" when the probe was not run
  std::string candidate_reason;
};

struct Comparison {
  std::string baseline_label, candidate_label;  // file names as given
  std::vector<EnvDifference> env;
  std::vector<ProbeStatusChange> probes;
  std::vector<MetricChange> metrics;  // paired, in baseline order
  std::vector<MetricRecord> only_in_baseline, only_in_candidate;
  double tolerance_pct = 0;

  int count(Verdict verdict) const;
  // Regressed metrics, or a probe that was ok in the baseline and is not now.
  bool has_regression() const;
};

// Tolerance for one metric: the probe-qualified override, the name override, else the default.
double tolerance_for(const CompareOptions& options, const MetricRecord& record);

MetricChange compare_metric(const MetricRecord& baseline, const MetricRecord& candidate, double tolerance_pct);
std::vector<EnvDifference> env_differences(const nlohmann::json& baseline_doc, const nlohmann::json& candidate_doc);

Comparison compare_results(const nlohmann::json& baseline_doc, const nlohmann::json& candidate_doc,
                           const CompareOptions& options);

}  // namespace nodeaudit::report
