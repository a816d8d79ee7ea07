// Which CUDA devices a GPU probe uses: --gpus (RunSettings::gpus; empty optional = all) checked
// against the devices the CUDA runtime sees.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace nodeaudit::gpu {

struct GpuSelection {
  std::vector<int> devices;
  std::string error;  // non-empty when a requested GPU does not exist
};
GpuSelection select_gpus(const std::optional<std::vector<int>>& requested, int device_count);

// Splits `total` items into `parts` nearly equal contiguous ranges: [begin, end) of part `index`.
struct Range {
  std::size_t begin = 0, end = 0;
};
Range split_range(std::size_t total, std::size_t parts, std::size_t index);

}  // namespace nodeaudit::gpu
