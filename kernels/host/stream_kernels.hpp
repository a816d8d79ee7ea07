// STREAM's four kernels and a plain memcpy over one slice of three arrays, with ordinary stores or
// with non-temporal (streaming) stores, in the widest vectors the CPU offers. An ordinary store
// first reads its cache line from memory (a read for ownership) that STREAM's byte count leaves
// out, so a copy moves 24 B per element for the 16 B counted; a streaming store writes the line
// without reading it, so the bytes counted are the bytes moved. likwid-bench's *_mem_* kernels and
// STREAM built with streaming stores (icc -qopt-streaming-stores always) measure the second kind;
// gcc emits none of itself. The vector width matters to the second kind: a write-combining buffer
// fills in 4 stores of 16 B, 2 of 32 B or 1 of 64 B, and the narrow ones left a copy a quarter
// below what glibc's memcpy reaches on an AVX-512 core.
#pragma once

#include <cstddef>
#include <vector>

namespace nodeaudit::host {

enum class StoreKind { cached, streaming };

// The instruction set of the kernels' loads and stores. portable: plain C++ loops, the compiler's
// choice (where the build is not for x86-64); the others: x86-64 SIMD, chosen at run time.
enum class VectorIsa { portable, sse2, avx2, avx512 };

struct StreamKernel {
  const char* name;
  double bytes_per_element;  // STREAM's count: 8 B per element read or written
};

//   copy  c = a          16 B     scale b = s*c        16 B
//   add   c = a + b      24 B     triad a = b + s*c    24 B
//   memcpy c = a         16 B     std::memcpy of the slice: the copy a program gets from its C
//                                 library (which picks its own instructions and stores)
inline constexpr StreamKernel stream_kernels[] = {
    {"copy", 16}, {"scale", 16}, {"add", 24}, {"triad", 24}, {"memcpy", 16}};

// Elements per slice boundary: a whole cache line, so streaming stores fill write-combining
// buffers line by line and every slice starts 64-byte aligned (the arrays are page aligned).
inline constexpr std::size_t slice_alignment_elements = 8;

// "portable", "sse2", "avx2", "avx512": as the probe's info.isa says it.
const char* isa_name(VectorIsa isa);

// What this CPU and this build can run, narrowest first; portable is always there.
std::vector<VectorIsa> supported_vector_isas();

// The widest of supported_vector_isas(): what the probe runs.
VectorIsa widest_vector_isa();

// Runs stream_kernels[kernel] over [begin, end) of arrays that start on a 64-byte boundary, with
// `scalar`, in `isa` (which must be one of supported_vector_isas()). Streaming stores are fenced
// before returning, so the caller's barrier publishes them like ordinary stores. memcpy ignores
// `stores` and `isa`: the C library chooses both.
void run_stream_kernel(std::size_t kernel, StoreKind stores, VectorIsa isa, double* a, double* b, double* c,
                       std::size_t begin, std::size_t end, double scalar);

}  // namespace nodeaudit::host
