// How the real-GPU step spends a profile's work, decided on the host so it is tested without a
// GPU: the step's FLOPs become square cuBLASLt GEMMs (a third "forward", two thirds "backward", as
// a training step's backward pass costs about twice its forward), and the step's gradient bytes
// become NCCL all-reduces, in buckets issued as the backward GEMMs finish when the profile
// overlaps communication with compute (DDP's gradient buckets), else one after all compute.
#pragma once

#include <cstdint>
#include <string>

#include "harness/score/profile.hpp"
#include "kernels/gpu/gemm_plan.hpp"

namespace nodeaudit::pipeline {

struct StepGemms {
  gpu::Dtype dtype = gpu::Dtype::bf16;
  std::int64_t side = 0;  // M = N = K
  int products = 0;       // per step per GPU
  int forward = 0;        // products before the first gradient bucket can be ready
  double demanded_flops = 0, executed_flops = 0;
};

// The largest side in 8192, 4096, ..., 256 that still gives at least `min_products` products (so
// the rounding to whole products stays within a few percent and the backward pass can be split
// into buckets); 256 when even that gives fewer. At least one product.
StepGemms plan_step_gemms(double flops_per_step, gpu::Dtype dtype, int min_products = 24);

// The profile's compute dtype as a GEMM dtype: fp32 training runs its matmuls in tf32. Empty
// `error` on success.
gpu::Dtype gemm_dtype_for(const score::Profile& profile, std::string& error);

struct StepAllReduce {
  double bytes = 0;                // all-reduced per step per GPU (gradient bytes x collectives)
  int element_bytes = 4;           // 2 = bf16 gradients, else fp32
  int buckets = 1;                 // issued during backward when > 1
  std::uint64_t buffer_bytes = 0;  // device buffer per GPU; a bucket larger than this loops over it
  std::uint64_t bucket_bytes() const;
};

// Gradient bytes x (1.5 x accumulation when fully sharded, as the scorer counts it), in `buckets`
// buckets when the profile overlaps communication (comm_overlap > 0) and the backward pass has
// that many products, else one; the buffer is at most `max_buffer_bytes` (a multiple of 256 B).
StepAllReduce plan_step_allreduce(const score::Profile& profile, const StepGemms& gemms, int buckets = 4,
                                  std::uint64_t max_buffer_bytes = 256ull << 20);

// Backward products that must finish before bucket `b` (0-based) of `buckets` is issued.
int products_before_bucket(const StepGemms& gemms, int buckets, int b);

}  // namespace nodeaudit::pipeline
