#include "harness/learn/job_runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "harness/learn/job_guard.hpp"
#include "harness/learn/job_output.hpp"
#include "harness/node/nvml.hpp"
#include "harness/watch/process_stats.hpp"

extern char** environ;

namespace nodeaudit::learn {

namespace {

constexpr double sample_every_s = 0.5;
constexpr double records_every_s = 0.2;

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct Spawned {
  pid_t pid = -1;
  int out = -1, err = -1;
};

// The command's path as execvp would find it, looked up before the fork (no allocation after it).
std::string find_on_path(const std::string& command) {
  if (command.find('/') != std::string::npos) return command;
  const char* path = std::getenv("PATH");
  const std::string dirs = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  for (std::size_t start = 0; start <= dirs.size();) {
    const std::size_t colon = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, colon - start);
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + command;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = colon + 1;
  }
  return "";
}

// Between fork and exec (async-signal-safe calls only): into the held tree, a process group of
// its own, stdin from /dev/null, stdout and stderr into the pipes; on failure errno goes to `status`.
[[noreturn]] void exec_job_child(const HeldTree& tree, const char* file, char* const* argv, char* const* envp, int out, int err, int status) {
  tree.join_in_forked_child();
  setpgid(0, 0);
  const int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd >= 0 && dup2(null_fd, STDIN_FILENO) >= 0 && dup2(out, STDOUT_FILENO) >= 0 && dup2(err, STDERR_FILENO) >= 0) execve(file, argv, envp);
  const int e = errno;
  if (write(status, &e, sizeof e) < 0) _exit(127);
  _exit(127);
}

Spawned spawn_job(const JobSpec& spec, const HeldTree& tree, std::string& error) {
  int out[2], err[2], status[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 || pipe2(status, O_CLOEXEC) != 0) {
    error = std::string("cannot make pipes for the job's output: ") + std::strerror(errno);
    return {};
  }
  const std::string file = find_on_path(spec.command.front());
  std::vector<char*> argv;
  for (const auto& a : spec.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::vector<std::string> env_text = job_environment(spec.env, spec.module_dir);
  std::vector<char*> envp;
  for (const auto& e : env_text) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t pid = file.empty() ? -1 : fork();
  if (pid == 0) exec_job_child(tree, file.c_str(), argv.data(), envp.data(), out[1], err[1], status[1]);
  int exec_errno = file.empty() ? ENOENT : pid < 0 ? errno : 0;
  close(out[1]);
  close(err[1]);
  close(status[1]);
  // The status pipe closes at exec (O_CLOEXEC): nothing read means the command runs.
  if (pid > 0 && read(status[0], &exec_errno, sizeof exec_errno) == static_cast<ssize_t>(sizeof exec_errno)) waitpid(pid, nullptr, 0);
  close(status[0]);
  if (exec_errno != 0) {
    error = fmt::format("cannot start '{}': {}", spec.command.front(), std::strerror(exec_errno));
    close(out[0]);
    close(err[0]);
    return {};
  }
  return {pid, out[0], err[0]};
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
      out.push_back({t_s, rates.cpu_pct / 100.0, rates.read_bytes_per_s, rates.write_bytes_per_s, rates.processes, read_gpus(nvml_, tree),
                     watch::tree_resident_bytes(tree)});
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

// Without a cgroup, learn is the subreaper of the job's orphans: they are collected here (never the
// job's own process, whose status run_job reads itself).
static void reap_orphans(pid_t job) {
  siginfo_t info{};
  while (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid > 0 && info.si_pid != job) {
    waitpid(info.si_pid, nullptr, 0);
    info = {};
  }
}

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

JobRun run_job(const JobSpec& spec, JobGuard& guard, const std::function<bool()>& should_stop) {
  JobRun run;
  run.held_by = guard.tree().mechanism();
  const Spawned job = spawn_job(spec, guard.tree(), run.start_error);
  if (job.pid < 0) return run;
  guard.job_started(job.pid);
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
  // The job, or what it left behind (workers, ranks in sessions of their own).
  run.tree_end = end_tree(guard.tree(), job.pid, spec.waits, [&] {
    if (!reaped && waitpid(job.pid, &wait_status, WNOHANG) == job.pid) reaped = true;
    reap_orphans(job.pid);
  });
  if (!reaped) waitpid(job.pid, &wait_status, 0);
  guard.release();  // ended here: the guardian has nothing left to do
  // The tree is gone, so are the writers of the pipes; what they wrote last is drained (2 s at most).
  const auto drain_start = Clock::now();
  while (output.pump(100) && since(drain_start) < 2) {
  }
  run.wall_s = since(start);
  if (WIFEXITED(wait_status)) run.exit_code = WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) run.signal = WTERMSIG(wait_status);
  run.records = read_job_records(spec.records_dir);
  run.last_lines = output.last_lines(12);
  run.end_description = describe_job_end(run, spec);
  run.signals_sent = describe_tree_end(run.tree_end, spec.waits);
  return run;
}

}  // namespace nodeaudit::learn

namespace nodeaudit::learn {

std::string describe_job_end(const JobRun& run, const JobSpec& spec) {
  const std::string how = describe_tree_end(run.tree_end, spec.waits);
  if (run.ended_by == "exited")
    return run.tree_end.signals.empty() ? "the job ended by itself" : "the job's command ended; the processes it left were ended: " + how;
  if (run.ended_by == "grace") return fmt::format("the job had not ended {:.0f} s after its last step; learn ended it: {}", spec.grace_s, how);
  if (run.ended_by == "timeout") return "past the deadline, learn ended the job: " + how;
  return "interrupted, learn ended the job: " + how;
}

}  // namespace nodeaudit::learn
