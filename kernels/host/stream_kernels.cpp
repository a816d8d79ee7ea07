#include "kernels/host/stream_kernels.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>

#if defined(__x86_64__)
#include <emmintrin.h>

#include "kernels/host/stream_lines_isa.hpp"
#endif

namespace nodeaudit::host {
namespace {

constexpr std::size_t memcpy_kernel = 4;
static_assert(std::string_view(stream_kernels[memcpy_kernel].name) == "memcpy");

// The ragged head and tail of a slice, and every element where no vector set is used.
void element_kernel(std::size_t kernel, double* a, double* b, double* c, std::size_t begin, std::size_t end, double s) {
  switch (kernel) {
    case 0:
      for (std::size_t i = begin; i < end; ++i) c[i] = a[i];
      break;
    case 1:
      for (std::size_t i = begin; i < end; ++i) b[i] = s * c[i];
      break;
    case 2:
      for (std::size_t i = begin; i < end; ++i) c[i] = a[i] + b[i];
      break;
    default:
      for (std::size_t i = begin; i < end; ++i) a[i] = b[i] + s * c[i];
      break;
  }
}

#if defined(__x86_64__)
using LinesKernel = void (*)(std::size_t, StoreKind, double*, double*, double*, std::size_t, std::size_t, double);

LinesKernel lines_kernel_for(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::avx512: return stream_lines_avx512;
    case VectorIsa::avx2: return stream_lines_avx2;
    default: return stream_lines_sse2;
  }
}
#endif

}  // namespace

const char* isa_name(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::sse2: return "sse2";
    case VectorIsa::avx2: return "avx2";
    case VectorIsa::avx512: return "avx512";
    default: return "portable";
  }
}

std::vector<VectorIsa> supported_vector_isas() {
  std::vector<VectorIsa> isas{VectorIsa::portable};
#if defined(__x86_64__)
  // __builtin_cpu_supports also asks the OS (XGETBV) whether it saves the wide registers: where it
  // does not, the CPU's AVX2 or AVX-512 flags do not make those sets usable.
  __builtin_cpu_init();
  isas.push_back(VectorIsa::sse2);  // every x86-64 CPU has SSE2
  if (__builtin_cpu_supports("avx2")) isas.push_back(VectorIsa::avx2);
  if (__builtin_cpu_supports("avx512f")) isas.push_back(VectorIsa::avx512);
#endif
  return isas;
}

VectorIsa widest_vector_isa() {
  return supported_vector_isas().back();
}

void run_stream_kernel(std::size_t kernel, StoreKind stores, VectorIsa isa, double* a, double* b, double* c,
                       std::size_t begin, std::size_t end, double scalar) {
  if (kernel == memcpy_kernel) {
    std::memcpy(c + begin, a + begin, (end - begin) * sizeof(double));
    return;
  }
#if defined(__x86_64__)
  if (isa != VectorIsa::portable) {
    // Whole aligned lines in the vector set; a ragged head or tail (only an odd slice has one)
    // element by element with ordinary stores.
    const std::size_t first =
        std::min(end, (begin + slice_alignment_elements - 1) / slice_alignment_elements * slice_alignment_elements);
    const std::size_t last = first + (end - first) / slice_alignment_elements * slice_alignment_elements;
    element_kernel(kernel, a, b, c, begin, first, scalar);
    if (first < last) lines_kernel_for(isa)(kernel, stores, a, b, c, first, last, scalar);
    element_kernel(kernel, a, b, c, last, end, scalar);
    // Streaming stores are weakly ordered: make them visible before the team's barrier.
    if (stores == StoreKind::streaming) _mm_sfence();
    return;
  }
#endif
  element_kernel(kernel, a, b, c, begin, end, scalar);
}

}  // namespace nodeaudit::host
