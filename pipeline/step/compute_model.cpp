#include "pipeline/step/compute_model.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "harness/score/result_view.hpp"

namespace nodeaudit::pipeline {

std::string accepted_gpu_names() { return score::known_gpu_models(); }

ComputeDemand derive_compute(const score::Profile& profile, int samples_per_step, const score::GpuModel& gpu,
                             std::string& error) {
  ComputeDemand demand;
  const std::string& dtype = profile.model.dtype;
  const std::optional<score::SourcedValue> rate = gpu.gemm_rate(dtype);
  if (!rate) {
    error = fmt::format("profile {} computes in {}; the GPU table has no {} rate for {}: give --compute-time",
                        profile.name, dtype, dtype, gpu.name);
    return demand;
  }
  demand.flops_per_step = samples_per_step * profile.flops_per_sample();
  demand.compute_s = profile.compute_time_s(demand.flops_per_step / 1e12, rate->value);
  demand.source = fmt::format("{:.3g} FLOP per step / ({:.4g} TFLOP/s {} {} GEMM x {:.2f} model efficiency; {})",
                              demand.flops_per_step, rate->value, gpu.name, dtype, profile.training.model_efficiency,
                              rate->label());
  return demand;
}

double table_busbw(const score::Profile& profile, const score::GpuModel& gpu, std::string& source) {
  if (!gpu.allreduce || gpu.allreduce->points.empty()) return 0;
  const score::AllreducePoint point = gpu.allreduce->nearest(profile.gradient_bytes());
  const std::string label = gpu.allreduce->measured ? "published measurement (another node: " + gpu.allreduce->source + ")"
                                                    : "datasheet peak, an upper bound (" + gpu.allreduce->source + ")";
  source = point.bytes > 0 ? fmt::format("{} at {:.0f} B (nearest the {:.0f} MB of gradients)", label, point.bytes,
                                         profile.gradient_bytes() / 1e6)
                           : label;
  return point.busbw_gbps;
}

CommDemand derive_comm(const score::Profile& profile, int gpus, double busbw_gbps, std::string busbw_source) {
  CommDemand comm;
  comm.gpus = gpus;
  comm.gradient_bytes = profile.gradient_bytes();
  comm.busbw_gbps = busbw_gbps;
  comm.busbw_source = std::move(busbw_source);
  if (gpus < 2 || comm.gradient_bytes <= 0 || busbw_gbps <= 0) return comm;
  const double g = gpus;
  const double collectives =
      profile.training.sharding == score::Sharding::full ? 1.5 * profile.training.gradient_accumulation : 1.0;
  comm.bus_bytes = comm.gradient_bytes * 2 * (g - 1) / g * collectives;
  comm.time_s = comm.bus_bytes / (busbw_gbps * 1e9);
  comm.exposed_s = comm.time_s * (1 - profile.training.comm_overlap);
  return comm;
}

CheckpointPlan scale_checkpoints(const score::Profile& profile, int steps, double compute_s) {
  CheckpointPlan plan;
  const double interval_s = profile.training.checkpoint_interval_s;
  if (profile.training.checkpoint_bytes <= 0 || interval_s <= 0 || steps < 2) return plan;
  plan.every_steps = std::max(1, steps / 2);
  const double run_interval_s = plan.every_steps * compute_s;
  plan.bytes = std::max(4096.0, profile.training.checkpoint_bytes * run_interval_s / interval_s);
  return plan;
}

}  // namespace nodeaudit::pipeline
