// `nodeaudit watch` as the user typed it, and the one call that runs it: sample a running training
// job's telemetry (GPUs through NVML, host CPUs per core, disks, NICs, and the job's process tree with
// --pid) without disturbing it, then diagnose its idle time into a result document (results/SCHEMA.md,
// "watch"), kept through the session's result writer. The result is rewritten every minute, so a
// killed watch keeps what it saw; Ctrl-C ends the watch early, writes the diagnosis of what was
// collected and exits 130 (interrupted), as `run` does. harness/cli/cmd_watch.cpp declares the options.
#pragma once

#include <string>
#include <vector>

namespace nodeaudit::watch {

struct WatchRequest {
  std::string duration = "30m";
  std::string interval = "1s";
  bool interval_given = false;
  std::string pid;
  bool all = false;
  std::string out;
  std::vector<std::string> argv;
};

// Returns the process's exit code; throws UsageError on bad input.
int watch_session(const WatchRequest& request);

}  // namespace nodeaudit::watch
