#include "compute_model.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace nodeaudit::pipeline {

const std::vector<GpuPeak>& gpu_peak_table() {
  // Dense tensor-core FP16/BF16 peaks; the datasheets print the 2:4-sparsity figure beside them (2x).
  // The link figures are per direction (the datasheets print both directions added): an upper bound
  // for all-reduce busbw, which nccl-tests measures below it.
  static const std::vector<GpuPeak> table{
      {"h100", 989.4, "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM: 1,979 TFLOP/s FP16 with sparsity / 2", 450,
       "datasheet (not measured): H100 SXM NVLink 900 GB/s both directions / 2"},
      {"h200", 989.4, "NVIDIA H200 Tensor Core GPU datasheet, H200 SXM: 1,979 TFLOP/s FP16 with sparsity / 2", 450,
       "datasheet (not measured): H200 SXM NVLink 900 GB/s both directions / 2"},
      {"a100", 312.0, "NVIDIA A100 Tensor Core GPU datasheet, A100 SXM: 312 TFLOP/s FP16 (624 with sparsity)", 300,
       "datasheet (not measured): A100 SXM NVLink 600 GB/s both directions / 2"},
      {"l40s", 362.05, "NVIDIA L40S datasheet: 362.05 TFLOP/s FP16 tensor (733 with sparsity)", 32,
       "datasheet (not measured): L40S PCIe Gen4 x16 64 GB/s both directions / 2 (no NVLink)"},
  };
  return table;
}

const GpuPeak* find_gpu_peak(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const GpuPeak& gpu : gpu_peak_table())
    if (gpu.name == lower) return &gpu;
  return nullptr;
}

std::string accepted_gpu_names() {
  std::string names;
  for (const GpuPeak& gpu : gpu_peak_table()) names += (names.empty() ? "" : ", ") + gpu.name;
  return names;
}

ComputeDemand derive_compute(const score::Profile& profile, int samples_per_step, const GpuPeak& gpu,
                             std::string& error) {
  ComputeDemand demand;
  const std::string& dtype = profile.model.dtype;
  if (dtype != "fp16" && dtype != "bf16") {
    error =
        fmt::format("profile {} computes in {}; the datasheet table holds fp16/bf16 peaks only: give --compute-time",
                    profile.name, dtype);
    return demand;
  }
  demand.flops_per_step = samples_per_step * profile.flops_per_sample();
  const double achieved_tflops = gpu.dense_fp16_tflops * profile.training.model_efficiency;
  demand.compute_s = demand.flops_per_step / (achieved_tflops * 1e12);
  demand.source =
      fmt::format("{:.3g} FLOP per step / ({} TFLOP/s {} peak x {:.2f} model efficiency)", demand.flops_per_step,
                  gpu.dense_fp16_tflops, gpu.name, profile.training.model_efficiency);
  return demand;
}

CommDemand derive_comm(const score::Profile& profile, int gpus, double busbw_gbps, std::string busbw_source) {
  CommDemand comm;
  comm.gpus = gpus;
  comm.gradient_bytes = profile.gradient_bytes();
  comm.busbw_gbps = busbw_gbps;
  comm.busbw_source = std::move(busbw_source);
  if (gpus < 2 || comm.gradient_bytes <= 0 || busbw_gbps <= 0) return comm;
  const double g = gpus;
  const double collectives =
      profile.training.sharding == score::Sharding::full ? 1.5 * profile.training.gradient_accumulation : 1.0;
  comm.bus_bytes = comm.gradient_bytes * 2 * (g - 1) / g * collectives;
  comm.time_s = comm.bus_bytes / (busbw_gbps * 1e9);
  comm.exposed_s = comm.time_s * (1 - profile.training.comm_overlap);
  return comm;
}

CheckpointPlan scale_checkpoints(const score::Profile& profile, int steps, double compute_s) {
  CheckpointPlan plan;
  const double interval_s = profile.training.checkpoint_interval_s;
  if (profile.training.checkpoint_bytes <= 0 || interval_s <= 0 || steps < 2) return plan;
  plan.every_steps = std::max(1, steps / 2);
  const double run_interval_s = plan.every_steps * compute_s;
  plan.bytes = std::max(4096.0, profile.training.checkpoint_bytes * run_interval_s / interval_s);
  return plan;
}

}  // namespace nodeaudit::pipeline
