// Percent of peak reads the datasheet peaks of the one GPU table (harness/score/gpu_table.cpp),
// keyed by the exact device name the CUDA runtime reports.
#include "kernels/gpu/peak_table.hpp"

#include "harness/score/gpu_table.hpp"

namespace nodeaudit::gpu {

std::optional<double> peak_tflops(const std::string& device_name, Dtype dtype) {
  const score::GpuModel* model = score::find_gpu_model_by_device(device_name);
  if (!model) return std::nullopt;
  const auto it = model->peak_tflops.find(to_string(dtype));
  if (it == model->peak_tflops.end()) return std::nullopt;
  return it->second.value;
}

std::optional<double> peak_memory_gbps(const std::string& device_name) {
  const score::GpuModel* model = score::find_gpu_model_by_device(device_name);
  if (!model || !model->hbm_peak_gbps) return std::nullopt;
  return model->hbm_peak_gbps->value;
}

std::optional<double> percent_of_peak(double measured, std::optional<double> peak) {
  if (!peak || *peak <= 0) return std::nullopt;
  return measured / *peak * 100.0;
}

}  // namespace nodeaudit::gpu
