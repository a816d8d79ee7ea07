// Adds the CUDA runtime and cuBLAS versions to env["software"]; neither needs a device.
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/core/registry.hpp"
#include "kernels/gpu/gpu_config_rules.hpp"

namespace nodeaudit::gpu {
namespace {

void add_cuda_versions(nlohmann::json& env) {
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) env["software"]["cuda_runtime"] = format_cuda_version(runtime);
  const std::size_t lt = cublasLtGetVersion();  // major*10000 + minor*100 + patch
  env["software"]["cublas"] = fmt::format("{}.{}.{}", lt / 10000, lt / 100 % 100, lt % 100);
}

const EnvContributorRegistrar cuda_env_registrar{add_cuda_versions};

}  // namespace
}  // namespace nodeaudit::gpu
