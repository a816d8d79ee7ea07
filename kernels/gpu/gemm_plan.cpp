// Shape candidates, FLOP counts and tolerances for gpu.gemm and gpu.stress.
#include "kernels/gpu/gemm_plan.hpp"

#include <cmath>
#include <sstream>

#include <fmt/format.h>

namespace nodeaudit::gpu {

namespace {
struct DtypeName {
  Dtype dtype;
  const char* name;
};
constexpr DtypeName dtype_names[] = {{Dtype::fp64, "fp64"}, {Dtype::fp32, "fp32"}, {Dtype::tf32, "tf32"},
                                     {Dtype::fp16, "fp16"}, {Dtype::bf16, "bf16"}, {Dtype::fp8, "fp8"}};
}  // namespace

std::string to_string(Dtype dtype) {
  for (const auto& d : dtype_names)
    if (d.dtype == dtype) return d.name;
  return "unknown";
}

std::optional<Dtype> parse_dtype(const std::string& text) {
  for (const auto& d : dtype_names)
    if (text == d.name) return d.dtype;
  return std::nullopt;
}

DtypeList parse_dtype_list(const std::string& text) {
  DtypeList out;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    const auto dtype = parse_dtype(item);
    if (!dtype) {
      out.error = fmt::format("--dtypes {}: unknown dtype '{}'; accepted: fp64,fp32,tf32,fp16,bf16,fp8", text, item);
      return out;
    }
    out.dtypes.push_back(*dtype);
  }
  if (out.dtypes.empty()) out.error = fmt::format("--dtypes '{}': name at least one of fp64,fp32,tf32,fp16,bf16,fp8", text);
  return out;
}

const std::vector<Dtype>& all_dtypes() {
  static const std::vector<Dtype> dtypes{Dtype::fp64, Dtype::fp32, Dtype::tf32, Dtype::fp16, Dtype::bf16, Dtype::fp8};
  return dtypes;
}

std::size_t input_element_bytes(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp64: return 8;
    case Dtype::fp32:
    case Dtype::tf32: return 4;
    case Dtype::fp16:
    case Dtype::bf16: return 2;
    case Dtype::fp8: return 1;
  }
  return 0;
}

std::size_t output_element_bytes(Dtype dtype) { return dtype == Dtype::fp8 ? 2 : input_element_bytes(dtype); }

int min_compute_capability(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp8: return 89;
    case Dtype::tf32:
    case Dtype::bf16: return 80;
    default: return 0;
  }
}

std::optional<std::string> dtype_unsupported_reason(Dtype dtype, int cc) {
  const int need = min_compute_capability(dtype);
  if (cc >= need) return std::nullopt;
  return fmt::format("{} matmul needs compute capability {}.{} or later; this GPU is {}.{}", to_string(dtype), need / 10,
                     need % 10, cc / 10, cc % 10);
}

std::string to_string(const GemmShape& shape) { return fmt::format("{}x{}x{}", shape.m, shape.n, shape.k); }

double gemm_flops(const GemmShape& shape) {
  return 2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) * static_cast<double>(shape.k);
}

std::uint64_t gemm_bytes(const GemmShape& shape, Dtype dtype) {
  const auto m = static_cast<std::uint64_t>(shape.m), n = static_cast<std::uint64_t>(shape.n),
             k = static_cast<std::uint64_t>(shape.k);
  return (m * k + k * n) * input_element_bytes(dtype) + m * n * output_element_bytes(dtype);
}

int products_per_timing(double seconds_per_product, double target_s) {
  constexpr int most = 64;
  if (!(seconds_per_product > 0)) return most;
  const double wanted = std::ceil(target_s / seconds_per_product);
  return wanted <= 1 ? 1 : wanted >= most ? most : static_cast<int>(wanted);
}

std::vector<GemmShape> shape_candidates(Dtype dtype, std::int64_t base, int copies, std::uint64_t memory_budget_bytes) {
  base = std::max<std::int64_t>(256, base / 256 * 256);
  const std::int64_t half = std::max<std::int64_t>(256, base / 2 / 256 * 256);
  const std::int64_t large = base + half;
  const GemmShape raw[] = {{base, base, base}, {half, half, half}, {large, large, large},
                           {base, base, 2 * base}, {2 * base, base, base}};
  std::vector<GemmShape> shapes;
  for (const GemmShape& s : raw) {
    const bool fits = gemm_bytes(s, dtype) * static_cast<std::uint64_t>(copies) <= memory_budget_bytes;
    bool seen = false;
    for (const auto& t : shapes) seen = seen || t == s;
    if (fits && !seen) shapes.push_back(s);
  }
  return shapes;
}

Tolerance tolerance_for(Dtype dtype) {
  constexpr double eps32 = 0x1p-23, eps64 = 0x1p-52;
  switch (dtype) {
    case Dtype::fp64: return {eps64, 0, eps64};
    case Dtype::fp32: return {eps32, 0, eps32};
    case Dtype::tf32: return {eps32, 0x1p-11, eps32};
    case Dtype::fp16: return {0x1p-11, 0, eps32};
    case Dtype::bf16: return {0x1p-8, 0, eps32};
    // Hopper's fp8 tensor cores keep about 14 bits of the running sum (cuBLAS promotes it
    // periodically); the output is bf16.
    case Dtype::fp8: return {0x1p-8, 0, 0x1p-13};
  }
  return {};
}

double allowed_error(Dtype dtype, std::int64_t k, double reference, double sum_abs_products) {
  const Tolerance t = tolerance_for(dtype);
  const double depth = std::ceil(std::log2(static_cast<double>(std::max<std::int64_t>(k, 2))));
  // The factor 4 leaves room for the accumulation order the library picks; a wrong element of
  // random data misses by the order of |ref| itself, far beyond this bound.
  return 4.0 * (t.out_eps * std::fabs(reference) + (2.0 * t.in_eps + t.acc_eps * depth) * sum_abs_products);
}

ReferenceDot reference_dot(const double* a_row, const double* b_col, std::int64_t k) {
  ReferenceDot dot;
  for (std::int64_t i = 0; i < k; ++i) {
    const double product = a_row[i] * b_col[i];
    dot.value += product;
    dot.sum_abs_products += std::fabs(product);
  }
  return dot;
}

double repeat_mismatch_threshold(Dtype dtype) {
  // Same inputs, same algorithm: results should be bit-identical; the thresholds are those burn-in
  // tools use so that a reordered reduction is not reported as a fault.
  return dtype == Dtype::fp64 ? 1e-7 : 1e-3;
}

}  // namespace nodeaudit::gpu
