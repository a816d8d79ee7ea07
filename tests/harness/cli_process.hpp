// Runs the real nodeaudit binary as a child process and captures what it printed and its exit.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace nodeaudit::proc {

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out, err;
  bool trigger_seen = false;  // whether the Trigger's sign was seen before its action
};

// Something to do to a running child once it has shown it reached the state under test (its stdout
// or stderr holds a string, or a file it writes exists), plus `then_after_s`: by default SIGINT to the
// child. Waiting for a sign rather than a fixed time keeps the tests independent of how fast a loaded
// (sanitizer) build starts. If the sign never comes within `give_up_after_s`, the action is done
// anyway (unless the child has exited) and trigger_seen stays false, so the test can say so.
struct Trigger {
  std::string output_contains;  // in stdout or stderr
  std::string file_exists;
  double then_after_s = 0;
  double give_up_after_s = 120;
  std::function<void(pid_t child)> action;  // empty: SIGINT to the child
};

ProcessResult run_process(const std::vector<std::string>& argv, std::optional<Trigger> trigger = std::nullopt);

// A fresh empty directory under the temp dir, removed by the caller.
std::string make_temp_dir(const std::string& tag);
std::vector<std::string> files_in(const std::string& dir);

}  // namespace nodeaudit::proc
