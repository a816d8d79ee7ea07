// The kernels' vector loop over whole cache lines, one template for every instruction set. Each
// per-ISA file (stream_lines_<isa>.cpp) includes this after its `#pragma GCC target`, so the
// loop, its lambdas and the lane type's functions are compiled for that instruction set and
// nothing else; they have internal linkage, so no copy compiled for a wider set can be picked by
// the linker for a narrower caller. Include only from those files.
#pragma once

#include <cstddef>

#include "kernels/host/stream_kernels.hpp"

namespace nodeaudit::host {
namespace {

// Lanes: using reg; lanes (doubles per register); load, set1, add, mul, store, stream.
// One cache line (8 doubles) per iteration, its stores in address order, so a write-combining
// buffer fills completely and goes out as one full-line write.
template <typename Lanes, typename LineValue>
void vector_lines(bool streaming, double* out, std::size_t first, std::size_t last, LineValue value) {
  static_assert(slice_alignment_elements % Lanes::lanes == 0);
  if (streaming) {
    for (std::size_t i = first; i < last; i += slice_alignment_elements)
      for (std::size_t j = 0; j < slice_alignment_elements; j += Lanes::lanes) Lanes::stream(out + i + j, value(i + j));
  } else {
    for (std::size_t i = first; i < last; i += slice_alignment_elements)
      for (std::size_t j = 0; j < slice_alignment_elements; j += Lanes::lanes) Lanes::store(out + i + j, value(i + j));
  }
}

// [first, last) whole cache lines of 64-byte-aligned arrays.
template <typename Lanes>
void vector_stream_kernel(std::size_t kernel, StoreKind stores, double* a, double* b, double* c, std::size_t first,
                          std::size_t last, double s) {
  using reg = typename Lanes::reg;
  const bool streaming = stores == StoreKind::streaming;
  const reg scalar = Lanes::set1(s);
  switch (kernel) {
    case 0: vector_lines<Lanes>(streaming, c, first, last, [&](std::size_t i) { return Lanes::load(a + i); }); break;
    case 1:
      vector_lines<Lanes>(streaming, b, first, last,
                          [&](std::size_t i) { return Lanes::mul(scalar, Lanes::load(c + i)); });
      break;
    case 2:
      vector_lines<Lanes>(streaming, c, first, last,
                          [&](std::size_t i) { return Lanes::add(Lanes::load(a + i), Lanes::load(b + i)); });
      break;
    default:
      vector_lines<Lanes>(streaming, a, first, last, [&](std::size_t i) {
        return Lanes::add(Lanes::load(b + i), Lanes::mul(scalar, Lanes::load(c + i)));
      });
      break;
  }
}

}  // namespace
}  // namespace nodeaudit::host
