// Host-side plan of a GEMM measurement: the dtypes, the shape candidates of the short shape search,
// the FLOP count and the per-dtype tolerance of the check against a float64 reference.
// No CUDA header: the probe maps Dtype onto cuBLASLt types in its own CUDA-using source.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nodeaudit::gpu {

enum class Dtype { fp64, fp32, tf32, fp16, bf16, fp8 };

std::string to_string(Dtype dtype);
// Parses "fp64", "bf16", ...; std::nullopt for anything else.
std::optional<Dtype> parse_dtype(const std::string& text);
// Parses a comma-separated list; the error names the bad entry and the accepted names.
struct DtypeList {
  std::vector<Dtype> dtypes;
  std::string error;  // empty when every entry was accepted
};
DtypeList parse_dtype_list(const std::string& text);
const std::vector<Dtype>& all_dtypes();

// Bytes of one input element (A and B) and one output element (C) as the probe stores them.
// fp8 e4m3 inputs produce a bf16 output; tf32 stores fp32 and rounds inside the tensor cores.
std::size_t input_element_bytes(Dtype dtype);
std::size_t output_element_bytes(Dtype dtype);

// Compute capability (major*10 + minor) the dtype needs: fp8 e4m3 matmul needs sm_89 or later.
int min_compute_capability(Dtype dtype);
// Reason the dtype cannot run on a device of compute capability `cc`, or std::nullopt.
std::optional<std::string> dtype_unsupported_reason(Dtype dtype, int cc);

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  bool operator==(const GemmShape&) const = default;
};
std::string to_string(const GemmShape& shape);  // "8192x8192x8192"

// 2*M*N*K: one multiply and one add per term of each output element.
double gemm_flops(const GemmShape& shape);
// Device bytes of A, B and C for one product.
std::uint64_t gemm_bytes(const GemmShape& shape, Dtype dtype);

// Products per timed repetition: enough that one timing spans about `target_s` of device work, so
// the host's launch latency before the first product starts (microseconds, inside the timing) is a
// negligible share. From the seconds of one warm-up product; 1 to 64; 64 when that time is 0.
int products_per_timing(double seconds_per_product, double target_s);

// A handful of large candidates, all multiples of 256, in the spirit of maximum-achievable-matmul
// finders: square sizes plus tall/wide variants around `base` (e.g. 8192). Candidates whose
// `copies` sets of A, B and C do not fit in `memory_budget_bytes` are dropped.
std::vector<GemmShape> shape_candidates(Dtype dtype, std::int64_t base, int copies,
                                        std::uint64_t memory_budget_bytes);

// How far a device product may lie from the float64 reference of the same (already quantized)
// inputs:  |got - ref| <= out_eps*|ref| + (2*in_eps + acc_eps*ceil(log2 K)) * sum_k |a_k*b_k|.
// out_eps: rounding of the stored output; in_eps: rounding the hardware applies to inputs we do not
// see (tf32 rounds fp32 inputs to 10 mantissa bits); acc_eps: accumulator precision.
struct Tolerance {
  double out_eps = 0, in_eps = 0, acc_eps = 0;
};
Tolerance tolerance_for(Dtype dtype);
double allowed_error(Dtype dtype, std::int64_t k, double reference, double sum_abs_products);

// Float64 reference of one output element from a row of A and a column of B (both length k).
struct ReferenceDot {
  double value = 0, sum_abs_products = 0;
};
ReferenceDot reference_dot(const double* a_row, const double* b_col, std::int64_t k);

// Repeated products of identical inputs compared element by element (burn-in style):
// relative difference above this counts as a mismatch.
double repeat_mismatch_threshold(Dtype dtype);

}  // namespace nodeaudit::gpu
