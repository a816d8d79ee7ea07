// `learn --vary cpus=..`: how many CPUs the job needs, measured (the fewest CPUs whose median
// samples/s is within 5% of the best value's), and the prediction model's step for each value from
// the run on the most CPUs, set beside the measured one: the model checked against the job itself.
#include <algorithm>

#include <fmt/format.h>

#include "harness/learn/learn_run.hpp"
#include "harness/core/units.hpp"
#include "harness/learn/job_measurement.hpp"
#include "harness/learn/learned_profile.hpp"
#include "harness/learn/vary.hpp"
#include "harness/score/model.hpp"
#include "harness/score/score.hpp"

namespace nodeaudit::learn {

namespace {

constexpr double enough_share = 0.95;

// This node as it would be with `cpus` CPUs: the env's cpuset count set to it, no quota.
nlohmann::json node_with_cpus(const nlohmann::json& doc, double cpus) {
  nlohmann::json node = doc;
  node["env"]["container"]["cpus_allowed"] = cpus;
  node["env"]["container"]["cpu_limit"] = nullptr;
  node["probes"] = nlohmann::json::array();
  return node;
}

}  // namespace

std::string cpus_answer(const VaryReport& report, const std::map<std::string, OneRun>& complete_run, const ValidLearn& v,
                        const nlohmann::json& doc) {
  double best = 0;
  for (const auto& value : report.values)
    if (!value.samples_per_s.empty()) best = std::max(best, spread_of(value.samples_per_s).median);
  std::string out;
  for (const auto& value : report.values) {
    if (value.samples_per_s.empty() || spread_of(value.samples_per_s).median < enough_share * best) continue;
    out = fmt::format("cpus: the job needs {} CPUs to reach {:.0f}% of its best samples/s (measured, median of the repeats)\n", value.value,
                      100 * enough_share);
    break;
  }
  // The prediction from the run on the most CPUs, carried to each value's CPU count.
  const OneRun* reference = nullptr;
  int most = 0;
  for (const auto& [value, run] : complete_run)
    if (std::atoi(value.c_str()) > most) most = std::atoi(value.c_str()), reference = &run;
  if (!reference) return out + "cpus: the prediction is not checked: no value's run was complete\n";
  const score::Profile profile = score::parse_profile(learned_profile_toml(reference->job, v.name, ""), "the learned profile");
  nlohmann::json job_node = doc;
  job_node["env"]["container"]["cpus_allowed"] = most;
  const score::JobMeasured measured = job_measured(reference->job, reference->run, job_load(reference->run), job_node["env"]);
  score::JobDemand demand;
  demand.profile = &profile, demand.measured = &measured, demand.job_node = &job_node, demand.storage_as_measured = true;
  for (const auto& value : report.values) {
    const score::NodeModel model = score::build_model(demand, node_with_cpus(doc, std::atoi(value.value.c_str())));
    // samples/s is the mean step's (as the model's step is), not the median step's.
    const double measured_rate = value.samples_per_s.empty() ? 0 : spread_of(value.samples_per_s).median;
    if (model.step.not_judged || !model.step.unmeasured.empty()) {
      out += fmt::format("cpus={}: predicted samples/s not judged\n", value.value);
      continue;
    }
    out += fmt::format("cpus={}: predicted {:.4g} samples/s (step {}, from the run on {} CPUs), measured {}{}\n", value.value,
                       model.step.samples_per_s, format_duration(model.step.step_s), most,
                       measured_rate > 0 ? fmt::format("{:.4g}", measured_rate) : "none",
                       measured_rate > 0 ? fmt::format(" ({:+.0f}%)", 100 * (model.step.samples_per_s - measured_rate) / measured_rate) : "");
  }
  return out;
}

}  // namespace nodeaudit::learn
