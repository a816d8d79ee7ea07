// cuBLASLt set-up, timing and the two correctness checks of gpu.gemm and gpu.stress.
#include "kernels/gpu/gemm_runner.hpp"

#include <cmath>

#include <fmt/format.h>

namespace nodeaudit::gpu {

namespace {
constexpr std::uint64_t workspace_bytes = 64ull << 20;

struct LtTypes {
  cudaDataType_t input, output, scale;
  cublasComputeType_t compute;
};

LtTypes lt_types(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp64: return {CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F};
    case Dtype::fp32: return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case Dtype::tf32: return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
    case Dtype::fp16: return {CUDA_R_16F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case Dtype::bf16: return {CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case Dtype::fp8: return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F};
  }
  return {};
}

struct PreferenceDeleter {
  void operator()(cublasLtMatmulPreferenceOpaque_t* preference) const { cublasLtMatmulPreferenceDestroy(preference); }
};

cublasLtMatrixLayout_t make_layout(cudaDataType_t type, std::int64_t rows, std::int64_t cols) {
  cublasLtMatrixLayout_t layout = nullptr;
  check_cublas(cublasLtMatrixLayoutCreate(&layout, type, static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols), rows),
               fmt::format("cublasLtMatrixLayoutCreate({}x{})", rows, cols));
  return layout;
}
}  // namespace

void check_cublas(cublasStatus_t status, const std::string& call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw CudaFailure(fmt::format("{} failed: {} ({})", call, cublasGetStatusString(status), static_cast<int>(status)));
}

LtObjects::~LtObjects() {
  if (layout_a) cublasLtMatrixLayoutDestroy(layout_a);
  if (layout_b) cublasLtMatrixLayoutDestroy(layout_b);
  if (layout_c) cublasLtMatrixLayoutDestroy(layout_c);
  if (desc) cublasLtMatmulDescDestroy(desc);
  if (handle) cublasLtDestroy(handle);
}

Storage input_storage(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp64: return Storage::f64;
    case Dtype::fp32:
    case Dtype::tf32: return Storage::f32;
    case Dtype::fp16: return Storage::f16;
    case Dtype::bf16: return Storage::bf16;
    case Dtype::fp8: return Storage::e4m3;
  }
  return Storage::f32;
}

Storage output_storage(Dtype dtype) { return dtype == Dtype::fp8 ? Storage::bf16 : input_storage(dtype); }

LtGemm::LtGemm(int device, Dtype dtype, GemmShape shape, int copies, std::uint64_t seed)
    : device_(device), dtype_(dtype), shape_(shape), stream_(device) {
  const auto m = static_cast<std::uint64_t>(shape.m), n = static_cast<std::uint64_t>(shape.n), k = static_cast<std::uint64_t>(shape.k);
  for (int c = 0; c < copies; ++c) {
    a_.emplace_back(device, m * k * input_element_bytes(dtype));
    b_.emplace_back(device, k * n * input_element_bytes(dtype));
    c_.emplace_back(device, m * n * output_element_bytes(dtype));
    launch_fill_random(a_.back().get(), m * k, input_storage(dtype), seed + 2 * c, stream_.stream());
    launch_fill_random(b_.back().get(), k * n, input_storage(dtype), seed + 2 * c + 1, stream_.stream());
  }
  workspace_ = DeviceBuffer(device, workspace_bytes);
  counter_ = DeviceBuffer(device, sizeof(unsigned long long));
  const LtTypes t = lt_types(dtype);
  check_cublas(cublasLtCreate(&lt_.handle), "cublasLtCreate");
  check_cublas(cublasLtMatmulDescCreate(&lt_.desc, t.compute, t.scale), "cublasLtMatmulDescCreate");
  const cublasOperation_t transpose = CUBLAS_OP_T, keep = CUBLAS_OP_N;
  check_cublas(cublasLtMatmulDescSetAttribute(lt_.desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof transpose), "set TRANSA");
  check_cublas(cublasLtMatmulDescSetAttribute(lt_.desc, CUBLASLT_MATMUL_DESC_TRANSB, &keep, sizeof keep), "set TRANSB");
  lt_.layout_a = make_layout(t.input, shape.k, shape.m);
  lt_.layout_b = make_layout(t.input, shape.k, shape.n);
  lt_.layout_c = make_layout(t.output, shape.m, shape.n);
  cublasLtMatmulPreference_t raw_preference = nullptr;
  check_cublas(cublasLtMatmulPreferenceCreate(&raw_preference), "cublasLtMatmulPreferenceCreate");
  const std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, PreferenceDeleter> preference(raw_preference);
  check_cublas(cublasLtMatmulPreferenceSetAttribute(preference.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                    sizeof workspace_bytes),
               "set MAX_WORKSPACE_BYTES");
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(lt_.handle, lt_.desc, lt_.layout_a, lt_.layout_b, lt_.layout_c,
                                                               lt_.layout_c, preference.get(), 1, &heuristic_, &found);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED)
    throw NoAlgorithm(fmt::format("cublasLtMatmulAlgoGetHeuristic({} {} on GPU {}): not supported", to_string(dtype),
                                  to_string(shape), device));
  check_cublas(status, fmt::format("cublasLtMatmulAlgoGetHeuristic({} {})", to_string(dtype), to_string(shape)));
  if (found == 0) throw NoAlgorithm(fmt::format("cublasLtMatmulAlgoGetHeuristic({} {}): no algorithm", to_string(dtype), to_string(shape)));
}

LtGemm::~LtGemm() {
  cudaSetDevice(device_);
  cudaStreamSynchronize(stream_.stream());  // no product may still use the buffers or the descriptors
}

void LtGemm::run_product(int copy, void* output) {
  const double one64 = 1, zero64 = 0;
  const float one32 = 1, zero32 = 0;
  const bool wide = dtype_ == Dtype::fp64;
  const void* alpha = wide ? static_cast<const void*>(&one64) : &one32;
  const void* beta = wide ? static_cast<const void*>(&zero64) : &zero32;
  const auto c = static_cast<std::size_t>(copy);
  check_cublas(cublasLtMatmul(lt_.handle, lt_.desc, alpha, a_[c].get(), lt_.layout_a, b_[c].get(), lt_.layout_b, beta, output,
                              lt_.layout_c, output, lt_.layout_c, &heuristic_.algo, workspace_.get(), workspace_bytes, stream_.stream()),
               fmt::format("cublasLtMatmul({} {} on GPU {})", to_string(dtype_), to_string(shape_), device_));
}

void LtGemm::enqueue(int count) {
  check_cuda(cudaSetDevice(device_), fmt::format("cudaSetDevice({})", device_));
  for (int i = 0; i < count; ++i) {
    run_product(next_copy_, c_[static_cast<std::size_t>(next_copy_)].get());
    next_copy_ = (next_copy_ + 1) % static_cast<int>(a_.size());
  }
}

double LtGemm::timed(int count) {
  stream_.start();
  enqueue(count);
  stream_.stop();
  return stream_.elapsed_s();
}

std::uint64_t LtGemm::check_against_reference(int samples) {
  check_cuda(cudaSetDevice(device_), fmt::format("cudaSetDevice({})", device_));
  const auto s = static_cast<std::uint64_t>(samples), k = static_cast<std::uint64_t>(shape_.k);
  const std::uint64_t row_step = static_cast<std::uint64_t>(shape_.m) / s, col_step = static_cast<std::uint64_t>(shape_.n) / s;
  run_product(0, c_[0].get());
  DeviceBuffer gathered(device_, (2 * s * k + s * s) * sizeof(double));
  auto* rows = static_cast<double*>(gathered.get());
  double* cols = rows + s * k;
  double* outputs = cols + s * k;
  for (std::uint64_t r = 0; r < s; ++r) {
    launch_to_double(a_[0].get(), input_storage(dtype_), r * row_step * k, 1, k, rows + r * k, stream_.stream());
    launch_to_double(b_[0].get(), input_storage(dtype_), r * col_step * k, 1, k, cols + r * k, stream_.stream());
    // Column r*col_step of C, rows 0, row_step, 2*row_step, ...
    launch_to_double(c_[0].get(), output_storage(dtype_), r * col_step * static_cast<std::uint64_t>(shape_.m), row_step, s,
                     outputs + r * s, stream_.stream());
  }
  std::vector<double> host(gathered.bytes() / sizeof(double));
  check_cuda(cudaMemcpyAsync(host.data(), rows, gathered.bytes(), cudaMemcpyDeviceToHost, stream_.stream()), "cudaMemcpyAsync(D2H)");
  check_cuda(cudaStreamSynchronize(stream_.stream()), "cudaStreamSynchronize");
  std::uint64_t bad = 0;
  for (std::uint64_t i = 0; i < s; ++i)
    for (std::uint64_t j = 0; j < s; ++j) {
      const ReferenceDot ref = reference_dot(&host[i * k], &host[(s + j) * k], shape_.k);
      const double got = host[2 * s * k + j * s + i];
      bad += !(std::fabs(got - ref.value) <= allowed_error(dtype_, shape_.k, ref.value, ref.sum_abs_products));
    }
  return bad;
}

std::uint64_t LtGemm::check_repeatability() {
  check_cuda(cudaSetDevice(device_), fmt::format("cudaSetDevice({})", device_));
  DeviceBuffer second(device_, c_[0].bytes());
  run_product(0, c_[0].get());
  run_product(0, second.get());
  check_cuda(cudaMemsetAsync(counter_.get(), 0, sizeof(unsigned long long), stream_.stream()), "cudaMemsetAsync");
  const std::uint64_t elements = static_cast<std::uint64_t>(shape_.m) * static_cast<std::uint64_t>(shape_.n);
  launch_count_mismatches(c_[0].get(), second.get(), output_storage(dtype_), elements, repeat_mismatch_threshold(dtype_),
                          static_cast<unsigned long long*>(counter_.get()), stream_.stream());
  unsigned long long mismatches = 0;
  check_cuda(cudaMemcpyAsync(&mismatches, counter_.get(), sizeof mismatches, cudaMemcpyDeviceToHost, stream_.stream()),
             "cudaMemcpyAsync(D2H)");
  check_cuda(cudaStreamSynchronize(stream_.stream()), "cudaStreamSynchronize");
  return mismatches;
}

}  // namespace nodeaudit::gpu
