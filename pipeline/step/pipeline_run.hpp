// pipeline.step's parameters, the plan they resolve to (profile, batch, compute and communication
// time, decode, checkpoint schedule), and the run on an existing data set with the metrics it
// records. Split from the probe body so a test can run it on a data set it has damaged.
#pragma once

#include <string>
#include <vector>

#include "harness/core/context.hpp"
#include "harness/core/probe.hpp"
#include "harness/score/profile.hpp"
#include "pipeline/step/checkpoint_writer.hpp"
#include "pipeline/step/compute_model.hpp"
#include "pipeline/step/gpu_step_device.hpp"
#include "pipeline/step/gpu_step_plan.hpp"
#include "pipeline/step/step_pipeline.hpp"

namespace nodeaudit::pipeline {

std::vector<ParamSpec> pipeline_params();

struct PipelinePlan {
  score::Profile profile;
  std::string gpu;                 // emulated GPU name; "none" = loader only (compute 0, no all-reduce); "real"
  std::vector<int> devices;        // the real GPUs; empty when emulated or loader only
  std::string emulation_reason;    // why compute is emulated (auto without a GPU, a name given)
  StepGemms gemms;                 // the real GPUs' work per step
  StepAllReduce allreduce;
  int samples_per_step = 0;        // per GPU (each GPU its own batch)
  int workers = 0;                 // loader workers in all: --workers per GPU x the GPUs fed
  int queue_depth = 0;             // batches in the prefetch queue
  std::uint32_t sample_bytes = 0;  // the profile's (or --sample-size); the JPEG set's mean when decoding
  bool decode_jpeg = false;
  std::string decode_source;  // why decode is on or off
  bool framework_loader = false;   // --loader pytorch: a PyTorch DataLoader runs the steps (framework_steps.hpp)
  ComputeDemand compute;
  CommDemand comm;
  CheckpointPlan checkpoint;
  CheckpointMode checkpoint_mode = CheckpointMode::sync;
  int steps = 0;                   // steps to run, the untimed first one included
  bool loader_only() const { return gpu == "none"; }
  bool real() const { return !devices.empty(); }
  int batches_per_step() const { return real() ? static_cast<int>(devices.size()) : 1; }
};

// Empty on success; else what is wrong with the input (bad profile, unknown GPU, dtype not in the
// table, a --comm-result without an all-reduce figure, a queue too small or too big). `gpus` are
// the real GPUs --emulate-compute auto may use.
std::string make_plan(const ProbeContext& ctx, PipelinePlan& plan, const GpuAvailability& gpus = {});
// On real GPUs: the compute time, the busbw (unless given), the step count and the checkpoint
// schedule from what the device measured before the run.
void complete_real_plan(PipelinePlan& plan, const GpuCalibration& calibration, int steps, bool busbw_given);

// Steps to run: --steps when given; else enough for --step-budget of compute at `compute_s` per
// step plus the untimed first one, at least 4 (three timed steps give the step time a spread) and
// at most the level's cap (20 / 200 / 2000), which is also the count when compute_s is 0 (loader only).
// A slow profile (an emulated 7B fine-tune step takes seconds) so runs a few long steps instead of
// twenty; the AU stays exact, as every step still runs at its real duration.
int planned_step_count(const ParamValues& params, Level level, double compute_s);
// The most steps planned_step_count gives at `level` (the probe's deadline is sized for it).
int step_cap(Level level);
// The steps this round runs of the run's `planned` (planned_step_count): where the level's rounds
// share its work (quick), each round runs its own untimed first step and its share of the timed
// steps, at least one, so two rounds cost one untimed step more than one round did, not twice the
// run; elsewhere all of them.
int round_step_count(int planned, const ProbeContext& ctx);

// The sample files a run reads: pattern files of exactly `sample_bytes`, or JPEGs of varying size.
struct SampleFiles {
  const std::vector<std::string>* files = nullptr;
  double mean_bytes = 0;
  std::uint32_t max_bytes = 0;
  bool exact_size = true;
};
// Pattern files of exactly `bytes` each (the storage.dataset layout).
inline SampleFiles pattern_samples(const std::vector<std::string>& files, std::uint32_t bytes) {
  return {&files, static_cast<double>(bytes), bytes, true};
}

// Bytes of one batch as a GPU receives it: the decoded tensors, else the samples (one size).
std::size_t batch_copy_bytes(const PipelinePlan& plan);

// The plan and the run as the result records them (info, metrics, the scorer's prediction);
// run_on_dataset and the framework loader's steps both use them.
std::string samples_cache_label(const ProbeContext& ctx, const SampleFiles& samples);
void record_pipeline_plan(ProbeContext& ctx, const PipelinePlan& plan, const SampleFiles& samples, const std::string& cache);
void record_pipeline_metrics(ProbeContext& ctx, const PipelinePlan& plan, const PipelineResult& r, const std::string& cache);

// Runs the pipeline over `samples` (checkpoints go to `checkpoint_dir`) and records the metrics,
// partial ones included when a read fails mid-run. `device` = the real GPUs (plan.real()), else
// nullptr (emulated).
Outcome run_on_dataset(ProbeContext& ctx, const PipelinePlan& plan, const SampleFiles& samples,
                       const std::string& checkpoint_dir, StepDevice* device = nullptr);

}  // namespace nodeaudit::pipeline
