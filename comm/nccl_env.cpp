// Adds the NCCL version to env["software"] (no device needed). Kept in the probe objects, not in
// the communicators' static library, so the registrar always reaches the binary.
#include <nccl.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/core/registry.hpp"

namespace nodeaudit::comm {
namespace {

void add_nccl_version(nlohmann::json& env) {
  int version = 0;  // major*10000 + minor*100 + patch since NCCL 2.9
  if (ncclGetVersion(&version) == ncclSuccess)
    env["software"]["nccl"] = fmt::format("{}.{}.{}", version / 10000, version / 100 % 100, version % 100);
}

const EnvContributorRegistrar nccl_env_registrar{add_nccl_version};

}  // namespace
}  // namespace nodeaudit::comm
