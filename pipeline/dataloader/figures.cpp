// host.dataloader's figures: what it records, in which unit, and which way is better.
// Dependency-free (figures.hpp only): compiled into the probe catalogue that the scorer and the
// reporters link.
#include "harness/core/figures.hpp"

namespace nodeaudit {

std::vector<ProbeFigures> dataloader_probe_figures() {
  const Better higher = Better::higher, lower = Better::lower;
  return {
      {"host.dataloader",
       "The PyTorch DataLoader over samples shaped like the profile's: samples/s and CPU per sample per "
       "worker count and decoder, the knee, and the best rate per worker and per GPU (higher is better).",
       ProbeRole::measurement,
       {{"samples_per_s", unit::samples_per_s, higher, {"decoder", "workers"}, "samples the DataLoader delivered per second, in one timed window (n = 1)"},
        {"cpu_per_sample", unit::us, lower, {"decoder", "workers"}, "CPU time of the main process and its workers per sample delivered"},
        {"knee_workers", unit::count, lower, {"decoder"}, "the fewest workers within 10% of the best samples/s"},
        {"samples_per_s_best", unit::samples_per_s, higher, {"decoder"}, "the best rate over the worker counts"},
        {"samples_per_s_per_worker", unit::samples_per_s, higher, {"decoder", "workers"}, "the rate with the most workers run, divided by those workers"},
        {"samples_per_s_per_gpu", unit::samples_per_s, higher, {"decoder"}, "the best rate shared among the node's GPUs; absent without GPUs"}},
       "`decoder`: pil, torchvision or raw; `workers`: the DataLoader's num_workers."},
  };
}

}  // namespace nodeaudit
