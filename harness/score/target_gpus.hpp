// `--target-gpus SPEC`: judge a host for GPUs it does not have (yet). SPEC is MODELxCOUNT from the GPU
// table (`h100x8`, `a100-80gbx4`) or a TOML file describing a GPU the table lacks. The GPU-side
// capacities (GEMM rate, GPU memory, device-memory bandwidth, pinned host-to-device, all-reduce
// busbw) then come from the table, each labelled `published measurement (another node: SOURCE)` or `datasheet peak (SOURCE)`; the host side (storage,
// CPU decode, host RAM, cores) stays measured, shared among the target's GPU count.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/score/gpu_table.hpp"
#include "harness/score/profile.hpp"

namespace nodeaudit::score {

struct TargetGpus {
  std::string spec;  // as given
  GpuModel model;
  int count = 0;
  std::string file;  // the TOML file the model came from; empty = the built-in table
};

inline constexpr int max_target_gpus = 64;

// Throws UsageError naming the bad part and what is accepted.
TargetGpus parse_target_gpus(const std::string& spec);
TargetGpus parse_target_gpus_toml(const std::string& toml_text, const std::string& path);

// Refuses (UsageError) a target without a GEMM rate for the profile's dtype: nothing could be judged.
void check_target_serves(const TargetGpus& target, const Profile& profile);

// The probes the overlay replaces: whatever the result holds for them is set aside.
const std::vector<std::string>& target_replaced_probes();

// The result as the scorer should see it for the target: env.gpus and the GPU-side probes replaced
// by datasheet entries, host.decode's per-GPU figure dropped (it was divided among the node's own
// GPUs; the scorer shares the cores among the target's instead).
nlohmann::json apply_target(const nlohmann::json& result, const TargetGpus& target);

// The assessment's "target_gpus" block: what was judged for, where every figure came from, and
// whether the node's own GPUs were measured but not used.
nlohmann::json target_json(const TargetGpus& target, const nlohmann::json& result);

}  // namespace nodeaudit::score
