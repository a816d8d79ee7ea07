// The job's process tree and a guardian that outlives `learn`. The guardian is a process of its own
// (this binary, `nodeaudit __learn-guardian`, in a session of its own so a hang-up or Ctrl-C meant
// for `learn` does not reach it) holding the read end of a pipe from `learn`. When `learn` ends by
// any way at all (kill -9 included) the pipe reaches its end: unless `learn` said it had ended the
// job itself, the guardian ends the tree as learn would (end_tree: SIGINT, SIGTERM, SIGKILL, the
// same waits), removes learn's private folder, the cgroup, and the result file learn had claimed
// when it still holds nothing measured, says so on stderr and exits.
#pragma once

#include <sys/types.h>

#include <string>

#include "harness/core/held_tree.hpp"

namespace nodeaudit::learn {

class JobGuard {
 public:
  // `folder`: learn's private folder; `result_path`: the result learn claimed (may be empty).
  JobGuard(const std::string& folder, const std::string& env_marker, const std::string& result_path,
           const TreeEndWaits& waits);
  ~JobGuard();  // closes the pipe: the guardian acts unless release() came first
  JobGuard(const JobGuard&) = delete;
  JobGuard& operator=(const JobGuard&) = delete;
  HeldTree& tree() { return tree_; }
  void job_started(pid_t job);  // the job's process group, for the guardian's SIGINT
  void release();               // learn has ended the tree itself: the guardian only exits

 private:
  HeldTree tree_;
  int pipe_fd_ = -1;
  pid_t guardian_ = -1;
};

// The guardian's side (main.cpp runs it for `__learn-guardian`): returns its exit code.
int run_guardian(int argc, char** argv);

}  // namespace nodeaudit::learn
