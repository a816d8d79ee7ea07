#include "pipeline/step/pipeline_run.hpp"

#include <unistd.h>

#include <cmath>

#include <fmt/format.h>

#include "harness/core/units.hpp"
#include "io/storage_target.hpp"
#include "pipeline/samples/jpeg_samples.hpp"
#include "pipeline/step/step_pipeline.hpp"

namespace nodeaudit::pipeline {
namespace {

// The figures of the node this step ran on, as the step saw them, for the model's prediction beside
// the measured AU (harness/score/step_prediction.hpp: the session adds it after the measurement).
void record_prediction_inputs(ProbeContext& ctx, const PipelinePlan& plan, const PipelineResult& r,
                              const PipelineFigures& f, const std::string& cache) {
  if (plan.loader_only()) {
    ctx.add_finding(Severity::info, "pipeline.no_prediction",
                    "predicted_utilization not recorded: loader only (--emulate-compute none)");
    return;
  }
  const double efficiency = plan.profile.training.model_efficiency;
  // The scorer's compute time is flops / (gemm_tflops x efficiency): the rate that gives back the
  // step's compute time, emulated or measured in this run.
  const double flops = plan.real() ? plan.gemms.executed_flops : plan.compute.flops_per_step;
  const double compute_s = plan.real() ? f.compute_s / f.timed_steps : plan.compute.compute_s;
  const double gemm_tflops = compute_s > 0 && efficiency > 0 ? flops / (compute_s * efficiency) / 1e12 : 0;
  // Emulated: the loader feeds one GPU and the node is taken to run one such loader per GPU. Real:
  // this process's loader feeds every GPU, so its rate is the node's, shared out per GPU.
  const double workers = r.workers;
  const double per_gpu = plan.real() ? static_cast<double>(plan.devices.size()) : 1.0;
  double loader_samples_per_s = 0, decode_samples_per_s = 0;
  if (r.framework) {
    // The DataLoader reads and decodes in one: its CPU-bound rate stands for both stages, and the
    // scorer reads it as the framework loader's (host.dataloader), as for a pytorch profile.
    loader_samples_per_s = r.framework->cpu.capacity_samples_per_s();
    if (plan.decode_jpeg) decode_samples_per_s = loader_samples_per_s;
  } else {
    if (r.loader_read_s > 0)
      loader_samples_per_s = static_cast<double>(r.samples_loaded) / (r.loader_read_s / workers) / per_gpu;
    if (plan.decode_jpeg && r.loader_decode_s > 0)
      decode_samples_per_s = static_cast<double>(r.samples_loaded) / (r.loader_decode_s / workers) / per_gpu;
  }
  ctx.info()["prediction_inputs"] = {
      {"step_demand", ctx.settings().step_demand ? ctx.settings().step_demand->to_json() : nlohmann::json()},
      {"gemm_tflops", gemm_tflops},
      {"gpus", plan.comm.gpus},
      {"loader_read_samples_per_s_per_gpu", loader_samples_per_s},
      {"decode_samples_per_s_per_gpu", decode_samples_per_s},
      {"framework_loader", r.framework.has_value()},
      {"cache", cache},
      {"sample_bytes", plan.sample_bytes},
      {"busbw_gbps", plan.comm.busbw_gbps},
      {"gradient_bytes", plan.comm.gradient_bytes},
      {"note", r.framework ? "the PyTorch DataLoader's rate (reading, decoding and collating in one) stands for the "
                             "loader and decode stages: samples over the longest of its CPU bounds (all its CPU "
                             "time over every CPU, the workers' over the workers, the main process's)"
               : plan.real() ? "one loader fed every GPU: the storage figure given to the scorer is its read rate"
                             : "the storage figure given to the scorer is gpus x the loader's read rate: each GPU's "
                               "process runs its own loader workers (an assumption; shared storage is not measured at "
                               "that load here)"}};
}

void record_stages(ProbeContext& ctx, const PipelineFigures& f, bool copies, bool native_loader) {
  const double wall = f.wall_s;
  ctx.add_value("stage_busy_pct", unit::percent, Better::higher, f.compute_s / wall * 100, {{"stage", "compute"}});
  ctx.add_value("stage_busy_pct", unit::percent, Better::lower, f.data_wait_s / wall * 100, {{"stage", "data_wait"}});
  if (copies) {  // emulated compute copies nothing: no figure rather than a zero nobody measured
    ctx.add_value("stage_busy_pct", unit::percent, Better::lower, f.copy_s / wall * 100, {{"stage", "host_to_device"}});
    // The batches' copy rate while the loaders and GEMMs run beside it: comparable with gpu.pcie's
    // pinned H2D when the batch buffers were pinned (info.batch_buffers_pinned).
    if (f.copy_s > 0)
      ctx.add_value("host_to_device_bandwidth", unit::gbps, Better::higher, f.copy_bytes / f.copy_s / 1e9);
  }
  ctx.add_value("stage_busy_pct", unit::percent, Better::lower, f.comm_s / wall * 100, {{"stage", "communication"}});
  ctx.add_value("stage_busy_pct", unit::percent, Better::lower, f.checkpoint_s / wall * 100, {{"stage", "checkpoint"}});
  ctx.add_value("stage_busy_pct", unit::percent, Better::lower, f.other_s / wall * 100, {{"stage", "other"}});
  if (!native_loader) return;  // a DataLoader's workers do not split reading from decoding
  ctx.add_value("stage_busy_pct", unit::percent, Better::lower, f.loader_read_pct, {{"stage", "loader_read"}});
  ctx.add_value("stage_busy_pct", unit::percent, Better::lower, f.loader_decode_pct, {{"stage", "loader_decode"}});
}

}  // namespace

void record_pipeline_metrics(ProbeContext& ctx, const PipelinePlan& plan, const PipelineResult& r, const std::string& cache) {
  const PipelineFigures f = summarize(r, plan.samples_per_step * plan.batches_per_step());
  ctx.info()["steps_completed"] = r.steps.size();
  ctx.info()["samples_loaded"] = r.samples_loaded;
  ctx.info()["batch_buffers_registered"] = r.fixed_buffers;
  if (plan.real()) ctx.info()["batch_buffers_pinned"] = r.pinned.empty() ? "yes (cudaHostRegister)" : "no: " + r.pinned;
  if (r.framework) {
    const dataloader::TrainCpu& cpu = r.framework->cpu;
    const double capacity = cpu.capacity_samples_per_s();
    ctx.info()["framework_loader"] = {{"decoder", r.framework->decoder},
                                      {"cpu_window_s", cpu.seconds},
                                      {"main_cpu_s", cpu.main_cpu_seconds},
                                      {"worker_cpu_s", cpu.worker_cpu_seconds},
                                      {"cpus", cpu.cpus},
                                      {"capacity_samples_per_s", capacity},
                                      {"capacity_formula", "samples / max(all CPU s / CPUs, worker CPU s / min(workers, "
                                                           "CPUs), main process CPU s), over the steps after the first"}};
    if (capacity > 0) ctx.add_value("loader_capacity", unit::samples_per_s, Better::higher, capacity);
  }
  ctx.info()["checkpoints"] = {{"mode", r.framework ? "off (--loader pytorch saves none)" : to_string(plan.checkpoint_mode)},
                               {"written", r.checkpoints},
                               {"bytes_each", plan.checkpoint.bytes},
                               {"every_steps", plan.checkpoint.every_steps}};
  if (f.timed_steps == 0) {
    ctx.add_finding(Severity::warn, "pipeline.no_timed_step", "fewer than two steps completed: no AU figure");
    return;
  }
  ctx.info()["timed"] = {{"steps", f.timed_steps},
                         {"wall_s", f.wall_s},
                         {"compute_s", f.compute_s},
                         {"data_wait_s", f.data_wait_s},
                         {"communication_s", f.comm_s},
                         {"checkpoint_s", f.checkpoint_s},
                         {"other_s", f.other_s},
                         // Emulated: measured compute above this is the compute thread waking late (a
                         // busy host), counted as compute: compare the two before trusting an AU near 100%.
                         // Real: the GEMMs alone before the run took this (CUDA events).
                         {"compute_nominal_s", f.timed_steps * plan.compute.compute_s}};
  if (!r.framework) {  // a DataLoader's workers are timed by their CPU (info.framework_loader) instead
    ctx.info()["timed"]["loader_read_s"] = r.loader_read_s;
    ctx.info()["timed"]["loader_decode_s"] = r.loader_decode_s;
    ctx.info()["timed"]["loader_blocked_s"] = r.loader_blocked_s;
  }
  if (plan.real()) ctx.info()["timed"]["host_to_device_s"] = f.copy_s;
  if (plan.real() && f.compute_s > 0)
    ctx.info()["gemm_tflops_per_gpu"] = plan.gemms.executed_flops * f.timed_steps / f.compute_s / 1e12;
  ctx.info()["au_definition"] =
      "au = compute / (wall - checkpoint stalls): checkpoint saves are accounted apart from AU "
      "(MLPerf Storage measures checkpointing as a workload of its own); au_with_checkpoint = "
      "compute / wall";
  ctx.add_value("au", unit::percent, Better::higher, f.au_pct);
  ctx.add_value("au_with_checkpoint", unit::percent, Better::higher, f.au_with_checkpoint_pct);
  ctx.add_value("samples_per_s", unit::samples_per_s, Better::higher, f.samples_per_s);
  ctx.add_value("data_wait_s", unit::s, Better::lower, f.data_wait_s);
  // Each timed step's wall time, so the run's steadiness is a figure with its spread (cv), not
  // only the totals above.
  std::vector<double> step_times_s;
  for (std::size_t i = 1; i < r.steps.size(); ++i) step_times_s.push_back(r.steps[i].end_s - r.steps[i - 1].end_s);
  ctx.add_metric(Metric{"step_time", unit::s, Better::lower, {}, step_times_s});
  record_stages(ctx, f, plan.real(), !r.framework);
  record_prediction_inputs(ctx, plan, r, f, cache);
}

namespace {

// What the real GPUs run per step: the GEMMs and the all-reduce, as planned and as calibrated.
void record_real_work(ProbeContext& ctx, const PipelinePlan& plan) {
  const StepGemms& g = plan.gemms;
  ctx.info()["gpus"] = plan.devices;
  ctx.info()["gemms"] = {{"dtype", gpu::to_string(g.dtype)},
                         {"shape", gpu::to_string(gpu::GemmShape{g.side, g.side, g.side})},
                         {"products_per_step", g.products},
                         {"forward_products", g.forward},
                         {"demanded_flops", g.demanded_flops},
                         {"executed_flops", g.executed_flops}};
  if (plan.devices.size() < 2 || plan.allreduce.bytes <= 0) return;
  const StepAllReduce& a = plan.allreduce;
  ctx.info()["allreduce"] = {
      {"bytes_per_step", a.bytes},
      {"element", a.element_bytes == 2 ? "bf16" : "fp32"},
      {"buckets", a.buckets},
      {"issued", a.buckets > 1 ? "bucket by bucket as the backward GEMMs finish (the profile overlaps communication)"
                               : "after the step's GEMMs (the profile does not overlap communication)"}};
}

}  // namespace

void record_pipeline_plan(ProbeContext& ctx, const PipelinePlan& plan, const SampleFiles& samples, const std::string& cache) {
  ctx.info()["mode"] = plan.loader_only() ? "loader only" : plan.real() ? "real GPUs" : "emulated";
  ctx.info()["steps_planned"] = {
      {"steps", plan.steps},
      {"rule", std::string(ctx.params().integer("steps") > 0
                               ? "--steps"
                               : "--step-budget of compute at the step's compute time, plus the untimed first step; "
                                 "at least 4, at most the level's cap") +
                   (ctx.settings().rounds_sharing_budget > 1
                        ? "; this round's share of the timed steps (at least 1) after its own untimed first step"
                        : "")}};
  if (plan.real())
    record_real_work(ctx, plan);
  else
    ctx.info()["emulated_gpu"] = plan.gpu;
  ctx.info()["profile"] = plan.profile.name;
  ctx.info()["samples_per_step"] = plan.samples_per_step;
  ctx.info()["queue_depth_batches"] = plan.queue_depth;
  ctx.info()["loader_workers"] = plan.workers;
  ctx.info()["sample_bytes"] = samples.exact_size ? plan.sample_bytes : samples.mean_bytes;
  ctx.info()["compute_time_per_step_s"] = plan.compute.compute_s;
  ctx.info()["compute_time_source"] = plan.compute.source;
  ctx.info()["cache"] = cache;
  ctx.info()["loader"] = plan.framework_loader ? "pytorch: a torch.utils.data.DataLoader in the Python given (--python)"
                                               : "native: io_uring loader workers in this process";
  ctx.info()["decode"] = !plan.decode_jpeg ? "none (" + plan.decode_source + ")"
                         : plan.framework_loader
                             ? "jpeg: each DataLoader worker decodes with PIL and applies torchvision's RandomResizedCrop "
                               "224, flip and normalize (" + plan.decode_source + ")"
                             : "jpeg: each loader worker decodes + augments (host.decode's code) before queuing (" +
                                   plan.decode_source + ")";
  const CommDemand& c = plan.comm;
  if (c.time_s > 0)
    ctx.info()["communication"] = {{"gpus", c.gpus},
                                   {"gradient_bytes", c.gradient_bytes},
                                   {"bus_bytes", c.bus_bytes},
                                   {"busbw_gbps", c.busbw_gbps},
                                   {"busbw_source", c.busbw_source},
                                   {"time_s", c.time_s},
                                   {"overlap", plan.profile.training.comm_overlap},
                                   {"exposed_s", c.exposed_s},
                                   {"emulated_as", plan.real() ? "not emulated: NCCL all-reduce on the GPUs; time_s "
                                                                 "and exposed_s are the plan the scorer predicts from"
                                                               : "a sleep of the exposed share after compute"}};
  else
    ctx.info()["communication"] = c.gpus < 2 ? "none: one GPU" : "none: no gradient bytes or no busbw";
  if (!plan.loader_only() && !plan.real())
    ctx.add_finding(Severity::info, "pipeline.emulated",
                    fmt::format("compute emulated as {} ({} per step) and the all-reduce as a sleep, not run on this "
                                "node's GPUs: {}",
                                plan.gpu, format_duration(plan.compute.compute_s), plan.emulation_reason));
}

namespace {

// A read asks for the whole slot: one byte more than the largest JPEG, so a file longer than
// expected shows up as an error rather than as a truncated sample.
std::uint32_t slot_bytes(const SampleFiles& samples) {
  return static_cast<std::uint32_t>(io::round_up(std::uint64_t{samples.max_bytes} + (samples.exact_size ? 0 : 1), 4096));
}

}  // namespace

std::string samples_cache_label(const ProbeContext& ctx, const SampleFiles& samples) {
  const double data_bytes = samples.mean_bytes * static_cast<double>(samples.files->size());
  return io::cache_label(ctx.params().boolean("direct"), static_cast<std::uint64_t>(data_bytes));
}

std::size_t batch_copy_bytes(const PipelinePlan& plan) {
  const std::size_t per_sample = plan.decode_jpeg ? SampleDecoder::tensor_bytes : plan.sample_bytes;
  return static_cast<std::size_t>(plan.samples_per_step) * per_sample;
}

Outcome run_on_dataset(ProbeContext& ctx, const PipelinePlan& plan, const SampleFiles& samples,
                       const std::string& checkpoint_dir, StepDevice* device) {
  const auto& p = ctx.params();
  PipelineConfig config;
  config.files = samples.files;
  config.sample_bytes =
      samples.exact_size ? plan.sample_bytes : static_cast<std::uint32_t>(std::lround(samples.mean_bytes));
  config.sample_capacity = slot_bytes(samples);
  config.exact_sample_size = samples.exact_size;
  config.decode_jpeg = plan.decode_jpeg;
  config.direct = p.boolean("direct");
  config.samples_per_step = plan.samples_per_step;
  config.steps = plan.steps;
  config.workers = plan.workers;
  config.queue_depth = plan.queue_depth;
  config.io_depth = static_cast<unsigned>(p.integer("io-depth"));
  config.compute_s = plan.compute.compute_s;
  config.comm_exposed_s = plan.comm.exposed_s;
  config.device = device;
  config.checkpoint = plan.checkpoint;
  config.checkpoint_mode = plan.checkpoint_mode;
  config.checkpoint_path = fmt::format("{}/pipeline-checkpoint-{}.bin", checkpoint_dir, getpid());
  const std::string cache = samples_cache_label(ctx, samples);
  record_pipeline_plan(ctx, plan, samples, cache);
  const PipelineResult result = run_pipeline(config, [&] { return ctx.should_stop(); });
  if (!result.setup_error.empty()) return Outcome::skipped(result.setup_error);
  record_pipeline_metrics(ctx, plan, result, cache);
  if (!result.device_error.empty()) {
    ctx.add_finding(Severity::fail, "pipeline.device_error",
                    fmt::format("stopped after {} of {} steps: {}", result.steps.size(), config.steps,
                                result.device_error));
    return Outcome::failed(result.device_error);
  }
  if (!result.error.empty()) {
    ctx.add_finding(Severity::fail, "pipeline.read_error",
                    fmt::format("stopped after {} of {} steps: {}", result.steps.size(), config.steps, result.error));
    return Outcome::failed(result.error);
  }
  if (result.interrupted) return Outcome::interrupted();
  return Outcome::ok();
}

}  // namespace nodeaudit::pipeline
