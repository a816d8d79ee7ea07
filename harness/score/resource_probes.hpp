// Which probe and which of its figures feed each resource the scorer judges: the one place in the
// harness that names probes. The scorer, the datasheet stand-in for GPUs not on the node
// (--target-gpus), the report's charts and scorecard, and learn ask this table; what a figure
// means, its unit and its direction come from the probe catalogue (figure_info.hpp); which series of a
// figure each reader takes (kernel=copy, pinned host memory, ...) is named in label_selectors.hpp.
#pragma once

namespace nodeaudit::score {

struct ResourceFigure {
  const char* probe;
  const char* metric;
};

namespace resource_figure {
// compute: the GEMM rate for the profile's dtype, slowest GPU (and the GPUs' uniformity)
inline constexpr ResourceFigure compute{"gpu.gemm", "tflops"};
// GPU memory traffic not hidden behind GEMMs: the copy kernel's bandwidth
inline constexpr ResourceFigure gpu_memory_bandwidth{"gpu.memory-bandwidth", "bandwidth"};
// memory fit: what one process can allocate, slowest GPU
inline constexpr ResourceFigure gpu_memory_capacity{"gpu.memory-capacity", "usable_bytes"};
// host-to-device: pinned copies with every GPU copying at once
inline constexpr ResourceFigure host_to_device{"gpu.pcie", "h2d_bandwidth"};
// data, sequential shards: read bandwidth; small files: the loader's samples/s
inline constexpr ResourceFigure storage_sequential{"storage.read", "bandwidth"};
inline constexpr ResourceFigure storage_samples{"storage.dataset", "samples_per_s"};
// checkpoint stall: write bandwidth
inline constexpr ResourceFigure checkpoint{"storage.checkpoint", "write_bandwidth"};
// CPU preprocessing: the native decoder's rate per GPU, or per core shared out
inline constexpr ResourceFigure native_decode{"host.decode", "images_per_s_per_gpu"};
inline constexpr ResourceFigure native_decode_per_core{"host.decode", "images_per_s_per_core"};
// CPU preprocessing with a PyTorch loader: the DataLoader's rate per GPU, or per worker shared out
inline constexpr ResourceFigure framework_loader{"host.dataloader", "samples_per_s_per_gpu"};
inline constexpr ResourceFigure framework_loader_per_worker{"host.dataloader", "samples_per_s_per_worker"};
// communication: all-reduce bus bandwidth at the gradients' size
inline constexpr ResourceFigure communication{"comm.allreduce", "busbw"};
}  // namespace resource_figure

// The storage probe whose figure feeds the data stage for an access pattern.
inline const ResourceFigure& storage_figure_for(bool sequential_shards) {
  return sequential_shards ? resource_figure::storage_sequential : resource_figure::storage_samples;
}

}  // namespace nodeaudit::score
