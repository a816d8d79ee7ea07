#include "harness/report/compare.hpp"

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
    case Verdict::inconclusive: return "inconclusive";
    case Verdict::disturbed: return "disturbed";
    case Verdict::unchanged: break;
  }
  return "unchanged";
}

std::string verdict_text(const MetricChange& change) {
  const bool called = change.verdict == Verdict::regression || change.verdict == Verdict::improvement;
  if (!called) return to_string(change.verdict);
  if (change.band.measured) return to_string(change.verdict) + " (99% t-interval of the difference of means)";
  return to_string(change.verdict) + " (within-run 95% intervals apart; noise between runs not measured)";
}

std::string more_runs_advice(const MetricRecord& record) {
  const std::string sides = "compare several results a side, or this node's earlier results with --history DIR";
  if (record.probe.rfind("learn", 0) == 0) return "noise between runs not measured: " + sides;
  return "noise between runs not measured: run with --rounds 3, or " + sides;
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

std::vector<double> runs_of(const MetricRecord& record) {
  return record.round_medians.size() >= 2 ? record.round_medians : std::vector<double>{record.median};
}

std::string disturbed_text(const std::string& side, const std::vector<std::string>& evidence) {
  std::string text = side + " disturbed (";
  for (std::size_t i = 0; i < evidence.size(); ++i) text += (i ? "; " : "") + evidence[i];
  return text + ")";
}

std::string band_text(const NoiseBand& band) {
  return fmt::format("the {:.1f}% noise band ({}; runs' spread {:.1f}%)", band.band_pct, band.statistic, band.spread_pct);
}

void call_direction(MetricChange& change) {
  const bool larger = change.candidate_value > change.baseline_value;
  change.verdict = larger == change.baseline.higher_is_better ? Verdict::improvement : Verdict::regression;
}

// Neither side has two runs: nothing measured says how far this figure moves between runs, so the
// tolerance and the within-run 95% intervals of the two medians decide, and the call says so.
void judge_without_noise(MetricChange& change, const std::string& moved) {
  const double magnitude = change.delta_pct ? std::fabs(*change.delta_pct) : HUGE_VAL;
  const double tolerance = change.tolerance_pct;
  if (magnitude <= tolerance) {
    change.why = fmt::format("{} is within the {:g}% tolerance (noise between runs not measured on this node)", moved, tolerance);
  } else if (change.intervals_overlap) {
    change.verdict = Verdict::inconclusive;
    change.why = fmt::format("{} is beyond the {:g}% tolerance but the within-run 95% intervals of the medians overlap; {}", moved,
                             tolerance, more_runs_advice(change.baseline));
  } else {
    call_direction(change);
    change.why = fmt::format("{} beyond the {:g}% tolerance, within-run 95% intervals of the medians apart; {}", moved, tolerance,
                             more_runs_advice(change.baseline));
  }
}

// The verdict once the figures are comparable and neither side was disturbed (rules in compare.hpp):
// a change is called only beyond the tolerance and beyond the band; a figure whose band is wider
// than the tolerance and whose change the band does not exclude is inconclusive.
void judge_change(MetricChange& change, const std::string& moved) {
  if (!change.band.measured) return judge_without_noise(change, moved);
  const double magnitude = change.delta_pct ? std::fabs(*change.delta_pct) : HUGE_VAL;
  const double tolerance = change.tolerance_pct;
  const double band = change.band.width_pct();
  if (magnitude <= tolerance && band <= tolerance) {
    change.why = fmt::format("{} is within the {:g}% tolerance, and {} resolves it", moved, tolerance, band_text(change.band));
  } else if (magnitude <= tolerance || magnitude <= band) {
    change.verdict = Verdict::inconclusive;
    change.why = fmt::format("{}: {} is wider than the {:g}% tolerance, so this node cannot tell a {:g}% change in this figure "
                             "from its noise with these runs",
                             moved, band_text(change.band), tolerance, tolerance);
  } else if (change.intervals_overlap) {
    change.verdict = Verdict::inconclusive;
    change.why = fmt::format("{} is beyond the {:g}% tolerance and {}, but the within-run 95% intervals of the two medians "
                             "overlap",
                             moved, tolerance, band_text(change.band));
  } else {
    call_direction(change);
    change.why = fmt::format("{} beyond the {:g}% tolerance and {}", moved, tolerance, band_text(change.band));
  }
}

bool same_runs(std::vector<double> a, std::vector<double> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

}  // namespace

double MetricSide::centre() const { return centre_of(runs); }

MetricChange compare_metric(const MetricSide& baseline, const MetricSide& candidate, double tolerance_pct) {
  MetricChange change;
  change.baseline = baseline.record;
  change.candidate = candidate.record;
  change.baseline_runs = baseline.runs;
  change.candidate_runs = candidate.runs;
  change.baseline_value = baseline.centre();
  change.candidate_value = candidate.centre();
  change.delta_pct = delta_percent(change.baseline_value, change.candidate_value);
  change.tolerance_pct = tolerance_pct;
  change.band = noise_band(baseline.runs, candidate.runs, baseline.record.name);
  const MetricRecord& b = baseline.record;
  const MetricRecord& c = candidate.record;
  if (b.unit != c.unit || b.higher_is_better != c.higher_is_better) {
    change.verdict = Verdict::incomparable;
    change.why = fmt::format("unit or direction differs ({} vs {})", b.unit, c.unit);
    return change;
  }
  change.intervals_overlap = c.ci_lo <= b.ci_hi && b.ci_lo <= c.ci_hi;
  const std::string moved = change.delta_pct ? fmt::format("{:+.1f}%", *change.delta_pct) : "from 0";
  // Identical figures (a file compared with itself) did not move, whatever load they were measured beside.
  if (same_runs(baseline.runs, candidate.runs)) {
    change.why = "the same figures on both sides";
    return change;
  }
  if (!baseline.disturbed.empty() || !candidate.disturbed.empty()) {
    change.verdict = Verdict::disturbed;
    std::string sides;
    if (!baseline.disturbed.empty()) sides = disturbed_text("baseline", baseline.disturbed);
    if (!candidate.disturbed.empty()) sides += (sides.empty() ? "" : "; ") + disturbed_text("candidate", candidate.disturbed);
    change.why = fmt::format("not judged: {}; change {}", sides, moved);
    return change;
  }
  judge_change(change, moved);
  return change;
}

MetricChange compare_metric(const MetricRecord& baseline, const MetricRecord& candidate, double tolerance_pct) {
  auto side = [](const MetricRecord& r) {
    MetricSide s{r, runs_of(r), {}};
    if (r.disturbed) s.disturbed.push_back(r.disturbance);
    return s;
  };
  return compare_metric(side(baseline), side(candidate), tolerance_pct);
}

namespace {

std::string env_text(const nlohmann::json& value) {
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
  // Another host first: then every other line is about a different machine, not an upgrade.
  const nlohmann::json::json_pointer hostname("/host/hostname");
  add_if_different(out, "host.hostname", env_text(at_path(base, hostname)), env_text(at_path(cand, hostname)));
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
    add_if_different(out, "software." + key, env_text(at_path(base, pointer)), env_text(at_path(cand, pointer)));
  }
  add_if_different(out, "GPU count", std::to_string(base.value("gpus", nlohmann::json::array()).size()),
                   std::to_string(cand.value("gpus", nlohmann::json::array()).size()));
  add_if_different(out, "GPU models", gpu_models(base), gpu_models(cand));
  add_if_different(out, "GPU PCIe links", pcie_links(base), pcie_links(cand));
  for (const char* field : {"kernel", "os", "cpu_model", "cores", "ram_total_bytes"}) {
    const nlohmann::json::json_pointer pointer(std::string("/host/") + field);
    add_if_different(out, std::string("host.") + field, env_text(at_path(base, pointer)), env_text(at_path(cand, pointer)));
  }
  add_if_different(out, "tool.version", env_text(at_path(baseline_doc, "/tool/version"_json_pointer)),
                   env_text(at_path(candidate_doc, "/tool/version"_json_pointer)));
  add_if_different(out, "level", env_text(baseline_doc.value("level", nlohmann::json())),
                   env_text(candidate_doc.value("level", nlohmann::json())));
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

namespace {

// A metric's per-run figures pooled over the baseline files, with the files that lack it.
struct PooledBaseline {
  MetricSide side;
  std::vector<std::string> present_in;
};

void add_to_side(MetricSide& side, const MetricRecord& record, const std::string& label, bool each_file_one_run) {
  const std::vector<double> runs = each_file_one_run ? std::vector<double>{record.median} : runs_of(record);
  side.runs.insert(side.runs.end(), runs.begin(), runs.end());
  if (record.disturbed) side.disturbed.push_back(label + ": " + record.disturbance);
}

}  // namespace

Comparison compare_results(const std::vector<LabelledResult>& baselines, const LabelledResult& candidate,
                           const CompareOptions& options) {
  Comparison out;
  out.tolerance_pct = options.tolerance_pct;
  for (const auto& b : baselines) {
    out.baseline_labels.push_back(b.label);
    out.baseline_label += (out.baseline_label.empty() ? "" : ", ") + b.label;
  }
  out.candidate_label = candidate.label;
  const nlohmann::json& first = baselines.front().doc;
  out.env = env_differences(first, candidate.doc);
  for (std::size_t i = 1; i < baselines.size(); ++i)
    for (auto d : env_differences(first, baselines[i].doc)) {
      d.field = baselines[i].label + ": " + d.field;
      out.between_baselines.push_back(std::move(d));
    }
  out.probes = probe_status_changes(first, candidate.doc);

  std::map<std::string, PooledBaseline> pooled;
  std::vector<std::string> baseline_order;
  for (const auto& b : baselines)
    for (const auto& record : collect_metrics(b.doc)) {
      const std::string key = pairing_key(record);
      auto [it, fresh] = pooled.try_emplace(key, PooledBaseline{MetricSide{record, {}, {}}, {}});
      if (fresh) baseline_order.push_back(key);
      if (!it->second.present_in.empty() && it->second.present_in.back() == b.label) continue;  // a repeated series
      add_to_side(it->second.side, record, b.label, options.each_file_one_run);
      it->second.present_in.push_back(b.label);
    }
  std::map<std::string, MetricSide> candidates;
  std::vector<std::string> candidate_order;
  for (const auto& record : collect_metrics(candidate.doc)) {
    const std::string key = pairing_key(record);
    auto [it, fresh] = candidates.try_emplace(key, MetricSide{record, {}, {}});
    if (fresh) {
      add_to_side(it->second, record, candidate.label, options.each_file_one_run);
      candidate_order.push_back(key);
    }
  }
  for (const auto& key : baseline_order) {
    const PooledBaseline& base = pooled.at(key);
    const auto it = candidates.find(key);
    if (it == candidates.end()) {
      out.only_in_baseline.push_back(base.side.record);
      continue;
    }
    MetricChange change = compare_metric(base.side, it->second, tolerance_for(options, base.side.record));
    for (const auto& label : out.baseline_labels)
      if (std::find(base.present_in.begin(), base.present_in.end(), label) == base.present_in.end())
        change.missing_from.push_back(label);
    out.metrics.push_back(std::move(change));
  }
  for (const auto& key : candidate_order)
    if (!pooled.count(key)) out.only_in_candidate.push_back(candidates.at(key).record);
  return out;
}

Comparison compare_results(const nlohmann::json& baseline_doc, const nlohmann::json& candidate_doc,
                           const CompareOptions& options) {
  return compare_results({LabelledResult{"baseline", baseline_doc}}, LabelledResult{"candidate", candidate_doc}, options);
}

}  // namespace nodeaudit::report
