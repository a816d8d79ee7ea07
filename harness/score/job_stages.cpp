// The stages of a learned job on a node (stages.hpp): what the job measured about itself on its own
// node, carried to this one by the figures both nodes have. Where a figure one side needs is missing,
// the stage says which and is not judged; no figure is taken for unlimited capacity.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/core/units.hpp"
#include "harness/score/label_selectors.hpp"
#include "harness/score/resource_probes.hpp"
#include "harness/score/result_view.hpp"
#include "harness/score/stages.hpp"

namespace nodeaudit::score {

using nlohmann::json;
namespace R = resource_figure;

namespace {

std::string ms(double s) { return format_duration(s); }

// The GPU model a result's node has (env.gpus[0].name), empty without one.
std::string gpu_model(const json& result) {
  if (!result.contains("env") || !result["env"].contains("gpus") || !result["env"]["gpus"].is_array() ||
      result["env"]["gpus"].empty())
    return "";
  return result["env"]["gpus"][0].value("name", "");
}

std::optional<double> gemm_rate(const json& result, const std::string& dtype, std::string& source) {
  const ProbeState probe = probe_state(result, R::compute.probe);
  if (!probe.measured()) {
    source = probe.why;
    return std::nullopt;
  }
  const auto figure = slowest_gpu(*probe.probe, R::compute.probe, R::compute.metric, {{"dtype", dtype}});
  if (!figure || figure->value <= 0) {
    source = fmt::format("{} has no {} [dtype={}] metric", R::compute.probe, R::compute.metric, dtype);
    return std::nullopt;
  }
  source = figure->source;
  return figure->value;
}

// This node's time for the job's CPU work relative to the job's node. The same CPU model on both:
// equal (two runs of a decode benchmark on one model differ by their load, not by the cores). Else
// the native decoder's single-core rate (host.decode images_per_s_per_core, full stage: CPU-bound,
// one thread), which both nodes must have measured. host.dataloader's per-worker rate is not used:
// with raw samples it times inter-process hand-over more than the cores.
struct SpeedRatio {
  double factor = 1;
  std::string how;
};

std::string cpu_model(const json& result) {
  if (!result.contains("env") || !result["env"].contains("host") || !result["env"]["host"].is_object()) return "";
  return result["env"]["host"].value("cpu_model", "");
}

SpeedRatio per_core_speed(const json& job_node, const json& result) {
  const std::string model = cpu_model(result);
  if (!model.empty() && model == cpu_model(job_node)) return {1, "x1: the same CPU model on both nodes (" + model + ")"};
  const ResourceFigure& used = R::native_decode_per_core;
  const ProbeState here = probe_state(result, used.probe), there = probe_state(job_node, used.probe);
  std::optional<Figure> rate_here, rate_there;
  if (here.measured()) rate_here = best_series(*here.probe, used.probe, used.metric, label_selector::full_decode_stage);
  if (there.measured())
    rate_there = best_series(*there.probe, used.probe, used.metric, label_selector::full_decode_stage);
  if (rate_here && rate_there && rate_here->value > 0 && rate_there->value > 0)
    return {rate_there->value / rate_here->value,
            fmt::format("x{:.2f}: host.decode images_per_s_per_core [stage=full] {:.4g} on the job's node ({}) / {:.4g} here ({})",
                        rate_there->value / rate_here->value, rate_there->value, cpu_model(job_node), rate_here->value, model)};
  return {0, fmt::format("the CPU models differ ({} on the job's node, {} here) and host.decode was not measured on both "
                         "(`nodeaudit learn --audit` on the job's node, `nodeaudit run --only host.decode` here)",
                         cpu_model(job_node).empty() ? "unknown" : cpu_model(job_node), model.empty() ? "unknown" : model)};
}

}  // namespace

std::optional<double> job_cores(const json& result) {
  if (!result.contains("env") || !result["env"].is_object()) return std::nullopt;
  const json& env = result["env"];
  std::optional<double> cores;
  if (env.contains("host")) cores = number_at(env["host"], "threads");
  if (!cores || *cores <= 0) cores = env.contains("host") ? number_at(env["host"], "cores") : std::nullopt;
  if (!cores) return std::nullopt;
  if (env.contains("container") && env["container"].is_object()) {
    const json& c = env["container"];
    if (const auto allowed = number_at(c, "cpus_allowed"); allowed && *allowed > 0) cores = std::min(*cores, *allowed);
    if (const auto quota = number_at(c, "cpu_limit"); quota && *quota > 0) cores = std::min(*cores, *quota);
  }
  return cores;
}

Stage measured_compute_stage(const Profile& profile, const JobMeasured& job, const json& job_node, const json& result,
                             const StepShape& shape) {
  const std::string here = gpu_model(result);
  Stage stage;
  stage.resource = "compute";
  stage.demand = job.compute_s;
  stage.demand_unit = "s per step on the job's node";
  stage.capacity_unit = "x the job's node";
  if (here == job.gpu_model) {
    stage.capacity = 1;
    stage.time_s = job.compute_s;
    stage.capacity_metric = job.gpu_model.empty() ? "the job's measured compute per step (no GPU on either node)"
                                                  : "the job's measured compute per step (the same GPU model: " + here + ")";
    return stage;
  }
  if (job.gpu_model.empty()) {
    // The job ran without a GPU: its CPU-side compute says nothing of a GPU; its counted FLOPs do.
    Stage flops = compute_stage(profile, result, shape);
    flops.note = "the profile's counted FLOPs at this node's GEMM rate (the job was learned without a GPU); " + flops.note;
    return flops;
  }
  std::string there_source, here_source;
  const auto there = gemm_rate(job_node, profile.model.dtype, there_source);
  const auto rate_here = gemm_rate(result, profile.model.dtype, here_source);
  if (!there || !rate_here) {
    stage.not_judged = fmt::format("the job ran on {} and this node has {}: scaling its compute needs gpu.gemm on both "
                                   "(job's node: {}; this node: {}); run `nodeaudit learn --audit` and `nodeaudit run --only gpu.gemm`",
                                   job.gpu_model, here.empty() ? "no GPU" : here, there ? "measured" : there_source,
                                   rate_here ? "measured" : here_source);
    return stage;
  }
  stage.capacity = *rate_here / *there;
  stage.time_s = job.compute_s * *there / *rate_here;
  stage.capacity_metric = fmt::format("the job's measured compute scaled by GEMM rates: {} here / {} on the job's {}",
                                      here_source, there_source, job.gpu_model);
  return stage;
}

// The loader's CPU per step over the workers' parallelism on the cores the job gets here, and the
// whole tree's CPU over those cores (a floor: the step cannot take less than its CPU work needs).
Stage measured_cpu_stage(const JobMeasured& job, const json& job_node, const json& result) {
  Stage stage;
  stage.resource = "cpu";
  stage.demand = job.tree_cpu_s;
  stage.demand_unit = "CPU s per step on the job's node";
  stage.capacity_unit = "cores";
  const auto cores = job_cores(result);
  if (!cores || *cores <= 0) {
    stage.not_judged = "env.host.cores not recorded; run `nodeaudit run` on the node";
    return stage;
  }
  const SpeedRatio speed = per_core_speed(job_node, result);
  if (speed.factor <= 0) {
    stage.not_judged = speed.how;
    return stage;
  }
  const int workers = job.loader_workers * job.world_size;
  const double loader_cpu_s = job.loader_cpu_s() * speed.factor;
  stage.capacity = *cores;
  stage.serial = workers == 0;
  const double parallel = workers == 0 ? 1.0 : std::min<double>(workers, *cores);
  const double loader_s = loader_cpu_s / parallel;
  const double floor_s = job.tree_cpu_s * speed.factor / *cores;
  stage.time_s = stage.serial ? loader_s : std::max(loader_s, floor_s);
  stage.fetch_s = stage.serial ? 0 : job.fetch_s * speed.factor;
  stage.capacity_metric = fmt::format("{:.3g} cores here (env: cpuset and CPU quota); per-core speed {}", *cores, speed.how);
  stage.note = fmt::format("loader {} CPU per step over {} (workers {}, cores {:.3g}) = {}; the job's whole CPU {} per step over {:.3g} cores = {}",
                           ms(loader_cpu_s), fmt::format("{:.3g}", parallel), workers, *cores, ms(loader_s),
                           ms(job.tree_cpu_s * speed.factor), *cores, ms(floor_s));
  // Workers that keep up on average still deliver some batches late when they share the cores with
  // the rank: the wait the job measured on its own node is the least it waits where its CPUs feed it
  // no faster (no more cores, no faster a core). The model's mean loader time cannot see those waits.
  if (!stage.serial && job.cores_available > 0 && *cores <= job.cores_available && speed.factor >= 1 &&
      job.data_wait_s * speed.factor > stage.fetch_s) {
    stage.fetch_s = job.data_wait_s * speed.factor;
    stage.note += fmt::format("; at least the {} a step the job waited on its own node ({:.3g} cores), where its loader was no slower",
                              ms(stage.fetch_s), job.cores_available);
  }
  return stage;
}

// Synchronous saves per step: as measured, scaled by the two nodes' checkpoint write rates when both
// measured one.
Stage measured_checkpoint_stage(const JobMeasured& job, const json& job_node, const json& result) {
  Stage stage;
  stage.resource = "checkpoint";
  stage.demand = job.checkpoint_s;
  stage.demand_unit = "s per step on the job's node";
  stage.capacity_unit = "x the job's node";
  if (job.checkpoint_s <= 0) {
    stage.needed = false;
    stage.note = "the job saved no checkpoint in its measured steps";
    return stage;
  }
  const ProbeState here = probe_state(result, R::checkpoint.probe), there = probe_state(job_node, R::checkpoint.probe);
  std::optional<Figure> rate_here, rate_there;
  if (here.measured()) rate_here = best_series(*here.probe, R::checkpoint.probe, R::checkpoint.metric, {});
  if (there.measured()) rate_there = best_series(*there.probe, R::checkpoint.probe, R::checkpoint.metric, {});
  stage.capacity = 1;
  stage.time_s = job.checkpoint_s;
  stage.capacity_metric = "the job's measured save time per step (storage.checkpoint not measured on both nodes: taken as the job's node's)";
  if (rate_here && rate_there && rate_here->value > 0 && rate_there->value > 0) {
    stage.capacity = rate_here->value / rate_there->value;
    stage.time_s = job.checkpoint_s * rate_there->value / rate_here->value;
    stage.capacity_metric = fmt::format("the job's measured save time scaled by {} here / on the job's node", rate_here->source);
  }
  return stage;
}

}  // namespace nodeaudit::score
