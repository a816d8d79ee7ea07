// How long one training step's compute takes on a GPU the node may not have: the profile's FLOPs
// per step divided by the GPU table's GEMM rate (a published measurement where there is one, the
// same figure `--target-gpus` scores with) times the profile's model efficiency, as MLPerf Storage
// emulates accelerators by sleeping; how long the gradient all-reduce takes (gradient bytes x the
// all-reduce bus factor / the table's busbw at the gradient size, nccl-tests' convention) and how
// much of it the profile hides behind compute. Also the checkpoint schedule scaled to a short run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/score/gpu_table.hpp"
#include "harness/score/profile.hpp"

namespace nodeaudit::pipeline {

// The GPUs --emulate-compute accepts: the GPU table's models (score::known_gpu_models()).
std::string accepted_gpu_names();

struct ComputeDemand {
  double flops_per_step = 0;  // per GPU
  double compute_s = 0;       // per step
  std::string source;         // how compute_s was obtained
};

// Derived from the profile: samples_per_step x flops_per_sample / (table GEMM rate x model_efficiency).
// Empty `error` on success; else why the table cannot serve this profile (no rate for its dtype).
ComputeDemand derive_compute(const score::Profile& profile, int samples_per_step, const score::GpuModel& gpu,
                             std::string& error);

// The table's all-reduce busbw for `gpu` at the size nearest the profile's gradient bytes, and
// where it comes from; 0 when the table has none for this GPU.
double table_busbw(const score::Profile& profile, const score::GpuModel& gpu, std::string& source);

struct CommDemand {
  int gpus = 1;               // GPUs of the emulated node (the all-reduce spans them)
  double gradient_bytes = 0;  // one gradient all-reduce
  double bus_bytes = 0;       // per GPU per step: gradient bytes x 2(G-1)/G (x 1.5 x accumulation when fully sharded)
  double busbw_gbps = 0;
  std::string busbw_source;
  double time_s = 0;     // bus_bytes / busbw
  double exposed_s = 0;  // time x (1 - comm_overlap): what adds to the step
};

// As the scorer's communication stage (harness/score/stages.cpp) computes it. One GPU or no
// trainable parameters: no all-reduce (all zero).
CommDemand derive_comm(const score::Profile& profile, int gpus, double busbw_gbps, std::string busbw_source);

struct CheckpointPlan {
  int every_steps = 0;  // 0 = no checkpoints
  double bytes = 0;     // per checkpoint
};

// Keeps the profile's checkpoint write demand (checkpoint bytes per second of training) while
// fitting checkpoints into a run of `steps`: one every steps / 2 (at least one in the timed part),
// each holding checkpoint_bytes x (interval of the run / profile's interval), at least 4 KiB.
CheckpointPlan scale_checkpoints(const score::Profile& profile, int steps, double compute_s);

}  // namespace nodeaudit::pipeline
