// Runs the user's training command as it is, in a process group of its own and in the process tree
// the guard holds (a cgroup, core/held_tree.hpp), with learn's module first on PYTHONPATH, its
// output passed through, and the CPU and storage reads of its process tree sampled (the watch
// sampler's process reader), with each GPU's utilization and memory in use (NVML, loaded at run
// time as `watch` does) until the job ends. Ends within a stated bound:
// - the ranks end themselves after their last step (the module raises SystemExit, so the job's own
//   `finally` and atexit code run); a job still running `grace_s` after every rank wrote its last
//   record is ended by end_tree: SIGINT to its group (as Ctrl-C), SIGTERM to every process of the
//   tree `waits.after_sigint_s` later, SIGKILL `waits.after_sigterm_s` after that;
// - past `timeout_s`, or on Ctrl-C (or a hang-up) of learn, the tree is ended the same way at once;
// - when the command's own process exits, what it left in the tree (orphaned workers, ranks in
//   sessions of their own) is ended the same way;
// - when learn itself is killed, the guard's guardian process ends it the same way.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/held_tree.hpp"
#include "harness/learn/rank_records.hpp"

namespace nodeaudit::learn {

struct JobSpec {
  std::vector<std::string> command;
  std::map<std::string, std::string> env;  // set on top of nodeaudit's own environment
  std::string module_dir;   // first on the job's PYTHONPATH
  std::string records_dir;
  int window_steps = 0;        // warm-up + measured + counted: the step after which the ranks end
  int warmup_steps = 0;
  int measured_steps = 0;
  double timeout_s = 600;
  double grace_s = 10;       // after the last step, for the job to end by itself
  TreeEndWaits waits;        // how end_tree waits after SIGINT and after SIGTERM
};

// One GPU's NVML reading at a sample. `job_context`: the job's processes hold a compute context on
// it (nvmlDeviceGetComputeRunningProcesses); unset when the driver does not list processes.
struct GpuSample {
  int index = 0;
  std::optional<double> util_pct, mem_used_bytes;
  std::optional<bool> job_context;
};

struct ProcessSample {
  double t_s = 0;  // since the start of the job
  double cpu_cores = 0;
  std::optional<double> read_bytes_per_s, write_bytes_per_s;
  std::size_t processes = 0;
  std::vector<GpuSample> gpus;  // every GPU NVML sees; empty without NVML
  std::optional<double> resident_bytes;  // the tree's memory (watch::tree_resident_bytes)
};

struct JobRun {
  std::string start_error;  // the command could not be started (not found, not executable)
  int exit_code = -1;       // when the command's process exited
  int signal = 0;           // when it was killed by a signal
  std::string ended_by;     // "exited", "grace" (stopped after the ranks were done), "timeout", "interrupted"
  TreeEnd tree_end;         // what ending the tree took (no signal: it had ended by itself)
  std::string held_by;      // how the tree was held (HeldTree::mechanism)
  std::string end_description;  // describe_job_end: how the job ended, in words
  std::string signals_sent;     // describe_tree_end: the signals alone ("SIGINT; gone 0.4 s after ...")
  double wall_s = 0;
  std::vector<std::string> last_lines;
  std::vector<ProcessSample> samples;
  std::string gpu_not_measured;  // why there is no GPU telemetry ("no GPU: ..."); empty when sampled
  // nodeaudit's clock (t_s) when every rank had passed the warm-up and the measured steps.
  std::optional<double> measured_from_s, measured_to_s;
  JobRecords records;
};

class JobGuard;
JobRun run_job(const JobSpec& spec, JobGuard& guard, const std::function<bool()>& should_stop);
// "the job ended by itself", "learn stopped it: SIGINT, then ...": for the result and the terminal.
std::string describe_job_end(const JobRun& run, const JobSpec& spec);

// The job's environment: ours plus `extra`, PYTHONPATH with `module_dir` first (an existing
// PYTHONPATH kept after it).
std::vector<std::string> job_environment(const std::map<std::string, std::string>& extra, const std::string& module_dir);

}  // namespace nodeaudit::learn
