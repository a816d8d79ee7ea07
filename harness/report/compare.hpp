// Baseline(s) vs candidate: which figures moved beyond noise, and what changed in the environment.
// The noise is this node's spread between runs (noise_band.hpp). Per metric, in this order:
//   - unit or direction differ                        -> incomparable
//   - either side's probe ran beside foreign load     -> disturbed (not judged; which side, how much)
//   - the same per-run figures on both sides          -> unchanged (a file compared with itself)
//   With the between-run scatter measured (two runs or more on either side: rounds, repeats, several
//   baselines, or --history), the band is the rule of harness/core/change_test.hpp:
//   - |change| <= tolerance and band <= tolerance     -> unchanged
//   - |change| <= tolerance or |change| <= band       -> inconclusive: the band is wider than the
//                                                        tolerance and does not exclude the change
//   - the within-run 95% intervals of the medians     -> inconclusive (a figure read from histogram
//     overlap                                            buckets can show rounds in one bucket, s = 0)
//   - otherwise                                       -> regression or improvement, by direction
//   So only a change beyond the tolerance AND the band is ever called.
//   With it not measured (one run each side):
//   - |change| <= tolerance                           -> unchanged
//   - the 95% intervals of the medians overlap        -> inconclusive
//   - otherwise                                       -> regression or improvement, said as "within-run
//                                                        95% intervals apart; noise between runs not
//                                                        measured"; a regression fails the gate
// The change is measured between the two sides' means of their per-run figures, the centre the band's
// interval is about.
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
  // Each result is one run (its rounds merged into its median), as when the baseline is this node's
  // history: the scatter between whole runs, not between the rounds inside one, is then the noise.
  bool each_file_one_run = false;
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
// The verdict as printed, naming its statistic; a call made without this node's measured noise says so.
std::string verdict_text(const MetricChange& change);
// What measures the noise between runs for a figure of this probe (its command's own options).
std::string more_runs_advice(const MetricRecord& record);

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
