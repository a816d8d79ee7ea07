// profile x result -> assessment document. Pure: everything is computed from the two inputs.
#include <fmt/format.h>

#include "harness/core/table.hpp"
#include "harness/score/expected.hpp"
#include "harness/score/model.hpp"
#include "harness/score/score.hpp"
#include "harness/score/verdict.hpp"

namespace nodeaudit::score {

using nlohmann::json;

namespace {

json step_json(const NodeModel& node) {
  const StepModel& step = node.step;
  json out{{"samples_per_gpu", node.shape.samples_per_gpu}, {"samples_per_node", node.shape.samples_per_node}};
  if (step.not_judged) {
    out["not_judged"] = *step.not_judged;
    return out;
  }
  out.update({{"time_s", step.step_s},
              {"gpu_busy_s", step.gpu_busy_s},
              {"exposed_comm_s", step.exposed_comm_s},
              {"loader_s", step.loader_s},
              {"gpu_utilization", step.utilization},
              {"exposed_comm_share", step.exposed_comm_share},
              {"data_wait_share", step.data_wait_share},
              {"samples_per_s", step.samples_per_s},
              {"unmeasured", step.unmeasured}});
  if (step.tokens_per_s > 0) out["tokens_per_s"] = step.tokens_per_s;
  return out;
}

json memory_json(const MemoryFit& memory) {
  json out{{"model_state_bytes", memory.model_state_bytes},
           {"activation_bytes", memory.activation_bytes},
           {"peak_bytes", memory.peak_bytes}};
  if (memory.not_judged) {
    out["not_judged"] = *memory.not_judged;
    return out;
  }
  out.update({{"usable_bytes", memory.usable_bytes},
              {"metric", memory.metric},
              {"basis", memory.datasheet ? gpu_table_label : measured_here_label},
              {"peak_share", memory.ratio()},
              {"headroom_pct", memory.headroom_pct()}});
  return out;
}

json host_json(const HostFit& host) {
  json out = json::object();
  if (host.ram_not_judged)
    out["ram_not_judged"] = *host.ram_not_judged;
  else
    out.update({{"ram_total_bytes", host.ram_total_bytes},
                {"gpu_memory_total_bytes", host.gpu_memory_total_bytes},
                {"ram_to_gpu_memory", host.ram_total_bytes / host.gpu_memory_total_bytes}});
  if (host.limited) out["limited_by"] = "env.container: the container's or cgroup's CPU and memory limits";
  if (host.gpus_from_target) out["gpus_basis"] = std::string("the target's GPU count and memory, ") + gpu_table_label;
  if (host.cores_not_judged)
    out["cores_not_judged"] = *host.cores_not_judged;
  else
    out.update({{"cpu_cores", host.cores}, {"cpu_cores_per_gpu", host.cores_per_gpu}});
  return out;
}

json uniformity_json(const Uniformity& uniformity) {
  if (uniformity.not_judged) return {{"not_judged", *uniformity.not_judged}};
  json per_gpu = json::object();
  for (const auto& [gpu, value] : uniformity.per_gpu) per_gpu[gpu] = value;
  return {{"metric", uniformity.metric}, {"spread", uniformity.spread}, {"per_gpu", per_gpu}};
}

json checkpoint_json(const CheckpointCost& checkpoint) {
  if (!checkpoint.needed) return nullptr;
  if (checkpoint.not_judged) return {{"not_judged", *checkpoint.not_judged}};
  return {{"write_s", checkpoint.write_s}, {"wall_share", checkpoint.wall_share}, {"metric", checkpoint.metric}};
}

// price x predicted hours (+ the synchronous checkpoint stalls) + extras.
json cost_json(const Profile& profile, const NodeModel& node, const CostOptions& options) {
  if (!options.price_per_hour) return nullptr;
  const auto samples = profile.target_run_samples();
  if (node.step.not_judged) return {{"not_judged", *node.step.not_judged}};
  if (!samples) return {{"not_judged", "the profile gives no target run length"}};
  // A learned job's measured saves are in its step already (step.checkpoint_s).
  const double stall = node.step.checkpoint_s > 0 ? 0 : node.checkpoint.wall_share;
  const double hours = *samples / node.step.samples_per_s / 3600 * (1 + stall);
  const bool tokens = profile.training.target_tokens.has_value();
  const RunCost cost =
      run_cost(options, hours, tokens ? *profile.training.target_tokens : *samples, tokens ? "tokens" : "samples");
  json out = to_json(cost, options);
  if (node.checkpoint.needed && node.checkpoint.not_judged)
    out["note"] = "checkpoint stalls not included (" + *node.checkpoint.not_judged + ")";
  return out;
}

// Skipped probes by reason: each reason once, with the probes it stopped.
json skipped_json(const json& result) {
  json groups = json::array();
  if (!result.is_object() || !result.contains("probes")) return groups;
  for (const SkipGroup& g : group_skipped(result)) groups.push_back({{"reason", g.reason}, {"probes", g.probe_ids}});
  return groups;
}

}  // namespace

json assess(const Profile& profile, const json& result, const CostOptions& options) {
  return assess(profile, result, options, nullptr);
}

json assess(const Profile& profile, const json& measured, const CostOptions& options, const TargetGpus* target) {
  JobDemand job;
  job.profile = &profile;
  return assess(job, measured, options, target);
}

json assess(const JobDemand& job, const json& measured, const CostOptions& options, const TargetGpus* target) {
  const Profile& profile = *job.profile;
  const json result = target ? apply_target(measured, *target) : measured;
  const NodeModel node = build_model(job, result);
  json resources = json::array();
  for (const Stage& stage : node.stages)
    resources.push_back(to_json(stage, node.step.not_judged ? 0 : node.step.step_s));
  json rules = json::array();
  std::vector<Rule> judged = judge_rules(profile, node);
  // The node's own GPU figures against published references; for a target they are not its GPUs.
  const Grading grading = grade_expected(measured, profile.expect);
  if (!target)
    if (std::optional<Rule> rule = expected_values_rule(grading)) judged.push_back(*rule);
  for (const Rule& rule : judged) rules.push_back(to_json(rule));
  json out{{"profile", profile.name},
          {"demand", job.measured ? "the job's own measurements (a learn result) against this node's figures"
                                  : "the profile's declared demand against this node's figures"},
          {"profile_path", profile.source_path},
          {"category", to_string(profile.category)},
          {"gpus", node.shape.gpus},
          {"skipped", skipped_json(result)},
          {"step", step_json(node)},
          {"resources", resources},
          {"memory", memory_json(node.memory)},
          {"host", host_json(node.host)},
          {"uniformity", uniformity_json(node.uniformity)},
          {"checkpoint", checkpoint_json(node.checkpoint)},
          {"rules", rules},
          {"overall", overall_verdict(judged)},
          {"bottleneck", bottleneck(profile, node)},
          {"upgrade", upgrade_advice(profile, node)},
          {"cost", cost_json(profile, node, options)}};
  if (target) {
    out["target_gpus"] = target_json(*target, measured);
    // Compute from a datasheet peak (no published GEMM for this model and dtype): the verdict says so.
    if (const auto rate = target->model.gemm_rate(profile.model.dtype); rate && rate->from_peak)
      out["target_gpus"]["step_from_datasheet_peak"] =
          fmt::format("the step is predicted from a datasheet peak: {} GEMM {:.4g} TFLOP/s, {}", profile.model.dtype,
                      rate->value, rate->label());
    // Derived from the table's figures too: the step, the bottleneck's need, the predicted hours.
    const std::string basis = std::string("GPU side from the ") + gpu_table_label;
    if (!node.step.not_judged) out["step"]["basis"] = basis;
    out["bottleneck"]["basis"] = basis;
    if (out["cost"].is_object()) out["cost"]["basis"] = basis;
  }
  out["expected"] = to_json(grading);
  return out;
}

int exit_code_for(const json& assessment) {
  const bool failed = assessment.contains("overall") && assessment["overall"].is_object() &&
                      assessment["overall"].value("verdict", "") == "FAIL";
  return failed ? 1 : 0;
}

}  // namespace nodeaudit::score
