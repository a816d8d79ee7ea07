#include "harness/session/probe_process.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "harness/core/deadline.hpp"
#include "harness/core/owned_dir.hpp"
#include "harness/core/result.hpp"
#include "harness/node/disturbance.hpp"
#include "harness/node/nvml.hpp"
#include "harness/node/telemetry.hpp"

extern char** environ;

namespace nodeaudit {
namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

// The child's result file goes in a scratch directory owned by this process: if this process is
// killed, the child removes it on its way out, or the next run does (owned_dir.hpp).
std::string temp_parent() {
  const char* tmpdir = std::getenv("TMPDIR");
  return tmpdir && *tmpdir ? tmpdir : "/tmp";
}

// Where a probe may have left scratch data of its own: --data-dir, a --path that is a directory,
// and the temporary directory (host.dataloader's scratch).
std::vector<std::string> scratch_places(const std::map<std::string, std::string>& param_texts, const RunSettings& settings) {
  std::vector<std::string> places{temp_parent()};
  if (!settings.data_dir.empty()) places.push_back(settings.data_dir);
  std::error_code ec;
  if (const auto path = param_texts.find("path"); path != param_texts.end() && std::filesystem::is_directory(path->second, ec))
    places.push_back(path->second);
  return places;
}

std::optional<nlohmann::json> read_child_output(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (buffer.str().empty()) return std::nullopt;
  try {
    return nlohmann::json::parse(buffer.str());
  } catch (const nlohmann::json::parse_error&) {
    return std::nullopt;
  }
}

pid_t spawn_child(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group: the parent decides when the child is interrupted, and a kill reaches
  // any helper processes the probe started.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], nullptr, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  return rc == 0 ? pid : -1;
}

struct ChildEnd {
  int wait_status = 0;
  bool timed_out = false;
  bool interrupted = false;
};

ChildEnd supervise(pid_t pid, double deadline_s, double grace_s, const std::atomic<bool>& interrupt,
                   const ProgressFn& progress) {
  ChildEnd end;
  const auto start = clock_type::now();
  std::optional<clock_type::time_point> interrupted_at;
  while (true) {
    const pid_t done = waitpid(pid, &end.wait_status, WNOHANG);
    if (done == pid) return end;
    const double elapsed = seconds_since(start);
    if (progress) progress(elapsed, deadline_s);
    if (interrupt.load() && !interrupted_at) {
      end.interrupted = true;
      interrupted_at = clock_type::now();
      kill(-pid, SIGINT);
    }
    const bool grace_over = interrupted_at && seconds_since(*interrupted_at) > grace_s;
    if (elapsed > deadline_s && !end.interrupted) end.timed_out = true;
    if (end.timed_out || grace_over) {
      kill(-pid, SIGKILL);
      waitpid(pid, &end.wait_status, 0);
      return end;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

nlohmann::json entry_without_figures(const std::string& id, Status status, const std::string& reason,
                                     const nlohmann::json& params, double duration_s) {
  return probe_entry({.id = id, .outcome = Outcome{status, reason}, .params = params, .duration_s = duration_s});
}

}  // namespace

nlohmann::json run_probe_in_process(const ProbeSpec& spec, const ParamValues& params, const RunSettings& settings,
                                    const std::atomic<bool>& cancel, double deadline_s,
                                    const ProbeContext::EntryKeeper& keeper) {
  const auto start = clock_type::now();
  const auto deadline = start + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(deadline_s));
  ProbeContext ctx(params, settings, &cancel, deadline);
  // The entry as it stands with this outcome: kept while the probe runs (a peer's death must not
  // lose the figures so far), and made once more when it has ended.
  const auto entry_as_of = [&](const Outcome& outcome) {
    return probe_entry({.id = spec.id,
                        .outcome = outcome,
                        .params = params.to_json(),
                        .duration_s = seconds_since(start),
                        .metrics = ctx.metrics(),
                        .findings = ctx.findings(),
                        .info = ctx.info()});
  };
  if (keeper) ctx.set_partial_keeper(keeper, entry_as_of);
  Outcome outcome;
  if (!spec.body) {
    outcome = Outcome::skipped("not built (" + spec.not_built_reason.value_or("unknown reason") + ")");
  } else {
    try {
      outcome = spec.body(ctx);
    } catch (const std::exception& e) {
      outcome = Outcome::failed(std::string("unexpected error: ") + e.what());
    }
  }
  if (cancel.load() && outcome.status == Status::ok) outcome = Outcome::interrupted();
  nlohmann::json entry = entry_as_of(outcome);
  // The share of the level's work this round measured (the quick level splits it over its rounds).
  if (settings.rounds_sharing_budget > 1) entry["round_work_share"] = 1.0 / settings.rounds_sharing_budget;
  return entry;
}

nlohmann::json run_probe_isolated(const ProbeSpec& spec, const std::map<std::string, std::string>& param_texts,
                                  const IsolationOptions& options, const std::atomic<bool>& interrupt,
                                  const ProgressFn& progress) {
  const ParamValues params = resolve_params(spec.params, param_texts, options.settings.level);
  const double deadline_s = probe_deadline_s(spec, params, options.settings);
  const auto start = clock_type::now();
  if (!spec.body)
    return entry_without_figures(spec.id, Status::skipped, "not built (" + spec.not_built_reason.value_or("?") + ")",
                                 params.to_json(), 0);

  std::string scratch_error;
  const std::string scratch = make_owned_dir(temp_parent(), "nodeaudit-probe", scratch_error);
  if (scratch.empty())
    return entry_without_figures(spec.id, Status::failed, "could not start the probe process: " + scratch_error, params.to_json(), 0);
  const std::string out_path = scratch + "/entry.json";
  std::vector<std::string> args = {options.self_exe, "probe", spec.id, "--child-out", out_path,
                                   "--settings", options.settings.to_json().dump(),
                                   "--deadline-s", fmt::format("{}", deadline_s)};
  for (const auto& [name, text] : param_texts) {
    args.push_back("--" + name);
    args.push_back(text);
  }
  TelemetrySampler sampler(options.nvml, options.telemetry_interval_s);
  sampler.start();
  const HostLoadReading load_before = read_host_load();
  struct timespec spawned_at {};
  clock_gettime(CLOCK_REALTIME, &spawned_at);
  const pid_t pid = spawn_child(args);
  if (pid > 0) sampler.set_own_process_group(pid);
  ChildEnd end;
  if (pid > 0) end = supervise(pid, deadline_s, options.kill_grace_s, interrupt, progress);
  const HostLoadReading load_after = read_host_load();
  sampler.stop();
  const double duration_s = seconds_since(start);

  nlohmann::json entry;
  auto output = read_child_output(out_path);
  std::error_code ec;
  std::filesystem::remove_all(scratch, ec);
  // A child that died by a signal or was killed at its deadline could not remove its data: its
  // scratch directories name it as owner, and it is gone now.
  std::vector<std::string> removed;
  if (pid > 0)
    for (const auto& place : scratch_places(param_texts, options.settings)) {
      for (auto& dir : remove_abandoned_dirs(place)) removed.push_back(std::move(dir));
      // Killed between making a data directory and finishing its marker (the storage places only:
      // the temporary directory is shared with everything else on the machine).
      if (WIFSIGNALED(end.wait_status) && place != temp_parent())
        for (auto& dir : remove_unfinished_dirs(place, spawned_at)) removed.push_back(std::move(dir));
    }
  if (pid <= 0) {
    entry = entry_without_figures(spec.id, Status::failed, "could not start the probe process: " + std::string(std::strerror(errno)),
                                  params.to_json(), duration_s);
  } else if (end.timed_out) {
    entry = entry_without_figures(spec.id, Status::timeout,
                                  fmt::format("timeout: still running after the {:.0f} s deadline; killed", deadline_s),
                                  params.to_json(), duration_s);
  } else if (output) {
    entry = std::move(*output);
    if (end.interrupted) {
      entry["status"] = "interrupted";
      entry["reason"] = "interrupted by signal";
    }
  } else if (end.interrupted) {
    entry = entry_without_figures(spec.id, Status::interrupted, "interrupted by signal before any figure was saved",
                                  params.to_json(), duration_s);
  } else if (WIFSIGNALED(end.wait_status)) {
    entry = entry_without_figures(spec.id, Status::crashed, fmt::format("crashed (signal {}: {})", WTERMSIG(end.wait_status), strsignal(WTERMSIG(end.wait_status))),
                                  params.to_json(), duration_s);
  } else {
    entry = entry_without_figures(spec.id, Status::crashed,
                                  fmt::format("crashed (exited with code {} without a result)", WEXITSTATUS(end.wait_status)),
                                  params.to_json(), duration_s);
  }
  entry["duration_s"] = duration_s;
  if (!removed.empty()) {
    if (!entry.contains("info") || !entry["info"].is_object()) entry["info"] = nlohmann::json::object();
    entry["info"]["removed_after_end"] = removed;
  }
  const auto rows = sampler.rows();
  const std::string note = options.nvml && !options.nvml->available() ? "no GPU telemetry: " + options.nvml->why_unavailable() : "";
  entry["telemetry"] = summarize_telemetry(rows, options.telemetry_interval_s, note);
  // A skip decided at start-up measured nothing that foreign load could have moved.
  if (pid > 0 && entry.value("status", "") != "skipped") {
    entry["disturbance"] = judge_disturbance(load_before, load_after, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)),
                                             sampler.foreign_gpu_processes());
    entry["disturbed"] = entry["disturbance"]["disturbed"];
  }
  if (!options.telemetry_csv.empty()) append_telemetry_csv(options.telemetry_csv, spec.id, rows);
  return entry;
}

namespace {
// Set by the parent-death signal. A signal handler can only reach a flag of its own; getppid() alone
// is not enough, as the probe may finish before the kernel has handed it to its new parent.
std::atomic<bool> parent_died{false};
// The parent as die_with_parent found it: its scratch directory's marker may be gone by the time the
// probe ends (another nodeaudit swept the directory of a killed `run`).
std::atomic<long long> parent_at_start{0};
extern "C" void on_parent_death(int) {
  parent_died.store(true);
  kill(getpid(), SIGTERM);  // the cancel flag the probe polls: it stops, removes its data and returns
}
}  // namespace

void die_with_parent(const std::string& child_out, double grace_s) {
  const std::string dir = std::filesystem::path(child_out).parent_path().string();
  const std::optional<long long> parent = owner_pid(dir);
  if (!parent) return;
  parent_at_start.store(*parent);
  struct sigaction sa {};
  sa.sa_handler = on_parent_death;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR2, &sa, nullptr);
  prctl(PR_SET_PDEATHSIG, SIGUSR2);
  if (getppid() != *parent) kill(getpid(), SIGUSR2);  // gone before the line above took effect
  // The bound: a probe that does not return within the grace (a hung call, or a removal of many
  // files on a loaded machine) ends anyway, after this thread has removed the data it made: the
  // removal goes on past the grace for as long as it takes.
  std::thread([dir, parent = *parent, grace_s] {
    while (getppid() == parent && !parent_died.load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::this_thread::sleep_for(std::chrono::duration<double>(grace_s));
    remove_dirs_made_here();
    remove_if_owned_by(dir, parent);
    _exit(1);
  }).detach();
}

void write_child_entry(const std::string& child_out, const std::string& text) {
  const std::string dir = std::filesystem::path(child_out).parent_path().string();
  const long long parent = owner_pid(dir).value_or(parent_at_start.load());
  if (parent > 0 && (parent_died.load() || getppid() != parent)) {
    remove_if_owned_by(dir, parent);  // no one will read it
    remove_dirs_made_here();  // what the probe's own removal left (or the reaper thread is removing)
    return;
  }
  write_file_atomic(child_out, text, false);
}

}  // namespace nodeaudit
