#include "pipeline/step/framework_steps.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "pipeline/dataloader/dataloader_paths.hpp"
#include "pipeline/dataloader/loader_child.hpp"

namespace nodeaudit::pipeline {
namespace {

namespace fs = std::filesystem;

PipelineResult result_of(const PipelinePlan& plan, const dataloader::LoaderReport& report, const std::string& decoder) {
  PipelineResult r;
  r.workers = plan.workers;
  for (const dataloader::StepRecord& s : report.steps) {
    StepTiming t;
    t.data_wait_s = s.data_wait_s, t.compute_s = s.compute_s, t.comm_s = s.comm_s, t.end_s = s.end_s;
    r.steps.push_back(t);
    r.samples_loaded += static_cast<std::uint64_t>(s.samples);
  }
  r.framework = FrameworkLoaderRun{decoder, report.train_cpu.value_or(dataloader::TrainCpu{})};
  return r;
}

}  // namespace

std::optional<Outcome> check_framework_loader(ProbeContext& ctx, FrameworkLoader& loader) {
  if (auto bad = dataloader::find_python(ctx.params().text("python"), loader.python_path)) {
    const dataloader::PythonRefusal refusal = dataloader::python_refusal(ctx.params().text("python"), *bad, ctx.params().given("python"));
    return refusal.bad_input ? Outcome::bad_input(refusal.reason) : Outcome::skipped(refusal.reason);
  }
  loader.script = dataloader::loader_script_path();
  if (!fs::exists(loader.script))
    return Outcome::failed(fmt::format("the loader script is missing: {} (reinstall nodeaudit)", loader.script));
  loader.scratch = std::make_shared<dataloader::ScratchDir>();
  if (loader.scratch->path.empty())
    return Outcome::failed(fmt::format("cannot make a scratch directory in {}", fs::temp_directory_path().string()));
  return dataloader::preflight(loader.python_path, loader.script, *loader.scratch, std::min(120.0, ctx.seconds_left()),
                               [&] { return ctx.cancelled(); }, &loader.versions);
}

Outcome run_framework_steps(ProbeContext& ctx, const PipelinePlan& plan, const SampleFiles& samples,
                            const FrameworkLoader& loader) {
  const std::string dir = loader.scratch->path;
  const std::string list = dir + "/files.txt", report_path = dir + "/steps.jsonl", log = dir + "/steps.log";
  {
    std::ofstream out(list);
    for (const std::string& f : *samples.files) out << f << "\n";
  }
  const std::string decoder = plan.decode_jpeg ? "pil" : "raw";
  // PyTorch's prefetch_factor is per worker: the native queue's depth shared among the workers.
  const int prefetch = std::max(1, plan.queue_depth / std::max(1, plan.workers));
  const std::vector<std::string> args = {
      loader.python_path, loader.script, "--files", list, "--kind", plan.decode_jpeg ? "jpeg" : "raw",
      "--decoders", "pil", "--workers", std::to_string(plan.workers),  // raw files ignore --decoders
      "--batch", std::to_string(plan.samples_per_step), "--train-steps", std::to_string(plan.steps),
      "--prefetch-factor", std::to_string(prefetch),
      "--compute-s", fmt::format("{:.9f}", plan.compute.compute_s), "--comm-s", fmt::format("{:.9f}", plan.comm.exposed_s),
      "--pin-memory", "1", "--out", report_path};
  ctx.info()["framework_loader_versions"] = loader.versions;
  ctx.info()["prefetch_factor"] = prefetch;
  const std::string cache = samples_cache_label(ctx, samples);
  record_pipeline_plan(ctx, plan, samples, cache);
  const double timeout_s = std::max(5.0, ctx.seconds_left() - 5);
  const GroupEnd end = run_in_own_group(args, log, timeout_s, [&] { return ctx.cancelled(); });
  const dataloader::ParsedReport parsed = dataloader::parse_loader_report(dataloader::read_text(report_path));
  record_pipeline_metrics(ctx, plan, result_of(plan, parsed.report, decoder), cache);
  if (parsed.report.unavailable && end.exit_code == 0 && parsed.error.empty())
    return Outcome::skipped(dataloader::framework_missing(loader.python_path, *parsed.report.unavailable));
  return dataloader::outcome_of(end, parsed, loader.python_path, dataloader::read_text(log), timeout_s, "step");
}

}  // namespace nodeaudit::pipeline
