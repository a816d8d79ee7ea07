// The one way the tests start a process: the real nodeaudit binary (or any program) as a child,
// its stdout and stderr captured through files, its exit code, and optionally something done to it
// once it has reached the state under test. No shell in between: arguments reach the child as given.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
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

// How the child starts, beyond its arguments.
struct ChildSetup {
  std::vector<std::pair<std::string, std::string>> environment;  // set in the child on top of ours
  bool stderr_into_stdout = false;  // one stream in the order written, as `2>&1` gives (all in `out`)
  // A file-size limit (RLIMIT_FSIZE) with SIGXFSZ ignored, so an over-long write fails with EFBIG
  // instead of killing the child: the full-disk path without filling a disk.
  std::optional<unsigned long long> file_size_limit_bytes;
  std::string stdin_path;  // what the child reads; empty: /dev/null
};

// argv[0] is looked up on PATH when it has no '/' (as a shell would).
ProcessResult run_process(const std::vector<std::string>& argv, std::optional<Trigger> trigger = std::nullopt);
ProcessResult run_process(const std::vector<std::string>& argv, const ChildSetup& setup,
                          std::optional<Trigger> trigger = std::nullopt);

// A fresh empty directory under the temp dir, removed by the caller.
std::string make_temp_dir(const std::string& tag);
std::vector<std::string> files_in(const std::string& dir);

}  // namespace nodeaudit::proc
