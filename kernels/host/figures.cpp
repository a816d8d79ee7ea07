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
         "the full-stage rate on every CPU this process may use, shared among the node's GPUs; absent without GPUs"}},
       "`stage`: decode, augment or full; `workers`: the count of pinned workers."},
      {"host.memory-bandwidth",
       "STREAM copy, scale, add and triad, and memcpy, over host memory on all cores (decimal GB/s, "
       "higher is better).",
       ProbeRole::measurement,
       {{"bandwidth", unit::gbps, higher, {"kernel"},
         "bytes read + written per second by the kernel, counted as STREAM counts them; memcpy is the copy "
         "programs get"}},
       "`kernel`: copy, scale, add, triad (in `info.isa` = avx512, avx2, sse2 or portable: the widest vector set "
       "the CPU runs) or memcpy (`std::memcpy` of each thread's slice: the C library's instructions and stores). "
       "Info: `info.stores`, `info.memcpy` (`what`, `slice_bytes`: the bytes each thread copies; glibc streams "
       "only a copy above its non-temporal threshold), `info.huge_pages`, `info.array_bytes`, `info.threads`."},
  };
}

}  // namespace nodeaudit
