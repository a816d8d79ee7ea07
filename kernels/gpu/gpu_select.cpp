// GPU selection for the GPU probes.
#include "kernels/gpu/gpu_select.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace nodeaudit::gpu {

GpuSelection select_gpus(const std::optional<std::vector<int>>& requested, int device_count) {
  GpuSelection selection;
  if (!requested) {
    for (int d = 0; d < device_count; ++d) selection.devices.push_back(d);
    return selection;
  }
  for (int d : *requested) {
    if (d < 0 || d >= device_count) {
      selection.error = fmt::format("--gpus: GPU {} does not exist; the CUDA runtime sees {} device(s){}", d, device_count,
                                    device_count > 0 ? fmt::format(" (0-{})", device_count - 1) : "");
      selection.devices.clear();
      return selection;
    }
    if (std::find(selection.devices.begin(), selection.devices.end(), d) == selection.devices.end())
      selection.devices.push_back(d);
  }
  if (selection.devices.empty()) selection.error = "--gpus: no GPU selected";
  return selection;
}

Range split_range(std::size_t total, std::size_t parts, std::size_t index) {
  if (parts == 0) return {};
  const std::size_t per = total / parts, extra = total % parts;
  const std::size_t begin = index * per + std::min(index, extra);
  return {begin, begin + per + (index < extra ? 1 : 0)};
}

}  // namespace nodeaudit::gpu
