// The kernels in AVX-512F (64-byte registers): 8 doubles per register, 1 streaming store per cache line.
#include "kernels/host/stream_lines_isa.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

// Everything defined below, the shared loop included, is compiled for this instruction set only.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#else
#pragma GCC target("avx512f")
#endif
#include "kernels/host/stream_vector_lines.hpp"

namespace nodeaudit::host {
namespace {

struct Avx512Lanes {
  using reg = __m512d;
  static constexpr std::size_t lanes = 8;
  static reg load(const double* p) { return _mm512_load_pd(p); }
  static reg set1(double s) { return _mm512_set1_pd(s); }
  static reg add(reg x, reg y) { return _mm512_add_pd(x, y); }
  static reg mul(reg x, reg y) { return _mm512_mul_pd(x, y); }
  static void store(double* p, reg v) { _mm512_store_pd(p, v); }
  static void stream(double* p, reg v) { _mm512_stream_pd(p, v); }
};

}  // namespace

void stream_lines_avx512(std::size_t kernel, StoreKind stores, double* a, double* b, double* c, std::size_t first,
                         std::size_t last, double scalar) {
  vector_stream_kernel<Avx512Lanes>(kernel, stores, a, b, c, first, last, scalar);
}

}  // namespace nodeaudit::host

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
