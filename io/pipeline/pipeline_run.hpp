// pipeline.step's parameters, the plan they resolve to (profile, batch, compute time, checkpoint
// schedule), and the run on an existing data set with the metrics it records. Split from the probe
// body so a test can run it on a data set it has damaged.
#pragma once

#include <string>
#include <vector>

#include "compute_model.hpp"
#include "context.hpp"
#include "probe.hpp"
#include "harness/score/profile.hpp"

namespace nodeaudit::pipeline {

std::vector<ParamSpec> pipeline_params();

struct PipelinePlan {
  score::Profile profile;
  std::string gpu;                 // emulated GPU name
  int samples_per_step = 0;        // per GPU (one emulated GPU)
  std::uint32_t sample_bytes = 0;
  ComputeDemand compute;
  CheckpointPlan checkpoint;
};

// Empty on success; else the Outcome::failed reason (bad profile, unknown GPU, dtype not in table).
std::string make_plan(const ProbeContext& ctx, PipelinePlan& plan);

// Runs the pipeline over `files` (checkpoints go to `checkpoint_dir`) and records the metrics,
// partial ones included when a read fails mid-run.
Outcome run_on_dataset(ProbeContext& ctx, const PipelinePlan& plan, const std::vector<std::string>& files,
                       const std::string& checkpoint_dir);

}  // namespace nodeaudit::pipeline
