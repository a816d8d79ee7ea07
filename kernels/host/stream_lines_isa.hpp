// The per-instruction-set entry points behind run_stream_kernel (x86-64 builds only): each runs a
// kernel over whole cache lines [first, last) in its instruction set. Callers make sure the CPU
// has that set (__builtin_cpu_supports) before calling; a CPU without it stops at an illegal
// instruction.
#pragma once

#include <cstddef>

#include "kernels/host/stream_kernels.hpp"

namespace nodeaudit::host {

void stream_lines_sse2(std::size_t kernel, StoreKind stores, double* a, double* b, double* c, std::size_t first,
                       std::size_t last, double scalar);
void stream_lines_avx2(std::size_t kernel, StoreKind stores, double* a, double* b, double* c, std::size_t first,
                       std::size_t last, double scalar);
void stream_lines_avx512(std::size_t kernel, StoreKind stores, double* a, double* b, double* c, std::size_t first,
                         std::size_t last, double scalar);

}  // namespace nodeaudit::host
