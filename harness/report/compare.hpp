// Baseline(s) vs candidate: which figures moved beyond noise, and what changed in the environment.
// The noise is this node's spread between runs (noise_band.hpp). Per metric, in this order:
//   - unit or direction differ                        -> incomparable
//   - either side's probe ran beside foreign load     -> disturbed (not judged; which side, how much)
//   - the same per-run figures on both sides          -> unchanged (a file compared with itself)
//   With the between-run spread measured (rounds or several baselines on either side):
//   - |change| <= tolerance, spread <= tolerance      -> unchanged
//   - |change| <= band, spread > tolerance            -> inconclusive: the node cannot resolve a
//                                                        change of the tolerance's size in this figure
//   - |change| <= band                                -> unchanged (inside the noise band)
//   - the 95% intervals of the medians overlap        -> inconclusive (the repetitions inside the
//                                                        runs do not separate the two sides)
//   - otherwise                                       -> regression or improvement, by direction
//   With it not measured (one run each side: results written before rounds existed):
//   - |change| <= tolerance                           -> unchanged
//   - the 95% intervals of the medians overlap        -> inconclusive
//   - otherwise                                       -> regression or improvement, said as "noise
//                                                        not measured on this node: confirm with
//                                                        --rounds 3"; a regression fails the gate
// The band is the 99% interval of the difference of the two centres under the runs' scatter
// (noise_band.hpp): with two rounds a side the scatter rests on two differences, so the band is
// wide (Student's t), where twice the wider range called about 7 in 100 unchanged figures a change.
// The band alone is not enough: a figure read from histogram buckets can show two rounds in the
// same bucket (spread 0). So a change must also leave the 95% intervals of the two medians, the
// noise of the repetitions inside each run.
// Inconclusive and disturbed never fail the gate; they are counted and listed apart.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/report/metric_index.hpp"
#include "harness/report/noise_band.hpp"

namespace nodeaudit::report {

struct CompareOptions {
  double tolerance_pct = 5;
  // Per-metric tolerance: key is a metric name ("latency_p99") or "<probe id>:<metric>"
  // ("storage.read:latency_p99"); the probe-qualified key wins.
  std::map<std::string, double> metric_tolerance_pct;
};

enum class Verdict { unchanged, regression, improvement, incomparable, inconclusive, disturbed };
std::string to_string(Verdict verdict);

// One side of a metric: the record (the first baseline's, for several) and its per-run figures.
struct MetricSide {
  MetricRecord record;
  std::vector<double> runs;             // round medians, or each file's median; never empty
  std::vector<std::string> disturbed;   // "<file>: <evidence>" per disturbed file
  double centre() const;                // median of `runs`
};

struct MetricChange {
  MetricRecord baseline, candidate;
  std::vector<double> baseline_runs, candidate_runs;
  double baseline_value = 0, candidate_value = 0;  // the centres the change is measured between
  std::optional<double> delta_pct;  // absent when the baseline is 0 and the candidate is not
  double tolerance_pct = 0;
  NoiseBand band;
  bool intervals_overlap = false;
  Verdict verdict = Verdict::unchanged;
  std::string why;  // "within 5% tolerance", "run-to-run spread 21% exceeds the 5% tolerance: ...", ...
  std::vector<std::string> missing_from;  // baseline files without this metric (params or probes differ)
};
// The verdict as printed: a call made without this node's measured noise says so.
std::string verdict_text(const MetricChange& change);

struct EnvDifference {
  std::string field;  // "software.driver", "GPU count", "host.kernel"
  std::string baseline, candidate;
};

struct ProbeStatusChange {
  std::string probe, baseline, candidate;  // statuses; "absent" when the probe was not run
  std::string candidate_reason;
};

// A result document with the name it was given by (its path).
struct LabelledResult {
  std::string label;
  nlohmann::json doc;
};

struct Comparison {
  std::string baseline_label, candidate_label;  // file names as given (several baselines: joined)
  std::vector<std::string> baseline_labels;
  std::vector<EnvDifference> env;
  std::vector<EnvDifference> between_baselines;  // field "<file>: host.kernel"; the first baseline's value vs that file's
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

MetricChange compare_metric(const MetricSide& baseline, const MetricSide& candidate, double tolerance_pct);
// One run each side, no rounds beyond what the records carry: the records' own round medians or medians.
MetricChange compare_metric(const MetricRecord& baseline, const MetricRecord& candidate, double tolerance_pct);
std::vector<EnvDifference> env_differences(const nlohmann::json& baseline_doc, const nlohmann::json& candidate_doc);

// Several baselines pool their per-run figures per metric (paired by results/SCHEMA.md's key); a
// metric some baselines lack is compared on those that have it and says which lack it.
Comparison compare_results(const std::vector<LabelledResult>& baselines, const LabelledResult& candidate,
                           const CompareOptions& options);
Comparison compare_results(const nlohmann::json& baseline_doc, const nlohmann::json& candidate_doc,
                           const CompareOptions& options);

}  // namespace nodeaudit::report
