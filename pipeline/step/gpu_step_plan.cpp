#include "pipeline/step/gpu_step_plan.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace nodeaudit::pipeline {

StepGemms plan_step_gemms(double flops_per_step, gpu::Dtype dtype, int min_products) {
  StepGemms plan;
  plan.dtype = dtype;
  plan.demanded_flops = flops_per_step;
  for (const std::int64_t side : {8192, 4096, 2048, 1024, 512, 256}) {
    plan.side = side;
    if (flops_per_step / gpu::gemm_flops({side, side, side}) >= min_products) break;
  }
  const double one = gpu::gemm_flops({plan.side, plan.side, plan.side});
  plan.products = std::max(1, static_cast<int>(std::lround(flops_per_step / one)));
  plan.forward = plan.products / 3;
  plan.executed_flops = plan.products * one;
  return plan;
}

gpu::Dtype gemm_dtype_for(const score::Profile& profile, std::string& error) {
  const std::string& name = profile.model.dtype;
  if (name == "fp32") return gpu::Dtype::tf32;
  if (const auto dtype = gpu::parse_dtype(name); dtype && *dtype != gpu::Dtype::fp64) return *dtype;
  error = fmt::format(
      "profile {}: model.dtype {} has no training GEMM here; accepted: fp32 (run as tf32), tf32, "
      "fp16, bf16, fp8",
      profile.name, name);
  return gpu::Dtype::bf16;
}

std::uint64_t StepAllReduce::bucket_bytes() const {
  const double per_bucket = bytes / buckets;
  return static_cast<std::uint64_t>(std::ceil(per_bucket / element_bytes)) * static_cast<std::uint64_t>(element_bytes);
}

StepAllReduce plan_step_allreduce(const score::Profile& profile, const StepGemms& gemms, int buckets,
                                  std::uint64_t max_buffer_bytes) {
  StepAllReduce plan;
  const double collectives =
      profile.training.sharding == score::Sharding::full ? 1.5 * profile.training.gradient_accumulation : 1.0;
  plan.bytes = profile.gradient_bytes() * collectives;
  plan.element_bytes = profile.model.gradient_bytes_per_parameter == 2 ? 2 : 4;
  const int backward = gemms.products - gemms.forward;
  plan.buckets = profile.training.comm_overlap > 0 ? std::max(1, std::min(buckets, backward)) : 1;
  plan.buffer_bytes = std::min<std::uint64_t>(plan.bucket_bytes(), max_buffer_bytes) / 256 * 256;
  if (plan.buffer_bytes == 0 && plan.bytes > 0) plan.buffer_bytes = 256;
  return plan;
}

int products_before_bucket(const StepGemms& gemms, int buckets, int b) {
  const int backward = gemms.products - gemms.forward;
  // Bucket b holds the gradients of the layers whose backward GEMMs end at its share of the pass.
  return gemms.forward + static_cast<int>(static_cast<long long>(backward) * (b + 1) / buckets);
}

}  // namespace nodeaudit::pipeline
