// STREAM's four kernels over one slice of three arrays, with ordinary stores or with
// non-temporal (streaming) stores. An ordinary store first reads its cache line from memory (a
// read for ownership) that STREAM's byte count leaves out, so a copy moves 24 B per element for
// the 16 B counted; a streaming store writes the line without reading it, so the bytes counted
// are the bytes moved. likwid-bench's *_mem_* kernels and STREAM built with streaming stores
// (icc -qopt-streaming-stores always) measure the second kind; gcc emits none of itself.
#pragma once

#include <cstddef>
#include <string_view>

namespace nodeaudit::host {

enum class StoreKind { cached, streaming };

struct StreamKernel {
  const char* name;
  double bytes_per_element;  // STREAM's count: 8 B per element read or written
};

//   copy  c = a          16 B     scale b = s*c        16 B
//   add   c = a + b      24 B     triad a = b + s*c    24 B
inline constexpr StreamKernel stream_kernels[] = {{"copy", 16}, {"scale", 16}, {"add", 24}, {"triad", 24}};

// Elements per slice boundary: a whole cache line, so streaming stores fill write-combining
// buffers line by line and every slice starts 64-byte aligned (the arrays are page aligned).
inline constexpr std::size_t slice_alignment_elements = 8;

// Runs stream_kernels[kernel] over [begin, end) with `scalar`. Streaming stores are fenced before
// returning, so the caller's barrier publishes them like ordinary stores.
void run_stream_kernel(std::size_t kernel, StoreKind stores, double* a, double* b, double* c, std::size_t begin,
                       std::size_t end, double scalar);

// Whether this build has streaming stores (x86-64: SSE2 is in every x86-64 CPU); elsewhere
// StoreKind::streaming runs ordinary stores and the probe says so.
bool streaming_stores_available();

}  // namespace nodeaudit::host
