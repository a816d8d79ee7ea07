#include "harness/score/model.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/score/resource_probes.hpp"

namespace nodeaudit::score {

using nlohmann::json;

const Stage* NodeModel::stage(const std::string& resource) const {
  for (const Stage& candidate : stages)
    if (candidate.resource == resource) return &candidate;
  return nullptr;
}

namespace {

// Loader stages overlap compute (a loader without workers adds to it); exposed communication and
// synchronous checkpoint saves do not. A needed stage that was not measured is listed, never taken
// for unlimited capacity: the step is then a lower bound.
StepModel predict_step(const Profile& profile, const NodeModel& node) {
  StepModel step;
  const Stage& compute = *node.stage("compute");
  if (!compute.judged()) {
    step.not_judged = "compute not measured (" + compute.not_judged.value_or("") + ")";
    return step;
  }
  step.gpu_busy_s = compute.time_s;
  double fetch_s = 0;
  for (const Stage& stage : node.stages) {
    if (!stage.needed || stage.resource == "compute") continue;
    if (!stage.judged()) {
      step.unmeasured.push_back(fmt::format("{} ({})", stage.resource, *stage.not_judged));
      continue;
    }
    if (stage.resource == "gpu_memory_bandwidth")
      step.gpu_busy_s = std::max(step.gpu_busy_s, stage.time_s);
    else if (stage.resource == "communication")
      step.exposed_comm_s = stage.exposed_time_s;
    else if (stage.resource == "checkpoint")
      step.checkpoint_s = stage.time_s;
    else if (stage.time_s > step.loader_s) {
      step.loader_s = stage.time_s;
      step.loader_resource = stage.resource;
      step.loader_serial = stage.serial;
    }
    fetch_s = std::max(fetch_s, stage.fetch_s);
  }
  const double gpu_side_s = step.gpu_busy_s + step.exposed_comm_s;
  // Receiving a batch costs the rank its fetch time even when the workers are ahead.
  const double loader_wait_s = step.loader_serial ? step.loader_s : std::max(fetch_s, step.loader_s - gpu_side_s);
  step.step_s = gpu_side_s + loader_wait_s + step.checkpoint_s;
  step.utilization = step.gpu_busy_s / step.step_s;
  step.exposed_comm_share = step.exposed_comm_s / step.step_s;
  step.data_wait_share = loader_wait_s / step.step_s;
  step.samples_per_s = node.shape.samples_per_node / step.step_s;
  step.tokens_per_s = step.samples_per_s * profile.model.tokens_per_sample.value_or(0);
  return step;
}

// weights + gradients + optimizer state (divided across the node's GPUs when fully sharded) + activations.
MemoryFit fit_memory(const Profile& profile, const json& result, const StepShape& shape) {
  MemoryFit fit;
  const double shards = profile.training.sharding == Sharding::full ? std::max(shape.gpus, 1) : 1;
  fit.model_state_bytes = profile.model_state_bytes() / shards;
  fit.activation_bytes = profile.model.activation_bytes_per_sample * profile.training.micro_batch_per_gpu;
  fit.peak_bytes = fit.model_state_bytes + fit.activation_bytes;
  const ResourceFigure& used = resource_figure::gpu_memory_capacity;
  const ProbeState probe = probe_state(result, used.probe);
  if (!probe.measured()) {
    fit.not_judged = probe.why;
    return fit;
  }
  const auto usable = slowest_gpu(*probe.probe, used.probe, used.metric, {});
  if (!usable || usable->value <= 0) {
    fit.not_judged = fmt::format("{} has no {} metric", used.probe, used.metric);
    return fit;
  }
  fit.usable_bytes = usable->value;
  fit.metric = usable->source;
  fit.datasheet = usable->datasheet;
  return fit;
}

HostFit fit_host(const EnvFigures& env) {
  HostFit host;
  host.gpu_memory_total_bytes = env.gpu_memory_total_bytes;
  host.gpus_from_target = env.gpus_from_target;
  host.limited = env.limited;
  const std::string no_gpus = "no GPUs in env.gpus" + (env.gpu_status.empty() ? "" : " (" + env.gpu_status + ")");
  if (!env.ram_total_bytes)
    host.ram_not_judged = "env.host.ram_total_bytes not recorded";
  else if (env.gpus == 0 || env.gpu_memory_total_bytes <= 0)
    host.ram_not_judged = no_gpus;
  else
    host.ram_total_bytes = *env.ram_total_bytes;
  if (!env.cores)
    host.cores_not_judged = "env.host.cores not recorded";
  else if (env.gpus == 0)
    host.cores_not_judged = no_gpus;
  else {
    host.cores = *env.cores;
    host.cores_per_gpu = *env.cores / env.gpus;
  }
  return host;
}

Uniformity gpu_uniformity(const Profile& profile, const json& result) {
  Uniformity uniformity;
  const ResourceFigure& used = resource_figure::compute;
  const ProbeState probe = probe_state(result, used.probe);
  if (!probe.measured()) {
    uniformity.not_judged = probe.why;
    return uniformity;
  }
  if (is_datasheet(*probe.probe)) {
    uniformity.not_judged = "the target's GPUs come from the GPU table: no per-GPU measurements to compare";
    uniformity.applicable = false;
    return uniformity;
  }
  const LabelFilter filter{{"dtype", profile.model.dtype}};
  uniformity.per_gpu = per_gpu_medians(*probe.probe, used.metric, filter);
  uniformity.metric = fmt::format("{} {}{} median per GPU", used.probe, used.metric, describe_filter(filter));
  if (uniformity.per_gpu.empty()) {
    uniformity.not_judged = fmt::format("{} has no {}{} metric", used.probe, used.metric, describe_filter(filter));
    return uniformity;
  }
  double lowest = uniformity.per_gpu.front().second, highest = lowest;
  for (const auto& [gpu, tflops] : uniformity.per_gpu) {
    lowest = std::min(lowest, tflops);
    highest = std::max(highest, tflops);
  }
  uniformity.spread = highest > 0 ? (highest - lowest) / highest : 0;
  return uniformity;
}

CheckpointCost checkpoint_cost(const Profile& profile, const json& result) {
  CheckpointCost cost;
  cost.needed = profile.training.checkpoint_bytes > 0;
  if (!cost.needed) return cost;
  const ResourceFigure& used = resource_figure::checkpoint;
  const ProbeState probe = probe_state(result, used.probe);
  if (!probe.measured()) {
    cost.not_judged = probe.why;
    return cost;
  }
  const auto write = best_series(*probe.probe, used.probe, used.metric, {});
  if (!write || write->value <= 0) {
    cost.not_judged = fmt::format("{} has no {} metric", used.probe, used.metric);
    return cost;
  }
  cost.metric = write->source;
  cost.write_s = profile.training.checkpoint_bytes / (write->value * 1e9);
  cost.wall_share = cost.write_s / profile.training.checkpoint_interval_s;
  return cost;
}

}  // namespace

NodeModel build_model(const Profile& profile, const json& result) {
  JobDemand job;
  job.profile = &profile;
  return build_model(job, result);
}

NodeModel build_model(const JobDemand& job, const json& result) {
  const Profile& profile = *job.profile;
  NodeModel node;
  const EnvFigures env = env_figures(result);
  node.shape = step_shape(profile, env);
  if (job.measured && job.job_node) {
    const JobMeasured& m = *job.measured;
    // The job's own command, as learned: its ranks and their samples, whatever GPUs this node has.
    node.shape.samples_per_node = static_cast<int>(std::lround(m.samples_per_step));
    node.stages.push_back(measured_compute_stage(profile, m, *job.job_node, result, node.shape));
    node.stages.push_back(gpu_memory_bandwidth_stage(profile, result, node.shape));
    Stage storage = storage_stage(profile, result, node.shape, env, job.cold_run, m.resident_bytes);
    if (job.storage_as_measured) storage = Stage{"storage", false, std::nullopt, "the job's own node and data: its reads as it measured them"};
    node.stages.push_back(storage);
    node.stages.push_back(measured_cpu_stage(m, *job.job_node, result));
    // Without a GPU on either node the job's copies and its all-reduce are in its measured compute.
    const bool no_gpus = m.gpu_model.empty() && env.gpus == 0;
    for (Stage stage : {host_to_device_stage(profile, result, node.shape), communication_stage(profile, result, node.shape)}) {
      if (no_gpus) stage = Stage{stage.resource, false, std::nullopt, "no GPU on either node: inside the job's measured compute"};
      node.stages.push_back(stage);
    }
    node.stages.push_back(measured_checkpoint_stage(m, *job.job_node, result));
  } else {
    node.stages.push_back(compute_stage(profile, result, node.shape));
    node.stages.push_back(gpu_memory_bandwidth_stage(profile, result, node.shape));
    node.stages.push_back(storage_stage(profile, result, node.shape, env, job.cold_run));
    node.stages.push_back(cpu_decode_stage(profile, result, node.shape, env));
    node.stages.push_back(host_to_device_stage(profile, result, node.shape));
    node.stages.push_back(communication_stage(profile, result, node.shape));
  }
  node.step = predict_step(profile, node);
  node.memory = fit_memory(profile, result, node.shape);
  node.host = fit_host(env);
  node.uniformity = gpu_uniformity(profile, result);
  node.checkpoint = checkpoint_cost(profile, result);
  return node;
}

}  // namespace nodeaudit::score
