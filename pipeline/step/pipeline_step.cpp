// pipeline.step — a training step end to end, measuring accelerator utilization (AU) the way
// MLPerf Storage and DLIO do: loader workers read whole sample files (storage.dataset's layout,
// through io_uring, straight into the batch buffers) into a bounded prefetch queue of batches,
// decoding + augmenting JPEG samples with host.decode's code when the profile decodes JPEGs.
// On the node's GPUs (--emulate-compute auto where CUDA sees one) each GPU takes its own batch per
// step: a copy from pinned memory, the step's FLOPs as cuBLASLt GEMMs, the gradient bytes
// all-reduced with NCCL (in buckets during the backward GEMMs when the profile overlaps them);
// stage times are CUDA events. Emulated (a GPU named, or no GPU): compute is busy for the time the
// profile implies on that GPU (a sleep), then for the exposed share of the all-reduce (a sleep).
// Checkpoints are saved at the profile's write demand, scaled to the run (sync/async/off).
// --loader pytorch runs the steps on a real PyTorch DataLoader in --python instead (emulated compute,
// no checkpoints; framework_steps.hpp), so the AU is the one the user's own loader gets.
//   emulated compute_s per step = samples per step x flops_per_sample / (table GEMM rate x model_efficiency)
//   emulated comm_s per step    = gradient bytes x 2(G-1)/G / busbw; exposed = comm_s x (1 - comm_overlap)
// The GEMM rate and busbw are the GPU table's (harness/score/gpu_table.cpp): published measurements
// (MAMF, nccl-tests) where there are some, the same figures `--target-gpus` scores with.
//   au            = compute time / (wall time - checkpoint stalls), over the steps after the first
//   au_with_checkpoint = compute time / wall time
//   samples_per_s = samples consumed by compute / that wall time
//   stage_busy_pct[stage] = stage time / wall (compute, data_wait, host_to_device, communication,
//                   checkpoint, other); loader_read / loader_decode: that time / (workers x run time)
//   predicted_utilization = the scorer on the same node figures (compute rate, loader rates, busbw)
// Pitfalls: buffered reads of a data set that fits in RAM measure the page cache (info.cache);
// the table's figures are other machines' measurements or datasheet peaks, and labelled so: give
// --busbw or --comm-result for this node's all-reduce; emulated, one GPU's loader has the whole
// host's cores (on a real node the other GPUs' loaders share them); the JPEG set cycles through a few dozen
// distinct images, so the decoder sees repeats (decode cost depends on content, not on repeats).
#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "harness/core/registry.hpp"
#include "harness/score/profile.hpp"
#include "io/generated_data.hpp"
#include "io/storage_params.hpp"
#include "io/storage_target.hpp"
#include "pipeline/step/framework_steps.hpp"
#include "pipeline/samples/jpeg_samples.hpp"
#include "pipeline/step/pipeline_run.hpp"

namespace nodeaudit::pipeline {
namespace {

// On real GPUs: opens them (GEMM buffers, communicators), measures the GEMMs and the all-reduce
// alone, completes the plan with those figures and runs; emulated: runs.
Outcome run_with_compute(ProbeContext& ctx, PipelinePlan& plan, const SampleFiles& samples, const std::string& dir,
                         const FrameworkLoader* framework) {
  if (framework) return run_framework_steps(ctx, plan, samples, *framework);
  if (!plan.real()) return run_on_dataset(ctx, plan, samples, dir);
  const auto& p = ctx.params();
  const GpuStepConfig config{plan.devices, plan.gemms, plan.allreduce, batch_copy_bytes(plan)};
  OpenedGpuDevice opened = open_gpu_step_device(config, [&] { return ctx.should_stop(); });
  if (ctx.should_stop()) return Outcome::interrupted();
  if (!opened.error.empty()) {
    ctx.add_finding(Severity::fail, "pipeline.device_error", "setting up the GPUs failed: " + opened.error);
    return Outcome::failed(opened.error);
  }
  if (!opened.dtype_fallback.empty()) {
    ctx.add_finding(Severity::warn, "pipeline.gemm_dtype", opened.dtype_fallback);
    plan.gemms.dtype = opened.gemm_dtype;
  }
  const bool busbw_given = p.real("busbw") > 0 || !p.text("comm-result").empty();
  complete_real_plan(plan, opened.calibration,
                     round_step_count(planned_step_count(p, ctx.settings().level, opened.calibration.compute_s), ctx),
                     busbw_given);
  ctx.info()["calibration"] = {{"gpu_name", opened.calibration.gpu_name},
                               {"gemms_alone_s", opened.calibration.compute_s},
                               {"allreduce_alone_s", opened.calibration.allreduce_s},
                               {"how", "one step's GEMMs, then its all-reduce, each alone on every GPU; the second "
                                       "of two tries (CUDA events, slowest GPU)"}};
  return run_on_dataset(ctx, plan, samples, dir, opened.device.get());
}

// JPEG samples of the profile's mean size, made with host.decode's synthetic photographs.
Outcome run_on_jpegs(ProbeContext& ctx, PipelinePlan& plan, const std::string& parent, const FrameworkLoader* framework) {
  JpegSetSpec spec;
  spec.samples = static_cast<std::uint64_t>(ctx.params().integer("samples"));
  spec.target_mean_bytes = plan.sample_bytes;
  spec.encode_workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  JpegSet set = generate_jpeg_set(parent, spec, ctx.settings().keep_data, [&] { return ctx.should_stop(); });
  if (set.interrupted) return Outcome::interrupted();
  if (!set.error.empty()) return Outcome::failed(set.error);
  ctx.info()["generated"] = {{"dir", set.data->dir()},
                             {"jpeg_files", spec.samples},
                             {"distinct_images", set.distinct_images},
                             {"image_width", set.width},
                             {"image_height", set.height},
                             {"mean_bytes", set.mean_bytes},
                             {"max_bytes", set.max_bytes},
                             {"generator", "host.decode's synthetic photographs"}};
  const SampleFiles samples{&set.data->files(), set.mean_bytes, static_cast<std::uint32_t>(set.max_bytes), false};
  return run_with_compute(ctx, plan, samples, parent, framework);
}

Outcome measure_pipeline_step(ProbeContext& ctx) {
  const auto& p = ctx.params();
  GpuAvailability gpus;
  if (p.text("emulate-compute") == "auto" && p.text("loader") != "pytorch") {
    gpus = find_step_gpus(ctx);
    if (gpus.stop) return *gpus.stop;
  }
  PipelinePlan plan;
  if (std::string error = make_plan(ctx, plan, gpus); !error.empty()) return Outcome::bad_input(error);
  io::TargetOrReason t = io::resolve_target(p.text("path"), ctx.settings().data_dir, true);
  if (!t.target) return t.skip ? Outcome::skipped(t.reason) : Outcome::bad_input(t.reason);
  if (p.boolean("direct")) {
    std::string untested_why;
    const std::optional<bool> direct = io::direct_io_supported(t.target->path, &untested_why);
    if (!direct) return Outcome::failed("--direct true: O_DIRECT could not be tested: " + untested_why);
    if (!*direct)
      return Outcome::bad_input(
          fmt::format("--direct true: {} does not support O_DIRECT; use --direct false", t.target->path));
  }
  // --loader pytorch: a Python without the framework is a skip found before any sample is made.
  FrameworkLoader framework;
  if (plan.framework_loader)
    if (auto stop = check_framework_loader(ctx, framework)) return *stop;
  const FrameworkLoader* with = plan.framework_loader ? &framework : nullptr;
  if (plan.decode_jpeg) return run_on_jpegs(ctx, plan, t.target->path, with);
  const auto samples = static_cast<std::uint64_t>(p.integer("samples"));
  const io::DatasetSpec spec{fmt::format("dataset-{}x{}", plan.sample_bytes, samples), samples, plan.sample_bytes,
                             0xda7a5e7};
  io::GenerateResult g =
      io::generate_dataset(t.target->path, spec, ctx.settings().keep_data, [&] { return ctx.should_stop(); });
  if (g.interrupted) return Outcome::interrupted();
  if (!g.error.empty()) return g.out_of_space ? Outcome::bad_input(g.error) : Outcome::failed(g.error);
  ctx.info()["generated"] = {
      {"dir", g.data->dir()}, {"reused", g.data->reused()}, {"bytes", samples * plan.sample_bytes}};
  return run_with_compute(ctx, plan, pattern_samples(g.data->files(), plan.sample_bytes), t.target->path, with);
}

ProbeSpec pipeline_step_spec() {
  ProbeSpec spec;
  spec.id = "pipeline.step";
  spec.description =
      "Training step (loader + decode -> prefetch queue -> copy -> compute -> all-reduce -> checkpoint) on the GPUs, "
      "or emulated without one: accelerator utilization";
  spec.needs = {Need::io_uring};
  spec.params = pipeline_params();
  spec.body = measure_pipeline_step;
  spec.check_places = io::places_check(true);
  spec.deadline_s = [](const ParamValues& params, Level level) {
    const double steps = static_cast<double>(params.integer("steps") > 0 ? params.integer("steps") : step_cap(level));
    const double sample_bytes = std::max<double>(static_cast<double>(params.size_bytes("sample-size")), 256 << 10);
    const double generate_s = static_cast<double>(params.integer("samples")) * sample_bytes / 20e6;
    return 120 + generate_s + steps * std::max(10.0, params.duration_s("compute-time") * 2);
  };
  return spec;
}

const ProbeRegistrar pipeline_step_registrar{pipeline_step_spec()};

}  // namespace
}  // namespace nodeaudit::pipeline
