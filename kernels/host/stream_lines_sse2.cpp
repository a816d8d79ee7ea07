// The kernels in SSE2 (16-byte registers): 2 doubles per register, 4 streaming stores per cache line.
#include "kernels/host/stream_lines_isa.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

// Everything defined below, the shared loop included, is compiled for this instruction set only.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("sse2"))), apply_to = function)
#else
#pragma GCC target("sse2")
#endif
#include "kernels/host/stream_vector_lines.hpp"

namespace nodeaudit::host {
namespace {

struct Sse2Lanes {
  using reg = __m128d;
  static constexpr std::size_t lanes = 2;
  static reg load(const double* p) { return _mm_load_pd(p); }
  static reg set1(double s) { return _mm_set1_pd(s); }
  static reg add(reg x, reg y) { return _mm_add_pd(x, y); }
  static reg mul(reg x, reg y) { return _mm_mul_pd(x, y); }
  static void store(double* p, reg v) { _mm_store_pd(p, v); }
  static void stream(double* p, reg v) { _mm_stream_pd(p, v); }
};

}  // namespace

void stream_lines_sse2(std::size_t kernel, StoreKind stores, double* a, double* b, double* c, std::size_t first,
                       std::size_t last, double scalar) {
  vector_stream_kernel<Sse2Lanes>(kernel, stores, a, b, c, first, last, scalar);
}

}  // namespace nodeaudit::host

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
