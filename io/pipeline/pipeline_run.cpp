#include "pipeline_run.hpp"

#include <unistd.h>

#include <cmath>

#include <fmt/format.h>

#include "harness/score/score.hpp"
#include "predicted.hpp"
#include "step_pipeline.hpp"
#include "storage_params.hpp"
#include "storage_target.hpp"
#include "units.hpp"

namespace nodeaudit::pipeline {

std::vector<ParamSpec> pipeline_params() {
  using P = ParamSpec;
  return {
      P{.name = "workload", .type = ParamType::text, .default_by_level = same_at_all_levels(""),
        .help = "Workload profile NAME or FILE (--profile is the run-wide option); empty = the run's --profile, else cv-resnet50-imagenet"},
      io::path_param("Directory to create the sample files in (on the storage under test); empty = --data-dir"),
      P{.name = "steps", .type = ParamType::integer, .default_by_level = {"20", "200", "2000"},
        .help = "Training steps to run (the first is not timed)", .min = 2, .max = 10'000'000},
      P{.name = "workers", .type = ParamType::integer, .default_by_level = same_at_all_levels("4"),
        .help = "Loader worker threads, one io_uring each", .min = 1, .max = 256},
      P{.name = "queue-depth", .type = ParamType::integer, .default_by_level = same_at_all_levels("4"),
        .help = "Batches in the prefetch queue", .min = 1, .max = 1024},
      P{.name = "io-depth", .type = ParamType::integer, .default_by_level = same_at_all_levels("8"),
        .help = "Sample reads in flight per loader worker", .min = 1, .max = 4096},
      P{.name = "emulate-compute", .type = ParamType::text, .default_by_level = same_at_all_levels("h100"),
        .help = "GPU whose compute time is emulated: " + accepted_gpu_names()},
      P{.name = "compute-time", .type = ParamType::duration, .default_by_level = same_at_all_levels("0s"),
        .help = "Compute time per step; 0 = derived from the profile for the emulated GPU", .min = 0, .max = 3600},
      P{.name = "batch-size", .type = ParamType::integer, .default_by_level = same_at_all_levels("0"),
        .help = "Samples per step; 0 = the profile's micro-batch x gradient accumulation", .min = 0, .max = 1'000'000},
      P{.name = "sample-size", .type = ParamType::size, .default_by_level = same_at_all_levels("0"),
        .help = "Bytes per sample file; 0 = the profile's data.sample_size", .min = 0, .max = 64 << 20},
      P{.name = "samples", .type = ParamType::integer, .default_by_level = {"2000", "20000", "100000"},
        .help = "Sample files in the data set", .min = 1, .max = 10'000'000},
  };
}

namespace {

std::string profile_name(const ProbeContext& ctx) {
  const std::string& given = ctx.params().text("workload");
  if (!given.empty()) return given;
  return ctx.settings().profile_path.empty() ? "cv-resnet50-imagenet" : ctx.settings().profile_path;
}

}  // namespace

std::string make_plan(const ProbeContext& ctx, PipelinePlan& plan) {
  const auto& p = ctx.params();
  try {
    plan.profile = score::load_profile(profile_name(ctx));
  } catch (const std::exception& e) {
    return e.what();
  }
  const GpuPeak* gpu = find_gpu_peak(p.text("emulate-compute"));
  if (!gpu)
    return fmt::format("--emulate-compute {}: unknown GPU; accepted: {}", p.text("emulate-compute"), accepted_gpu_names());
  plan.gpu = gpu->name;
  plan.samples_per_step = p.integer("batch-size") > 0 ? static_cast<int>(p.integer("batch-size"))
                                                      : plan.profile.samples_per_step_per_gpu();
  const double sample_bytes = p.size_bytes("sample-size") > 0 ? static_cast<double>(p.size_bytes("sample-size"))
                                                              : std::round(plan.profile.data.sample_bytes);
  if (sample_bytes < 1 || sample_bytes > (64 << 20))
    return fmt::format("profile {}: sample size {} is outside 1 B..64 MiB; give --sample-size", plan.profile.name,
                       format_bytes(sample_bytes));
  plan.sample_bytes = static_cast<std::uint32_t>(sample_bytes);
  std::string error;
  plan.compute = derive_compute(plan.profile, plan.samples_per_step, *gpu, error);
  if (p.duration_s("compute-time") > 0) {
    plan.compute.compute_s = p.duration_s("compute-time");
    plan.compute.source = "--compute-time";
    error.clear();
  }
  if (!error.empty()) return error;
  const double batch_bytes = static_cast<double>(plan.samples_per_step) * sample_bytes * static_cast<double>(p.integer("queue-depth"));
  if (batch_bytes > static_cast<double>(io::mem_available_bytes()) / 2)
    return fmt::format("--queue-depth {} batches of {} samples x {} need {}, over half the available memory",
                       p.integer("queue-depth"), plan.samples_per_step, format_bytes(sample_bytes), format_bytes(batch_bytes));
  plan.checkpoint = scale_checkpoints(plan.profile, static_cast<int>(p.integer("steps")), plan.compute.compute_s);
  return "";
}

namespace {

void record_prediction(ProbeContext& ctx, const PipelinePlan& plan, const PipelineFigures& f, const std::string& cache) {
  NodeFigures node;
  const double efficiency = plan.profile.training.model_efficiency;
  if (plan.compute.compute_s > 0 && efficiency > 0)
    node.gemm_tflops = plan.compute.flops_per_step / (plan.compute.compute_s * efficiency) / 1e12;
  node.loader_samples_per_s = f.loader_samples_per_s;
  node.cache = cache;
  node.sample_bytes = plan.sample_bytes;
  const Prediction prediction = predict_utilization(plan.profile, node);
  if (!prediction.utilization_pct) {
    ctx.add_finding(Severity::info, "pipeline.no_prediction", "predicted_utilization not recorded: " + prediction.why_not);
    return;
  }
  ctx.add_value("predicted_utilization", unit::percent, Better::higher, *prediction.utilization_pct);
  ctx.info()["prediction_inputs"] = {{"gemm_tflops", node.gemm_tflops}, {"loader_samples_per_s", node.loader_samples_per_s}};
  if (std::fabs(*prediction.utilization_pct - f.au_pct) > 10)
    ctx.add_finding(Severity::warn, "pipeline.prediction_gap",
                    fmt::format("measured AU {:.1f}% and the scorer's predicted utilization {:.1f}% are more than 10 "
                                "points apart: the balance model or a probe figure is wrong for this pipeline",
                                f.au_pct, *prediction.utilization_pct));
}

void record_metrics(ProbeContext& ctx, const PipelinePlan& plan, const PipelineResult& r, const std::string& cache) {
  const PipelineFigures f = summarize(r, plan.samples_per_step);
  ctx.info()["steps_completed"] = r.steps.size();
  ctx.info()["samples_loaded"] = r.samples_loaded;
  ctx.info()["checkpoints"] = {{"written", r.checkpoints}, {"bytes_each", plan.checkpoint.bytes},
                               {"every_steps", plan.checkpoint.every_steps}};
  if (f.timed_steps == 0) {
    ctx.add_finding(Severity::warn, "pipeline.no_timed_step", "fewer than two steps completed: no AU figure");
    return;
  }
  ctx.info()["timed"] = {{"steps", f.timed_steps}, {"wall_s", f.wall_s}, {"compute_s", f.compute_s},
                         {"data_wait_s", f.data_wait_s}, {"checkpoint_s", f.checkpoint_s}, {"other_s", f.other_s},
                         {"loader_busy_s", r.loader_busy_s}, {"loader_blocked_s", r.loader_blocked_s}};
  ctx.add_value("au", unit::percent, Better::higher, f.au_pct);
  ctx.add_value("samples_per_s", unit::samples_per_s, Better::higher, f.samples_per_s);
  ctx.add_value("data_wait_s", unit::s, Better::lower, f.data_wait_s);
  const double wall = f.wall_s;
  ctx.add_value("stage_busy_pct", unit::percent, Better::higher, f.compute_s / wall * 100, {{"stage", "compute"}});
  ctx.add_value("stage_busy_pct", unit::percent, Better::lower, f.data_wait_s / wall * 100, {{"stage", "data_wait"}});
  ctx.add_value("stage_busy_pct", unit::percent, Better::lower, f.checkpoint_s / wall * 100, {{"stage", "checkpoint"}});
  ctx.add_value("stage_busy_pct", unit::percent, Better::lower, f.other_s / wall * 100, {{"stage", "other"}});
  ctx.add_value("stage_busy_pct", unit::percent, Better::lower, f.loader_busy_pct, {{"stage", "loader"}});
  record_prediction(ctx, plan, f, cache);
}

void record_plan(ProbeContext& ctx, const PipelinePlan& plan, const std::string& cache) {
  ctx.info()["mode"] = "emulated";
  ctx.info()["emulated_gpu"] = plan.gpu;
  ctx.info()["profile"] = plan.profile.name;
  ctx.info()["samples_per_step"] = plan.samples_per_step;
  ctx.info()["sample_bytes"] = plan.sample_bytes;
  ctx.info()["compute_time_per_step_s"] = plan.compute.compute_s;
  ctx.info()["compute_time_source"] = plan.compute.source;
  ctx.info()["cache"] = cache;
  ctx.info()["decode"] = plan.profile.data.decode == score::DecodeKind::none
                             ? "none (profile)"
                             : "emulated as 0 s: the sample files are not JPEGs and no decode stage runs";
  ctx.info()["communication"] = "not emulated: one emulated GPU, no gradient all-reduce";
  ctx.add_finding(Severity::info, "pipeline.emulated",
                  fmt::format("compute emulated as {} ({} per step): the real-GPU path (pinned copies, cuBLASLt "
                              "GEMMs, NCCL all-reduce) is not available in this build",
                              plan.gpu, format_duration(plan.compute.compute_s)));
}

}  // namespace

Outcome run_on_dataset(ProbeContext& ctx, const PipelinePlan& plan, const std::vector<std::string>& files,
                       const std::string& checkpoint_dir) {
  const auto& p = ctx.params();
  PipelineConfig config;
  config.files = &files;
  config.sample_bytes = plan.sample_bytes;
  config.samples_per_step = plan.samples_per_step;
  config.steps = static_cast<int>(p.integer("steps"));
  config.workers = static_cast<int>(p.integer("workers"));
  config.queue_depth = static_cast<int>(p.integer("queue-depth"));
  config.io_depth = static_cast<unsigned>(p.integer("io-depth"));
  config.compute_s = plan.compute.compute_s;
  config.checkpoint = plan.checkpoint;
  config.checkpoint_path = fmt::format("{}/pipeline-checkpoint-{}.bin", checkpoint_dir, getpid());
  const std::string cache = io::cache_label(false, files.size() * static_cast<std::uint64_t>(plan.sample_bytes));
  record_plan(ctx, plan, cache);
  std::string error;
  const auto rings = make_loader_rings(config, error);
  if (rings.empty()) return Outcome::skipped(error);
  const PipelineResult result = run_pipeline(config, rings, [&] { return ctx.should_stop(); });
  record_metrics(ctx, plan, result, cache);
  if (!result.error.empty()) {
    ctx.add_finding(Severity::fail, "pipeline.read_error",
                    fmt::format("stopped after {} of {} steps: {}", result.steps.size(), config.steps, result.error));
    return Outcome::failed(result.error);
  }
  if (result.interrupted) return Outcome::interrupted();
  return Outcome::ok();
}

}  // namespace nodeaudit::pipeline
