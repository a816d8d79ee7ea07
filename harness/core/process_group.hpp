// A child command run in a process group of its own, with its output in a file, that ends within a
// stated bound: past the timeout, on a stop request or when a watcher gives a reason, the whole
// group (the command and everything it started: mpirun's daemons, a DataLoader's workers) gets
// SIGTERM, then SIGKILL 3 s later. Used to launch MPI jobs (comm/) and the framework loader's
// Python side (host.dataloader).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace nodeaudit {

struct GroupEnd {
  bool started = false;
  bool timed_out = false;
  bool interrupted = false;
  int exit_code = -1;  // when it exited
  int signal = 0;      // when it was killed by a signal
  std::string start_error;
  std::string stopped_because;  // why `watch` had the group stopped
};

// Polled while the command runs (every 50 ms): a reason to stop it now, or nullopt.
using GroupWatch = std::function<std::optional<std::string>()>;

// Runs `args` (args[0] looked up on PATH) with stdin from /dev/null and stdout + stderr into
// `log_path` (created 0600, truncated), and waits for it as above.
GroupEnd run_in_own_group(const std::vector<std::string>& args, const std::string& log_path, double timeout_s,
                          const std::function<bool()>& should_stop, const GroupWatch& watch = {});

}  // namespace nodeaudit
