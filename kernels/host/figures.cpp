// The host probes' figures: what each one records, in which unit, and which way is better.
// Dependency-free (figures.hpp only): compiled into the probe catalogue that the scorer and the
// reporters link.
#include "harness/core/figures.hpp"

namespace nodeaudit {

std::vector<ProbeFigures> host_probe_figures() {
  const Better higher = Better::higher;
  return {
      {"host.decode",
       "CPU JPEG decode and training augmentation: images/s per worker count, per core and per GPU "
       "(higher is better); what a native loader reaches, a Python loader reaches less.",
       ProbeRole::measurement,
       {{"images_per_s", unit::images_per_s, higher, {"workers", "stage"},
         "images through the stage (decode, augment, full) per second with that many pinned workers"},
        {"images_per_s_per_core", unit::images_per_s, higher, {"stage"},
         "the rate at the largest worker count divided by those workers"},
        {"images_per_s_per_gpu", unit::images_per_s, higher, {"stage"},
         "the full-stage rate on every CPU this process may use, shared among the node's GPUs"}}},
      {"host.memory-bandwidth",
       "STREAM copy, scale, add and triad, and memcpy, over host memory on all cores (decimal GB/s, "
       "higher is better).",
       ProbeRole::measurement,
       {{"bandwidth", unit::gbps, higher, {"kernel"},
         "bytes read + written per second by the kernel (copy, scale, add, triad in the CPU's widest vectors, "
         "info.isa; memcpy: the C library's std::memcpy, the copy programs get), counted as STREAM counts them"}}},
  };
}

}  // namespace nodeaudit
