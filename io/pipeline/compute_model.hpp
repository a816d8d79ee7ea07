// How long one training step's compute takes on a GPU the node may not have: the profile's FLOPs
// per step divided by a datasheet peak times the profile's model efficiency, as MLPerf Storage
// emulates accelerators by sleeping; how long the gradient all-reduce takes (gradient bytes x the
// all-reduce bus factor / a bus bandwidth, nccl-tests' convention) and how much of it the profile
// hides behind compute. Also the checkpoint schedule scaled to a short run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/score/profile.hpp"

namespace nodeaudit::pipeline {

struct GpuPeak {
  std::string name;          // as --emulate-compute spells it: "h100"
  double dense_fp16_tflops;  // dense (no sparsity) FP16/BF16 tensor-core peak, TFLOP/s
  std::string source;        // where the figure comes from
  double link_gbps;          // GPU-to-GPU bandwidth per direction, GB/s: the all-reduce busbw ceiling
  std::string link_source;
};

const std::vector<GpuPeak>& gpu_peak_table();
// Case-insensitive; nullptr for an unknown name.
const GpuPeak* find_gpu_peak(const std::string& name);
std::string accepted_gpu_names();  // "h100, h200, a100, l40s"

struct ComputeDemand {
  double flops_per_step = 0;  // per GPU
  double compute_s = 0;       // per step
  std::string source;         // how compute_s was obtained
};

// Derived from the profile: samples_per_step x flops_per_sample / (peak x model_efficiency).
// Empty `error` on success; else why the table cannot serve this profile (dtype not fp16/bf16).
ComputeDemand derive_compute(const score::Profile& profile, int samples_per_step, const GpuPeak& gpu,
                             std::string& error);

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
