// Whether a GPU is here, by NVML's word (`nodeaudit env`), never by the GPU probes' own status: a
// probe that wrongly runs, skips or fails must fail a test, not decide which tests apply.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/cli_expect.hpp"

namespace nodeaudit {

// Why there is no GPU to test on, or empty when NVML lists at least one.
inline std::string why_no_gpu() {
  const proc::ProcessResult r = proc::run_nodeaudit({"env", "--format", "json"});
  if (r.exit_code != 0) return "nodeaudit env failed: " + r.err;
  const nlohmann::json env = nlohmann::json::parse(r.out, nullptr, false);
  if (env.is_discarded()) return "nodeaudit env printed no JSON";
  if (env.value("gpus", nlohmann::json::array()).empty()) return "no GPU listed by NVML: " + env.value("gpu_status", std::string("?"));
  return "";
}

}  // namespace nodeaudit
