// The node as the balance model sees it for one profile: the stages, the predicted step, memory fit,
// host sizing, GPU uniformity and checkpoint cost. Computed once by build_model; the rules, the
// bottleneck sentence and the JSON are all read from it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/score/job_measured.hpp"
#include "harness/score/profile.hpp"
#include "harness/score/stages.hpp"

namespace nodeaudit::score {

struct StepModel {
  std::optional<std::string> not_judged;  // the step cannot be predicted (compute not measured)
  double gpu_busy_s = 0;                  // max(compute, GPU-memory traffic)
  double exposed_comm_s = 0;              // communication not hidden behind compute
  double loader_s = 0;                    // slowest of storage, CPU decode, host-to-device (they overlap compute)
  std::string loader_resource;
  bool loader_serial = false;  // the loader runs inside the step (a DataLoader without workers): it adds, not overlaps
  double checkpoint_s = 0;     // synchronous saves per step, from the job's measurement (a profile's are in the cost)
  double step_s = 0;       // max(gpu_busy + exposed_comm, loader) + checkpoint
  double utilization = 0;  // gpu_busy / step
  double exposed_comm_share = 0;
  double data_wait_share = 0;           // max(0, loader - (gpu_busy + exposed_comm)) / step
  // "storage (storage.dataset skipped: ...)": needed but not measured. The step above is then a lower
  // bound and what rests on the loader (data wait, utilization, the bottleneck) is not judged.
  std::vector<std::string> unmeasured;
  double samples_per_s = 0;             // node
  double tokens_per_s = 0;              // node, when the profile counts tokens
};

struct MemoryFit {
  std::optional<std::string> not_judged;
  double model_state_bytes = 0;  // per GPU, after sharding
  double activation_bytes = 0;   // per GPU: activation_bytes_per_sample x micro-batch
  double peak_bytes = 0;
  double usable_bytes = 0;
  std::string metric;
  bool datasheet = false;  // usable memory from the --target-gpus table
  double ratio() const { return usable_bytes > 0 ? peak_bytes / usable_bytes : 0; }
  double headroom_pct() const { return usable_bytes > 0 ? (usable_bytes - peak_bytes) / usable_bytes * 100 : 0; }
};

struct HostFit {
  std::optional<std::string> ram_not_judged;
  double ram_total_bytes = 0;
  double gpu_memory_total_bytes = 0;
  bool gpus_from_target = false;  // GPU count and memory are the --target-gpus node's, not measured
  bool limited = false;           // cores or RAM are a container's / cgroup's limits, not the host's
  std::optional<std::string> cores_not_judged;
  double cores = 0;
  double cores_per_gpu = 0;
};

struct Uniformity {
  std::optional<std::string> not_judged;
  bool applicable = true;  // false for --target-gpus: the GPUs are the table's, identical by construction
  double spread = 0;  // (max - min) / max of the per-GPU GEMM medians
  std::string metric;
  std::vector<std::pair<std::string, double>> per_gpu;
};

struct CheckpointCost {
  bool needed = false;
  std::optional<std::string> not_judged;
  double write_s = 0;     // one checkpoint at the measured write bandwidth
  double wall_share = 0;  // write_s / interval: added to the run's wall time (synchronous save)
  std::string metric;
};

struct NodeModel {
  StepShape shape;
  std::vector<Stage> stages;
  StepModel step;
  MemoryFit memory;
  HostFit host;
  Uniformity uniformity;
  CheckpointCost checkpoint;
  const Stage* stage(const std::string& resource) const;
};

// A job's demand: a profile, and, when the job was learned, what it measured about itself
// (job_measured.hpp) in `job_node`, the result it was learned in (its env, and the node figures
// `learn --audit` ran beside it).
struct JobDemand {
  const Profile* profile = nullptr;
  const JobMeasured* measured = nullptr;
  const nlohmann::json* job_node = nullptr;
  // The node is the job's own with another CPU count (`learn --vary cpus`): its reads are as the
  // job measured them there, inside its data wait, so no storage figure is asked for.
  bool storage_as_measured = false;
  // The steps asked for from a cold page cache (predict --steps); none: a long run's steady state.
  std::optional<ColdRun> cold_run;
};

// The one prediction of a step: a job's demand against a node's figures (a result). Every answer
// about a step (run --profile, score, learn's data-wait line, vary's advice, predict, match, the
// reports) is read from it.
NodeModel build_model(const JobDemand& job, const nlohmann::json& result);
NodeModel build_model(const Profile& profile, const nlohmann::json& result);  // a profile alone

}  // namespace nodeaudit::score
