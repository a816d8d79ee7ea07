// pipeline.step's plan: the profile, real GPUs or the GPU emulated, the batch, the compute and
// all-reduce work, the queue and the checkpoint schedule, checked against what the node can hold.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "harness/core/units.hpp"
#include "harness/score/result_view.hpp"
#include "harness/score/gpu_table.hpp"
#include "harness/score/step_demand.hpp"
#include "io/storage_target.hpp"
#include "pipeline/samples/jpeg_samples.hpp"
#include "pipeline/samples/workload_profile.hpp"
#include "pipeline/step/pipeline_run.hpp"

namespace nodeaudit::pipeline {
namespace {


// comm.allreduce busbw from a result file, at the size nearest (in ratio) the gradient bytes,
// preferring the runs over `gpus` GPUs. Empty `error` on success.
double busbw_from_result(const std::string& path, double gradient_bytes, int gpus, std::string& source,
                         std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = fmt::format("--comm-result {}: cannot be read ({}); give a result file of a run with comm.allreduce", path,
                        std::strerror(errno));
    return 0;
  }
  nlohmann::json result;
  try {
    result = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    error = fmt::format("--comm-result {}: not a readable result document ({})", path, e.what());
    return 0;
  }
  const score::ProbeState probe = score::probe_state(result, "comm.allreduce");
  if (!probe.measured()) {
    error = fmt::format("--comm-result {}: no measured comm.allreduce ({})", path, probe.why);
    return 0;
  }
  auto series = score::select_metrics(*probe.probe, "busbw", {{"gpus", std::to_string(gpus)}});
  if (series.empty()) series = score::select_metrics(*probe.probe, "busbw", {});
  const nlohmann::json* nearest = nullptr;
  double best = 0;
  for (const nlohmann::json* metric : series) {
    const double size = std::atof(score::label_of(*metric, "size").c_str());
    if (size <= 0) continue;
    const double distance = std::fabs(std::log(size / gradient_bytes));
    if (!nearest || distance < best) nearest = metric, best = distance;
  }
  if (!nearest || score::metric_median(*nearest) <= 0) {
    error = fmt::format("--comm-result {}: comm.allreduce has no busbw [size] metric", path);
    return 0;
  }
  source = fmt::format("measured: comm.allreduce busbw [size={}, gpus={}] median in {}",
                       score::label_of(*nearest, "size"), score::label_of(*nearest, "gpus"), path);
  return score::metric_median(*nearest);
}

void plan_decode(const ParamValues& p, PipelinePlan& plan) {
  const std::string& decode = p.text("decode");
  const bool profile_decodes = plan.profile.data.decode == score::DecodeKind::jpeg;
  plan.decode_jpeg = decode == "jpeg" || (decode == "auto" && profile_decodes);
  plan.decode_source = decode == "auto" ? fmt::format("profile {} data.decode = {}", plan.profile.name,
                                                      score::to_string(plan.profile.data.decode))
                                        : "--decode " + decode;
}

std::string plan_comm(const ParamValues& p, const score::GpuModel* gpu, PipelinePlan& plan) {
  const int gpus = plan.loader_only() ? 1
                   : plan.real()      ? static_cast<int>(plan.devices.size())
                                      : static_cast<int>(p.integer("gpus-in-node"));
  double busbw = p.real("busbw");
  std::string source = "--busbw (given)", error;
  if (busbw <= 0 && !p.text("comm-result").empty())
    busbw = busbw_from_result(p.text("comm-result"), plan.profile.gradient_bytes(), gpus, source, error);
  if (!error.empty()) return error;
  if (busbw <= 0 && gpu)
    busbw = table_busbw(plan.profile, *gpu, source);
  if (busbw <= 0 && gpu && gpus > 1 && plan.profile.gradient_bytes() > 0)
    return fmt::format("the GPU table has no all-reduce figure for {}: give --busbw or --comm-result", gpu->name);
  plan.comm = derive_comm(plan.profile, gpus, busbw, source);
  return "";
}

std::string plan_compute(const ParamValues& p, const score::GpuModel* gpu, PipelinePlan& plan) {
  std::string error;
  if (plan.real()) {
    plan.compute.flops_per_step = plan.samples_per_step * plan.profile.flops_per_sample();
    plan.compute.source = "measured: cuBLASLt GEMMs of the step's FLOPs on these GPUs (CUDA events)";
    plan.gemms = plan_step_gemms(plan.compute.flops_per_step, gemm_dtype_for(plan.profile, error));
    plan.allreduce = plan_step_allreduce(plan.profile, plan.gemms);
    return error;
  }
  if (gpu)
    plan.compute = derive_compute(plan.profile, plan.samples_per_step, *gpu, error);
  else
    plan.compute = ComputeDemand{0, 0, "--emulate-compute none: loader only, no compute"};
  if (p.duration_s("compute-time") > 0) {
    plan.compute.compute_s = p.duration_s("compute-time");
    plan.compute.source = "--compute-time";
    error.clear();
  }
  return error;
}

// Real GPUs for auto when CUDA sees one and no emulated compute time is given; else the GPU named,
// h100 for auto, or none. Empty on success; else the unknown name and what is accepted.
std::string choose_compute(const ParamValues& p, const GpuAvailability& gpus, PipelinePlan& plan, const score::GpuModel*& gpu) {
  const std::string& wanted = p.text("emulate-compute");
  const bool framework = p.text("loader") == "pytorch";
  if (wanted == "auto") {
    if (!gpus.devices.empty() && p.duration_s("compute-time") == 0 && !framework) {
      plan.devices = gpus.devices;
      plan.gpu = "real";
      gpu = nullptr;
      return "";
    }
    plan.emulation_reason = p.duration_s("compute-time") > 0 ? "--compute-time given"
                            : framework ? "--loader pytorch: the DataLoader's process emulates the step (the native loader feeds real GPUs)"
                            : gpus.why_none.empty()          ? "no GPU was looked for"
                                                             : gpus.why_none;
    gpu = score::find_gpu_model("h100");
  } else {
    gpu = score::find_gpu_model(wanted);
    if (!gpu && wanted != "none")
      return fmt::format("--emulate-compute {}: unknown GPU; accepted: auto, {}, none", wanted, accepted_gpu_names());
    plan.emulation_reason = "--emulate-compute " + wanted;
  }
  plan.gpu = gpu ? gpu->name : "none";
  return "";
}

}  // namespace

int step_cap(Level level) {
  switch (level) {
    case Level::quick: return 20;
    case Level::standard: return 200;
    case Level::soak: return 2000;
  }
  return 20;
}

int planned_step_count(const ParamValues& params, Level level, double compute_s) {
  if (params.integer("steps") > 0) return static_cast<int>(params.integer("steps"));
  constexpr int min_steps = 4;
  const int cap = step_cap(level);
  if (compute_s <= 0) return cap;
  const double timed = std::ceil(params.duration_s("step-budget") / compute_s);
  return static_cast<int>(std::clamp(1 + timed, static_cast<double>(min_steps), static_cast<double>(cap)));
}

int round_step_count(int planned, const ProbeContext& ctx) {
  return 1 + static_cast<int>(ctx.round_share(std::max(1, planned - 1), 1));
}

void complete_real_plan(PipelinePlan& plan, const GpuCalibration& calibration, int steps, bool busbw_given) {
  plan.compute.compute_s = calibration.compute_s;
  plan.steps = steps;
  if (!busbw_given && calibration.allreduce_s > 0) {
    const double g = static_cast<double>(plan.devices.size());
    const double busbw = plan.allreduce.bytes * 2 * (g - 1) / g / calibration.allreduce_s / 1e9;
    plan.comm = derive_comm(plan.profile, static_cast<int>(plan.devices.size()), busbw,
                            "measured: one step's all-reduce alone on these GPUs before the run (NCCL, CUDA events)");
  }
  if (plan.checkpoint_mode != CheckpointMode::off)
    plan.checkpoint = scale_checkpoints(plan.profile, steps, calibration.compute_s);
}

std::string make_plan(const ProbeContext& ctx, PipelinePlan& plan, const GpuAvailability& gpus) {
  const auto& p = ctx.params();
  try {
    plan.profile = workload_profile(ctx);
  } catch (const std::exception& e) {
    return e.what();
  }
  const score::GpuModel* gpu = nullptr;
  if (std::string error = choose_compute(p, gpus, plan, gpu); !error.empty()) return error;
  plan.samples_per_step =
      p.integer("batch-size") > 0 ? static_cast<int>(p.integer("batch-size")) : plan.profile.samples_per_step_per_gpu();
  const double sample_bytes = p.size_bytes("sample-size") > 0 ? static_cast<double>(p.size_bytes("sample-size"))
                                                              : std::round(plan.profile.data.sample_bytes);
  if (sample_bytes < 1 || sample_bytes > (64 << 20))
    return fmt::format("profile {}: sample size {} is outside 1 B..64 MiB; give --sample-size", plan.profile.name,
                       format_bytes(sample_bytes));
  plan.sample_bytes = static_cast<std::uint32_t>(sample_bytes);
  plan_decode(p, plan);
  plan.framework_loader = p.text("loader") == "pytorch";
  if (plan.framework_loader && p.boolean("direct"))
    return "--direct true reads with O_DIRECT, which only the native loader does; a PyTorch DataLoader reads through the "
           "page cache: use --direct false with --loader pytorch";
  if (std::string error = plan_compute(p, gpu, plan); !error.empty()) return error;
  if (std::string error = plan_comm(p, gpu, plan); !error.empty()) return error;
  // JPEGs vary in size: reserve twice the mean per sample; decoded tensors need their own area.
  const double per_sample = sample_bytes * (plan.decode_jpeg ? 2 : 1) + (plan.decode_jpeg ? static_cast<double>(SampleDecoder::tensor_bytes) : 0);
  // --workers is per GPU, as DDP runs a DataLoader in each GPU's process; each step takes one batch
  // per GPU, so the queue holds at least that many, by default two per worker (prefetch_factor).
  const int per_step = plan.batches_per_step();
  plan.workers = static_cast<int>(p.integer("workers")) * per_step;
  plan.queue_depth = p.integer("queue-depth") > 0 ? static_cast<int>(p.integer("queue-depth")) : 2 * plan.workers;
  if (plan.queue_depth < per_step)
    return fmt::format("--queue-depth {}: each step takes one batch per GPU; give at least {} (the GPUs chosen)",
                       plan.queue_depth, per_step);
  const double batch_bytes = static_cast<double>(plan.samples_per_step) * per_sample * plan.queue_depth;
  if (batch_bytes > static_cast<double>(io::mem_available_bytes()) / 2)
    return fmt::format(
        "--queue-depth {} batches of {} samples ({} each in memory) need {}, over half the available memory",
        plan.queue_depth, plan.samples_per_step, format_bytes(per_sample), format_bytes(batch_bytes));
  if (p.integer("steps") == 1)
    return "--steps 1: must be 0 (as many as --step-budget holds) or at least 2 (the first step is not timed)";
  // The framework loader's steps save no checkpoints (AU leaves them apart either way).
  plan.checkpoint_mode = plan.framework_loader ? CheckpointMode::off : *parse_checkpoint_mode(p.text("checkpoint"));
  // Real GPUs: the compute time, so the count, is known once they are calibrated (complete_real_plan).
  plan.steps = round_step_count(planned_step_count(p, ctx.settings().level, plan.real() ? 0 : plan.compute.compute_s), ctx);
  if (plan.checkpoint_mode != CheckpointMode::off && !plan.real())
    plan.checkpoint = scale_checkpoints(plan.profile, plan.steps, plan.compute.compute_s);
  return "";
}

}  // namespace nodeaudit::pipeline
