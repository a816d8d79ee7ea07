#include "harness/node/gpu_absence.hpp"

#include <dlfcn.h>

#include <cstring>

namespace nodeaudit {

namespace {
// The NVIDIA driver installs libnvidia-ml.so.1 beside libcuda.so.1; NVML is what nodeaudit already
// loads at run time, so its absence is the same test the env fingerprint makes.
constexpr const char* kDriverLibrary = "libnvidia-ml.so.1";
}  // namespace

std::optional<std::string> nvidia_driver_missing() {
  // RTLD_LAZY: only whether the loader finds the file matters; nothing is called.
  void* handle = dlopen(kDriverLibrary, RTLD_LAZY | RTLD_LOCAL);
  if (handle != nullptr) {
    dlclose(handle);
    return std::nullopt;
  }
  // A library that exists but does not load (wrong architecture, missing dependency) is a broken
  // driver, not an absent one: leave that case to the runtime's message.
  const char* why = dlerror();
  if (why != nullptr && std::strstr(why, "No such file or directory") == nullptr) return std::nullopt;
  return std::string("no NVIDIA driver (") + kDriverLibrary + " not found)";
}

std::string no_cuda_device_reason(const std::string& call_and_error) {
  if (auto missing = nvidia_driver_missing()) return *missing;
  return "no CUDA device (" + call_and_error + ")";
}

}  // namespace nodeaudit
