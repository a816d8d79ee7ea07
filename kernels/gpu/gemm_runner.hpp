// One cuBLASLt matmul set up on one GPU: D = A^T * B in column-major (the "TN" layout that fp8
// needs), with `copies` independent sets of A, B and C so consecutive products rotate buffers and
// never run out of L2. Inputs are random in [-1, 1). CUDA-using sources only.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <cublasLt.h>

#include "kernels/gpu/cuda_common.hpp"
#include "kernels/gpu/device_kernels.hpp"
#include "kernels/gpu/gemm_plan.hpp"

namespace nodeaudit::gpu {

Storage input_storage(Dtype dtype);
Storage output_storage(Dtype dtype);

// cuBLASLt has no algorithm for this dtype and shape on this GPU (heuristic: none found or
// CUBLAS_STATUS_NOT_SUPPORTED): the dtype or shape is skipped with this reason, the rest run.
class NoAlgorithm : public CudaFailure {
 public:
  using CudaFailure::CudaFailure;
};

// The cuBLASLt objects of one LtGemm, destroyed by their own destructor so that a constructor
// that throws half-way (no algorithm for a shape, a failed call) leaks none of them.
struct LtObjects {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t layout_a = nullptr, layout_b = nullptr, layout_c = nullptr;
  LtObjects() = default;
  ~LtObjects();
  LtObjects(const LtObjects&) = delete;
  LtObjects& operator=(const LtObjects&) = delete;
};

class LtGemm {
 public:
  LtGemm(int device, Dtype dtype, GemmShape shape, int copies, std::uint64_t seed);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  // Enqueues `count` products on the stream, rotating through the copies.
  void enqueue(int count);
  // Times `count` products with CUDA events (after what is already queued) and returns seconds.
  double timed(int count);
  // Float64 reference check of copy 0 on `samples` x `samples` elements: mismatching elements.
  std::uint64_t check_against_reference(int samples);
  // Runs copy 0 twice into two outputs and counts elements that differ (burn-in style).
  std::uint64_t check_repeatability();

  const GemmShape& shape() const { return shape_; }
  TimedStream& stream() { return stream_; }
  int device() const { return device_; }

 private:
  void run_product(int copy, void* output);
  int device_;
  Dtype dtype_;
  GemmShape shape_;
  TimedStream stream_;
  std::vector<DeviceBuffer> a_, b_, c_;
  DeviceBuffer workspace_, counter_;
  LtObjects lt_;  // declared after the buffers: destroyed before them
  cublasLtMatmulHeuristicResult_t heuristic_{};
  int next_copy_ = 0;
};

void check_cublas(cublasStatus_t status, const std::string& call);

}  // namespace nodeaudit::gpu
