// The balance model's per-resource figures: for each resource, what one step demands, the measured
// capacity it is divided by (and which metric that was), and the time it takes per step. A stage
// whose capacity was not measured carries the reason instead of a time.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/score/job_measured.hpp"
#include "harness/score/profile.hpp"
#include "harness/score/result_view.hpp"

namespace nodeaudit::score {

struct Stage {
  std::string resource;  // compute, gpu_memory_bandwidth, storage, cpu_decode, host_to_device, communication
  bool needed = true;    // false: the workload does not use it (the note says why)
  std::optional<std::string> not_judged;  // set when needed but not measured
  std::string note;
  double demand = 0;  // amount per step
  std::string demand_unit;
  double capacity = 0;
  std::string capacity_unit;
  std::string capacity_metric;
  double time_s = 0;                   // per step, at the measured capacity
  double exposed_time_s = 0;           // communication only: not hidden behind compute
  double capacity_gbps = 0;            // storage: the capacity expressed in GB/s, for the bottleneck sentence
  std::optional<double> knee_workers;  // storage.dataset's worker knee, when measured
  bool datasheet = false;              // the capacity is a --target-gpus table figure, not a measurement
  bool serial = false;                 // runs inside the step rather than beside compute (a loader without workers)
  double fetch_s = 0;                  // a learned job's loader: the rank's own time per step receiving batches,
                                       // waited for even when the workers are ahead
  // cpu_decode measured on the framework loader: the native decoder's rate (host.decode), the
  // headroom a faster decode path could bring before more cores are bought.
  std::optional<double> native_capacity;
  // The capacity is an upper bound of what the profile's stack reaches, and why (the native decoder
  // standing in for a framework loader that was not measured).
  std::optional<std::string> upper_bound;
  bool judged() const { return needed && !not_judged; }
};

// The workload as the node runs it: GPU count, samples per step.
struct StepShape {
  int gpus = 0;  // from env.gpus (0: no GPU found)
  int samples_per_gpu = 0;
  int samples_per_node = 0;  // samples_per_gpu x max(gpus, 1)
};
StepShape step_shape(const Profile& profile, const EnvFigures& env);

Stage compute_stage(const Profile& profile, const nlohmann::json& result, const StepShape& shape);
Stage gpu_memory_bandwidth_stage(const Profile& profile, const nlohmann::json& result, const StepShape& shape);
// The steps a prediction is for when they are not a long run's steady state: the mean of steps
// warmup+1 .. warmup+steps of a run that starts with none of its data in the page cache (what `learn
// --steps N --warmup W` measures on a node whose cache was cold).
struct ColdRun {
  int warmup_steps = 0;
  int steps = 0;
};
// Without a ColdRun, a data set larger than the page cache is served from it in the share it holds
// once the run is under way (the steady state a long run's cost is made of). The page cache has the
// node's free memory (no more than a memory cgroup's limit) less `job_resident_bytes`, the memory the
// job's own processes hold (JobMeasured::resident_bytes; 0 for a profile).
Stage storage_stage(const Profile& profile, const nlohmann::json& result, const StepShape& shape,
                    const EnvFigures& env, const std::optional<ColdRun>& cold_run = std::nullopt,
                    double job_resident_bytes = 0);
Stage cpu_decode_stage(const Profile& profile, const nlohmann::json& result, const StepShape& shape,
                       const EnvFigures& env);
Stage host_to_device_stage(const Profile& profile, const nlohmann::json& result, const StepShape& shape);
Stage communication_stage(const Profile& profile, const nlohmann::json& result, const StepShape& shape);

// The stages of a learned job, from what it measured on its own node (job_stages.cpp): its compute
// (the same GPU model or no GPU on either node: as measured; else scaled by the two GEMM rates, or
// the profile's counted FLOPs at this node's rate), its CPU (the loader's and the ranks' CPU time per
// step over the cores it gets here, scaled by the per-core loader rates of the two nodes) and its
// synchronous checkpoint saves.
Stage measured_compute_stage(const Profile& profile, const JobMeasured& job, const nlohmann::json& job_node,
                             const nlohmann::json& result, const StepShape& shape);
Stage measured_cpu_stage(const JobMeasured& job, const nlohmann::json& job_node, const nlohmann::json& result);
Stage measured_checkpoint_stage(const JobMeasured& job, const nlohmann::json& job_node, const nlohmann::json& result);
// The cores a job gets on the node of `result`: the host's, its cpuset and its CPU quota (fractional).
std::optional<double> job_cores(const nlohmann::json& result);

nlohmann::json to_json(const Stage& stage, double step_time_s);

}  // namespace nodeaudit::score
