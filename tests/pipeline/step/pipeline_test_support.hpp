// Shared by the pipeline tests: a scratch directory removed at the end, and pipeline.step run
// on a generated pattern data set with its metrics collected by name ("au", "stage_busy_pct[compute]").
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <map>

#include "harness/score/score.hpp"
#include "harness/score/step_demand.hpp"
#include "io/generated_data.hpp"
#include "pipeline/step/pipeline_run.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/uring_gate.hpp"

namespace nodeaudit::pipeline {

// The pipeline tests' directories are in the build tree's scratch folder (tests/support/temp_dir.hpp).
struct Scratch : test_files::TempDir {
  Scratch() : test_files::TempDir(NODEAUDIT_PIPELINE_SCRATCH, "pipe") {}
};

struct ProbeRun {
  Outcome outcome;
  std::map<std::string, double> values;  // "name" or "name[stage]" -> median
  std::vector<Finding> findings;
  nlohmann::json info;
};

// The context the session gives pipeline.step: its parameters and the step demand of --workload,
// else of the default profile (the session parses the profile; the probe never reads one).
inline ProbeContext make_context(const std::map<std::string, std::string>& given) {
  ParamValues params = resolve_params(pipeline_params(), given, Level::quick);
  RunSettings settings;
  const auto workload = given.find("workload");
  settings.step_demand =
      score::step_demand_of(score::load_profile(workload == given.end() ? default_step_profile : workload->second));
  return ProbeContext(std::move(params), std::move(settings), nullptr,
                      std::chrono::steady_clock::now() + std::chrono::minutes(5));
}

// Runs an already-planned probe context on `samples` and collects what it recorded.
inline ProbeRun collect(ProbeContext& ctx, const PipelinePlan& plan, const SampleFiles& samples,
                        const std::string& dir) {
  ProbeRun run;
  run.outcome = run_on_dataset(ctx, plan, samples, dir);
  for (const Metric& m : ctx.metrics()) {
    const std::string key = m.labels.count("stage") ? m.name + "[" + m.labels.at("stage") + "]" : m.name;
    run.values[key] = m.samples.at(0);
  }
  run.findings = ctx.findings();
  run.info = ctx.info();
  return run;
}

// Generates `files` samples of 4 KiB under `dir`, optionally damages one, runs the pipeline.
inline ProbeRun run_pipeline_probe(const std::string& dir, std::uint64_t files,
                                   std::map<std::string, std::string> given,
                                   const std::function<void(const std::vector<std::string>&)>& damage = {}) {
  given["sample-size"] = "4KiB";
  given.emplace("decode", "none");  // pattern files; the JPEG path has its own test
  given["samples"] = std::to_string(files);
  ProbeContext ctx = make_context(given);
  PipelinePlan plan;
  const std::string error = make_plan(ctx, plan);
  EXPECT_EQ(error, "");
  io::GenerateResult g = io::generate_dataset(dir, {"t", files, 4096, 7}, false, [] { return false; });
  EXPECT_EQ(g.error, "");
  if (damage) damage(g.data->files());
  return collect(ctx, plan, pattern_samples(g.data->files(), 4096), dir);
}

#define SKIP_WITHOUT_URING(run) \
  if ((run).outcome.status == Status::skipped) SKIP_ONLY_IF_IO_URING_REFUSED("skipped: " + (run).outcome.reason)

}  // namespace nodeaudit::pipeline
