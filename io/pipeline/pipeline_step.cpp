// pipeline.step — a training step emulated end to end, measuring accelerator utilization (AU) the
// way MLPerf Storage and DLIO do: loader workers read whole sample files (storage.dataset's
// layout, through io_uring) into a bounded prefetch queue of batches; the compute stage takes one
// batch per step and is busy for the compute time the profile implies on the named GPU (a sleep);
// synchronous checkpoints are written at the profile's write demand, scaled to the run.
//   compute_s per step = samples per step x flops_per_sample / (datasheet peak x model_efficiency)
//   au            = compute time / wall time over the steps after the first (which fills the queue)
//   samples_per_s = samples consumed by compute / that wall time
//   stage_busy_pct[stage] = stage time / wall (compute, data_wait, checkpoint, other); loader:
//                   time reading / (workers x run time)
//   predicted_utilization = the scorer on the same node figures (compute rate, loader rate)
// Pitfalls: buffered reads of a data set that fits in RAM measure the page cache (info.cache);
// JPEG decode costs nothing here (the sample files are not JPEGs); datasheet peaks exceed what a
// GEMM reaches, so the emulated compute is short and demands more of the loader than a real GPU.
#include <algorithm>

#include <fmt/format.h>

#include "generated_data.hpp"
#include "harness/score/score.hpp"
#include "pipeline_run.hpp"
#include "registry.hpp"
#include "storage_params.hpp"
#include "storage_target.hpp"

namespace nodeaudit::pipeline {
namespace {

Outcome measure_pipeline_step(ProbeContext& ctx) {
  const auto& p = ctx.params();
  PipelinePlan plan;
  if (std::string error = make_plan(ctx, plan); !error.empty()) return Outcome::failed(error);
  io::TargetOrReason t = io::resolve_target(p.text("path"), ctx.settings().data_dir, true);
  if (!t.target) return t.skip ? Outcome::skipped(t.reason) : Outcome::failed(t.reason);
  const auto samples = static_cast<std::uint64_t>(p.integer("samples"));
  const io::DatasetSpec spec{fmt::format("dataset-{}x{}", plan.sample_bytes, samples), samples, plan.sample_bytes,
                             0xda7a5e7};
  io::GenerateResult g =
      io::generate_dataset(t.target->path, spec, ctx.settings().keep_data, [&] { return ctx.should_stop(); });
  if (g.interrupted) return Outcome::interrupted();
  if (!g.error.empty()) return Outcome::failed(g.error);
  ctx.info()["generated"] = {{"dir", g.data->dir()}, {"reused", g.data->reused()}, {"bytes", samples * plan.sample_bytes}};
  return run_on_dataset(ctx, plan, g.data->files(), t.target->path);
}

ProbeSpec make_spec() {
  ProbeSpec spec;
  spec.id = "pipeline.step";
  spec.description = "Emulated training step (loader -> prefetch queue -> compute -> checkpoint): accelerator utilization";
  spec.needs = {Need::io_uring};
  spec.params = pipeline_params();
  spec.body = measure_pipeline_step;
  spec.deadline_s = [](const ParamValues& params, Level) {
    const double steps = static_cast<double>(params.integer("steps"));
    const double sample_bytes = std::max<double>(static_cast<double>(params.size_bytes("sample-size")), 256 << 10);
    const double generate_s = static_cast<double>(params.integer("samples")) * sample_bytes / 20e6;
    return 120 + generate_s + steps * std::max(10.0, params.duration_s("compute-time") * 2);
  };
  return spec;
}

const ProbeRegistrar registrar{make_spec()};

}  // namespace
}  // namespace nodeaudit::pipeline
