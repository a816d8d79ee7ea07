// pipeline.step's parameters, the plan they resolve to (profile, batch, compute and communication
// time, decode, checkpoint schedule), and the run on an existing data set with the metrics it
// records. Split from the probe body so a test can run it on a data set it has damaged.
#pragma once

#include <string>
#include <vector>

#include "checkpoint_writer.hpp"
#include "compute_model.hpp"
#include "context.hpp"
#include "harness/score/profile.hpp"
#include "probe.hpp"

namespace nodeaudit::pipeline {

std::vector<ParamSpec> pipeline_params();

struct PipelinePlan {
  score::Profile profile;
  std::string gpu;                 // emulated GPU name; "none" = loader only (compute 0, no all-reduce)
  int samples_per_step = 0;        // per GPU (the pipeline emulates one GPU's data path)
  int queue_depth = 0;             // batches in the prefetch queue
  std::uint32_t sample_bytes = 0;  // the profile's (or --sample-size); the JPEG set's mean when decoding
  bool decode_jpeg = false;
  std::string decode_source;  // why decode is on or off
  ComputeDemand compute;
  CommDemand comm;
  CheckpointPlan checkpoint;
  CheckpointMode checkpoint_mode = CheckpointMode::sync;
  bool loader_only() const { return gpu == "none"; }
};

// Empty on success; else the Outcome::failed reason (bad profile, unknown GPU, dtype not in table,
// a --comm-result without an all-reduce figure).
std::string make_plan(const ProbeContext& ctx, PipelinePlan& plan);

// The sample files a run reads: pattern files of exactly `sample_bytes`, or JPEGs of varying size.
struct SampleFiles {
  const std::vector<std::string>* files = nullptr;
  double mean_bytes = 0;
  std::uint32_t max_bytes = 0;
  bool exact_size = true;
};

// Runs the pipeline over `samples` (checkpoints go to `checkpoint_dir`) and records the metrics,
// partial ones included when a read fails mid-run.
Outcome run_on_dataset(ProbeContext& ctx, const PipelinePlan& plan, const SampleFiles& samples,
                       const std::string& checkpoint_dir);
// Pattern files of plan.sample_bytes each (the storage.dataset layout).
Outcome run_on_dataset(ProbeContext& ctx, const PipelinePlan& plan, const std::vector<std::string>& files,
                       const std::string& checkpoint_dir);

}  // namespace nodeaudit::pipeline
