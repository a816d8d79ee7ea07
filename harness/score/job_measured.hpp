// What a job measured about itself on the node it was learned on, that no figure of another node
// replaces: its compute per step (and on which GPU model), the CPU its processes spent per step (the
// ranks' own processes and the DataLoader workers apart), its loader's parallelism and its
// checkpoint saves. `learn` writes it into its result (learn.job details.job_measured); the
// prediction model (model.hpp) reads it to carry the job to another node. Read and written here only.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace nodeaudit::score {

struct JobMeasured {
  // Means over the measured steps of the lead rank, in seconds per step.
  double step_s = 0;        // wall time of a step
  double compute_s = 0;     // step minus data wait minus checkpoint saves: the device's (or CPU model's) share
  double data_wait_s = 0;   // in the DataLoader's next()
  double fetch_s = 0;       // of which the rank's main thread spent on CPU (receiving the batch): paid every step
  double checkpoint_s = 0;  // in torch.save
  double samples_per_step = 0;  // all ranks
  int world_size = 1;
  int loader_workers = 0;   // DataLoader num_workers per rank (0: the loader runs in the rank's process)
  // CPU seconds per step over the measured window: the whole process tree, and the ranks' own
  // processes (torch's threads included); the difference is the DataLoader workers'.
  double tree_cpu_s = 0;
  double ranks_cpu_s = 0;
  double cores_available = 0;  // the cores the job had on its node (cpuset and CPU quota)
  std::string gpu_model;       // the GPU the job ran on; empty without one
  double all_reduce_bytes_per_step = 0;
  // The most memory the whole process tree held over the measured steps, apart from the page cache
  // (proportional anonymous and shared-memory sizes); 0: not read. On another node it is not there
  // for the page cache.
  double resident_bytes = 0;
  double loader_cpu_s() const;  // the workers' CPU per step (in the rank when it has no workers)
};

nlohmann::json to_json(const JobMeasured& measured);
// Throws UsageError naming `source` and the field when the block is missing or a number is out of range.
JobMeasured job_measured_from_json(const nlohmann::json& block, const std::string& source);

}  // namespace nodeaudit::score
