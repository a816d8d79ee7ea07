// Optimize or upgrade, for a job as learn measured it: one line from the rules of profiles/README.md
// (the [thresholds] upgrade_* fields): `upgrade is justified` when the step is compute-bound above
// upgrade_utilization_min, GPU memory is at or above upgrade_memory_min of the GPU, and data wait and
// communication are each at or below upgrade_wait_max; otherwise `optimize first`, naming each
// figure that failed. Every figure says where it came from: measured on this node (compute from NVML
// utilization where learn sampled it, else the step's CPU wall-clock time outside data wait and
// checkpoint, said as such), or, on a node without a GPU, the compute and memory side predicted for
// the target GPUs (`--target-gpus`). Communication is judged only from a measured all-reduce time;
// a distributed job without one is `not judged` on it (and so never `upgrade is justified`).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/learn/learned_job.hpp"
#include "harness/score/profile.hpp"

namespace nodeaudit::learn {

struct SourcedFigure {
  double value = 0;  // a fraction
  std::string source;
};

struct UpgradeInputs {
  std::optional<SourcedFigure> compute_share, memory_share, comm_share;
  SourcedFigure data_wait_share;
  std::string not_judged;        // why the compute side is unknown; empty when it is known
  std::string comm_not_judged;   // why communication is not judged; empty when judged or there is none
};

// The inputs for a learned job: on a GPU node its own figures (the largest rank's peak allocated
// bytes over `gpus_env`, the result's env.gpus); on a node without one, the compute side from `target_assessment` (the
// learned profile assessed for --target-gpus), or not judged without it.
// `gpu_util_pct`: NVML utilization over the measured steps (each GPU's median, averaged), when sampled.
// `all_reduce_share`: the measured all-reduce time's share of the step, when the job's was timed.
UpgradeInputs upgrade_inputs(const LearnedJob& job, std::optional<double> gpu_peak_bytes, const nlohmann::json& gpus_env, const nlohmann::json* target_assessment,
                             const std::string& target_label, std::optional<double> gpu_util_pct = std::nullopt,
                             std::optional<double> all_reduce_share = std::nullopt);

std::string optimize_or_upgrade(const UpgradeInputs& in, const score::Thresholds& thresholds = {});

}  // namespace nodeaudit::learn
