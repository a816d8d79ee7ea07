// The datasheet peak table. Figures are NVIDIA's published dense peaks: FP64 is the tensor-core
// FP64 figure (cuBLAS DGEMM uses the FP64 tensor cores on sm_80 and later), TF32/FP16/BF16/FP8 are
// the tensor-core figures without sparsity.
#include "peak_table.hpp"

namespace nodeaudit::gpu {

namespace {
const DevicePeaks peak_table[] = {
    {"NVIDIA A100-SXM4-80GB", 19.5, 19.5, 156, 312, 312, std::nullopt, 2039},
    {"NVIDIA A100-SXM4-40GB", 19.5, 19.5, 156, 312, 312, std::nullopt, 1555},
    {"NVIDIA A100 80GB PCIe", 19.5, 19.5, 156, 312, 312, std::nullopt, 1935},
    {"NVIDIA H100 80GB HBM3", 67, 67, 494.7, 989.4, 989.4, 1978.9, 3350},
    {"NVIDIA H100 PCIe", 51, 51, 378, 756, 756, 1513, 2000},
    {"NVIDIA H200", 67, 67, 494.7, 989.4, 989.4, 1978.9, 4800},
};
}  // namespace

const DevicePeaks* find_device_peaks(const std::string& device_name) {
  for (const auto& entry : peak_table)
    if (device_name == entry.device_name) return &entry;
  return nullptr;
}

std::optional<double> peak_tflops(const std::string& device_name, Dtype dtype) {
  const DevicePeaks* p = find_device_peaks(device_name);
  if (!p) return std::nullopt;
  switch (dtype) {
    case Dtype::fp64: return p->fp64_tflops;
    case Dtype::fp32: return p->fp32_tflops;
    case Dtype::tf32: return p->tf32_tflops;
    case Dtype::fp16: return p->fp16_tflops;
    case Dtype::bf16: return p->bf16_tflops;
    case Dtype::fp8: return p->fp8_tflops;
  }
  return std::nullopt;
}

std::optional<double> peak_memory_gbps(const std::string& device_name) {
  const DevicePeaks* p = find_device_peaks(device_name);
  if (!p) return std::nullopt;
  return p->memory_gbps;
}

std::optional<double> percent_of_peak(double measured, std::optional<double> peak) {
  if (!peak || *peak <= 0) return std::nullopt;
  return measured / *peak * 100.0;
}

}  // namespace nodeaudit::gpu
