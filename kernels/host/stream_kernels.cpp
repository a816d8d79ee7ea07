#include "kernels/host/stream_kernels.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace nodeaudit::host {
namespace {

void cached_kernel(std::size_t kernel, double* a, double* b, double* c, std::size_t begin, std::size_t end, double s) {
  switch (kernel) {
    case 0: for (std::size_t i = begin; i < end; ++i) c[i] = a[i]; break;
    case 1: for (std::size_t i = begin; i < end; ++i) b[i] = s * c[i]; break;
    case 2: for (std::size_t i = begin; i < end; ++i) c[i] = a[i] + b[i]; break;
    default: for (std::size_t i = begin; i < end; ++i) a[i] = b[i] + s * c[i]; break;
  }
}

#if defined(__SSE2__)
// One cache line (8 doubles) per iteration, four 16-byte streaming stores to it in order, so a
// write-combining buffer fills completely and goes out as one full-line write.
template <typename LineOp>
void streaming_lines(double* out, std::size_t begin, std::size_t end, LineOp line_value) {
  for (std::size_t i = begin; i < end; i += 8) {
    _mm_stream_pd(out + i, line_value(i));
    _mm_stream_pd(out + i + 2, line_value(i + 2));
    _mm_stream_pd(out + i + 4, line_value(i + 4));
    _mm_stream_pd(out + i + 6, line_value(i + 6));
  }
}

void streaming_kernel(std::size_t kernel, double* a, double* b, double* c, std::size_t begin, std::size_t end, double s) {
  // Whole aligned lines with streaming stores; a ragged tail (only the array's last slice has one)
  // with ordinary stores.
  const std::size_t first = (begin + 7) / 8 * 8;
  const std::size_t last = first > end ? first : first + (end - first) / 8 * 8;
  if (first > begin) cached_kernel(kernel, a, b, c, begin, first < end ? first : end, s);
  if (first >= end) return;
  const __m128d scalar = _mm_set1_pd(s);
  switch (kernel) {
    case 0: streaming_lines(c, first, last, [&](std::size_t i) { return _mm_load_pd(a + i); }); break;
    case 1: streaming_lines(b, first, last, [&](std::size_t i) { return _mm_mul_pd(scalar, _mm_load_pd(c + i)); }); break;
    case 2:
      streaming_lines(c, first, last, [&](std::size_t i) { return _mm_add_pd(_mm_load_pd(a + i), _mm_load_pd(b + i)); });
      break;
    default:
      streaming_lines(a, first, last, [&](std::size_t i) {
        return _mm_add_pd(_mm_load_pd(b + i), _mm_mul_pd(scalar, _mm_load_pd(c + i)));
      });
      break;
  }
  cached_kernel(kernel, a, b, c, last, end, s);
  _mm_sfence();  // streaming stores are weakly ordered: make them visible before the team's barrier
}
#endif

}  // namespace

bool streaming_stores_available() {
#if defined(__SSE2__)
  return true;
#else
  return false;
#endif
}

void run_stream_kernel(std::size_t kernel, StoreKind stores, double* a, double* b, double* c, std::size_t begin,
                       std::size_t end, double scalar) {
#if defined(__SSE2__)
  if (stores == StoreKind::streaming) return streaming_kernel(kernel, a, b, c, begin, end, scalar);
#endif
  cached_kernel(kernel, a, b, c, begin, end, scalar);
}

}  // namespace nodeaudit::host
