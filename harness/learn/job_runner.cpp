#include "harness/learn/job_runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "harness/learn/job_output.hpp"
#include "harness/node/nvml.hpp"
#include "harness/watch/process_stats.hpp"

extern char** environ;

namespace nodeaudit::learn {

namespace {

constexpr double sample_every_s = 0.5;
constexpr double records_every_s = 0.2;
constexpr double kill_wait_s = 3;

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct Spawned {
  pid_t pid = -1;
  int out = -1, err = -1;
};

Spawned spawn_job(const JobSpec& spec, std::string& error) {
  int out[2], err[2];
  if (pipe(out) != 0 || pipe(err) != 0) {
    error = std::string("cannot make pipes for the job's output: ") + std::strerror(errno);
    return {};
  }
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&files, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&files, err[1], STDERR_FILENO);
  for (int fd : {out[0], out[1], err[0], err[1]}) posix_spawn_file_actions_addclose(&files, fd);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<char*> argv;
  for (const auto& a : spec.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::vector<std::string> env_text = job_environment(spec.env, spec.module_dir);
  std::vector<char*> envp;
  for (const auto& e : env_text) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv[0], &files, &attr, argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&files);
  close(out[1]);
  close(err[1]);
  if (rc != 0) {
    error = fmt::format("cannot start '{}': {}", spec.command.front(), std::strerror(rc));
    close(out[0]);
    close(err[0]);
    return {};
  }
  return {pid, out[0], err[0]};
}

// SIGTERM to the group, SIGKILL to whatever is left after kill_wait_s; reaps `pid` if it is still ours.
void end_group(pid_t pid, bool reaped, int& wait_status) {
  if (kill(-pid, SIGTERM) != 0) return;  // nobody left in the group
  const auto start = Clock::now();
  while (since(start) < kill_wait_s) {
    if (!reaped && waitpid(pid, &wait_status, WNOHANG) == pid) reaped = true;
    if (reaped && kill(-pid, 0) != 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(-pid, SIGKILL);
  if (!reaped) waitpid(pid, &wait_status, 0);
}

// Every GPU's utilization and memory in use, and whether the job's processes run on it.
std::vector<GpuSample> read_gpus(const Nvml& nvml, const std::map<int, watch::ProcessCounters>& tree) {
  std::vector<GpuSample> out;
  if (!nvml.available()) return out;
  for (int i = 0; i < nvml.device_count(); ++i) {
    const NvmlReading r = nvml.read(i);
    GpuSample g{i, r.util_pct, r.mem_used_bytes, std::nullopt};
    if (const auto procs = nvml.compute_processes(i)) {
      g.job_context = false;
      for (const auto& p : *procs)
        if (tree.count(static_cast<int>(p.pid))) g.job_context = true;
    }
    out.push_back(g);
  }
  return out;
}

class Sampler {
 public:
  Sampler(pid_t pid, const Nvml& nvml) : pid_(pid), ticks_per_s_(static_cast<double>(sysconf(_SC_CLK_TCK))), nvml_(nvml) {}
  void sample(double t_s, std::vector<ProcessSample>& out) {
    auto tree = watch::read_process_tree(pid_);
    if (!tree.empty() && primed_) {
      const auto rates = watch::process_rates(previous_, tree, t_s - previous_t_s_, ticks_per_s_);
      out.push_back({t_s, rates.cpu_pct / 100.0, rates.read_bytes_per_s, rates.write_bytes_per_s, rates.processes, read_gpus(nvml_, tree)});
    }
    if (!tree.empty()) previous_ = std::move(tree), previous_t_s_ = t_s, primed_ = true;
  }

 private:
  pid_t pid_;
  double ticks_per_s_;
  bool primed_ = false;
  double previous_t_s_ = 0;
  std::map<int, watch::ProcessCounters> previous_;
  const Nvml& nvml_;
};

}  // namespace

std::vector<std::string> job_environment(const std::map<std::string, std::string>& extra, const std::string& module_dir) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string key = entry.substr(0, entry.find('='));
    if (key == "PYTHONPATH" || extra.count(key)) continue;
    env.push_back(entry);
  }
  for (const auto& [key, value] : extra) env.push_back(key + "=" + value);
  const char* python_path = std::getenv("PYTHONPATH");
  env.push_back("PYTHONPATH=" + module_dir + (python_path && *python_path ? std::string(":") + python_path : ""));
  return env;
}

JobRun run_job(const JobSpec& spec, const std::function<bool()>& should_stop) {
  JobRun run;
  const Spawned job = spawn_job(spec, run.start_error);
  if (job.pid < 0) return run;
  OutputPump output(job.out, job.err);
  const Nvml nvml;
  if (!nvml.available()) run.gpu_not_measured = "no GPU: " + nvml.why_unavailable();
  else if (nvml.device_count() == 0) run.gpu_not_measured = "no GPU: NVML sees no device";
  Sampler sampler(job.pid, nvml);
  const auto start = Clock::now();
  double next_sample_s = 0, next_records_s = 0;
  std::optional<double> all_done_s;
  int wait_status = 0;
  bool reaped = false;
  while (true) {
    output.pump(50);
    const double t = since(start);
    if (t >= next_sample_s) sampler.sample(t, run.samples), next_sample_s = t + sample_every_s;
    if (t >= next_records_s) {
      next_records_s = t + records_every_s;
      run.records = read_job_records(spec.records_dir);
      const int steps = run.records.steps_done();
      if (!run.measured_from_s && steps >= spec.warmup_steps && steps > 0) run.measured_from_s = t;
      if (!run.measured_to_s && steps >= spec.warmup_steps + spec.measured_steps && steps > 0) run.measured_to_s = t;
      if (!all_done_s && run.records.ranks_done() > 0 && run.records.ranks_done() >= run.records.world_size()) all_done_s = t;
    }
    if (waitpid(job.pid, &wait_status, WNOHANG) == job.pid) {
      reaped = true;
      run.ended_by = "exited";
      break;
    }
    if (t > spec.timeout_s) run.ended_by = "timeout";
    else if (should_stop && should_stop()) run.ended_by = "interrupted";
    else if (all_done_s && t - *all_done_s > spec.grace_s) run.ended_by = "grace";
    if (!run.ended_by.empty()) break;
  }
  end_group(job.pid, reaped, wait_status);  // the job, or what it left behind
  // The pipes close when the group is gone; a process that left the group (setsid) may hold them:
  // its output is not waited for past 2 s.
  const auto drain_start = Clock::now();
  while (output.pump(100) && since(drain_start) < 2) {
  }
  run.wall_s = since(start);
  if (WIFEXITED(wait_status)) run.exit_code = WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) run.signal = WTERMSIG(wait_status);
  run.records = read_job_records(spec.records_dir);
  run.last_lines = output.last_lines(12);
  return run;
}

}  // namespace nodeaudit::learn
