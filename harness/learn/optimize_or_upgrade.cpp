#include "harness/learn/optimize_or_upgrade.hpp"

#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace nodeaudit::learn {

using nlohmann::json;

namespace {

std::string pct(double fraction) {
  return fmt::format("{:.0f}%", 100 * fraction);
}

std::string figure(const char* what, const SourcedFigure& f) {
  return fmt::format("{} {} ({})", what, pct(f.value), f.source);
}

}  // namespace

UpgradeInputs upgrade_inputs(const LearnedJob& job, std::optional<double> gpu_peak_bytes, const json& gpus_env, const json* target_assessment,
                             const std::string& target_label, std::optional<double> gpu_util_pct, std::optional<double> all_reduce_share) {
  UpgradeInputs in;
  const StepShares& s = job.timing.shares;
  in.data_wait_share = {s.data_wait, "measured: data wait share of the measured steps"};
  if (all_reduce_share) in.comm_share = {*all_reduce_share, "measured: the job's all-reduce time over its step"};
  else if (job.world_size > 1) in.comm_not_judged = "communication not judged: the job's all-reduce time was not measured";
  if (job.gpu) {
    if (gpu_util_pct) in.compute_share = {*gpu_util_pct / 100, "measured: NVML GPU utilization over the measured steps"};
    else in.compute_share = {1 - s.data_wait - s.checkpoint, "CPU wall-clock, not GPU: the step's time outside data wait and checkpoint"};
    const double total = gpus_env.is_array() && !gpus_env.empty() ? gpus_env[0].value("memory_total_bytes", 0.0) : 0.0;
    if (total > 0 && gpu_peak_bytes && *gpu_peak_bytes > 0)
      in.memory_share = {*gpu_peak_bytes / total, "measured: the largest rank's peak allocated of the GPU's memory"};
    return in;
  }
  if (!target_assessment) {
    in.not_judged = "no GPU on this node: give --target-gpus (e.g. h100x8) to judge the compute side on the GPUs the job would run on";
    return in;
  }
  const json& step = (*target_assessment)["step"];
  const json& memory = (*target_assessment)["memory"];
  const std::string source = "predicted for " + target_label + " from the GPU table, not measured";
  if (step.contains("gpu_utilization")) in.compute_share = {step["gpu_utilization"].get<double>(), source};
  else in.not_judged = "the step on " + target_label + " is not judged: " + step.value("not_judged", std::string("no figure"));
  if (memory.contains("peak_share")) in.memory_share = {memory["peak_share"].get<double>(), source};
  return in;
}

std::string optimize_or_upgrade(const UpgradeInputs& in, const score::Thresholds& t) {
  if (!in.not_judged.empty()) return "optimize or upgrade: not judged (" + in.not_judged + ")";
  std::vector<std::string> blockers, figures;
  if (in.compute_share) {
    figures.push_back(figure("compute", *in.compute_share));
    if (in.compute_share->value <= t.upgrade_utilization_min)
      blockers.push_back(fmt::format("compute {} <= {}", pct(in.compute_share->value), pct(t.upgrade_utilization_min)));
  }
  if (in.memory_share) {
    figures.push_back(figure("GPU memory", *in.memory_share));
    if (in.memory_share->value < t.upgrade_memory_min)
      blockers.push_back(fmt::format("GPU memory {} used < {}", pct(in.memory_share->value), pct(t.upgrade_memory_min)));
  } else {
    blockers.push_back("GPU memory use not known");
  }
  figures.push_back(figure("data wait", in.data_wait_share));
  if (in.data_wait_share.value > t.upgrade_wait_max)
    blockers.push_back(fmt::format("data wait {} > {}", pct(in.data_wait_share.value), pct(t.upgrade_wait_max)));
  if (in.comm_share) {
    figures.push_back(figure("communication", *in.comm_share));
    if (in.comm_share->value > t.upgrade_wait_max)
      blockers.push_back(fmt::format("communication {} > {}", pct(in.comm_share->value), pct(t.upgrade_wait_max)));
  } else if (!in.comm_not_judged.empty()) {
    figures.push_back(in.comm_not_judged);
    blockers.push_back("communication not known");
  }
  std::string text = blockers.empty() ? "upgrade is justified" : "optimize first: " + fmt::format("{}", fmt::join(blockers, "; "));
  return text + fmt::format(" — {}", fmt::join(figures, ", "));
}

}  // namespace nodeaudit::learn
