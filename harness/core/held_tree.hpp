// A process tree held so that every process in it can be found and ended, including one that left
// its parent's session or process group (torchrun's workers start in sessions of their own) and one
// whose parent died (an orphaned DataLoader worker):
// - a cgroup v1 of its own, where this process may make one (the freezer hierarchy, else pids):
//   the members are its cgroup.procs, and SIGKILL is sent with the group frozen, so nothing forks
//   past it;
// - without one, the processes whose environment holds the tree's marker variable (set for the
//   command, inherited by everything it starts) together with this process's own descendants (it is
//   made a child subreaper, so orphans of the tree are reparented to it rather than to init).
// The staged end (end_tree) is the same for `learn` and for the guardian that outlives a killed
// `learn`: SIGINT to the command's process group, as Ctrl-C in a terminal sends it; then SIGTERM to
// every member; then SIGKILL to every member; each stage only when the tree is not gone yet.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace nodeaudit {

class HeldTree {
 public:
  // Makes a cgroup named `name` (unique: the caller's pid is in it) where possible; otherwise the
  // marker sweep. `env_marker` is "NAME=VALUE", present in the command's environment.
  static HeldTree make(const std::string& name, const std::string& env_marker);
  // The tree another process made, by its cgroup directory (empty: the marker sweep only).
  static HeldTree adopt(const std::string& cgroup_dir, const std::string& env_marker);
  HeldTree(HeldTree&& other) noexcept;
  HeldTree& operator=(HeldTree&&) = delete;
  HeldTree(const HeldTree&) = delete;
  ~HeldTree();  // removes the cgroup when it is empty (never with a member in it)

  const std::string& cgroup_dir() const { return cgroup_dir_; }
  const std::string& env_marker() const { return env_marker_; }
  std::string mechanism() const;  // how the tree is held, in words for the result and the README
  // Moves the calling process into the cgroup; only async-signal-safe calls (used between fork and
  // exec). Returns false when there is no cgroup or the write failed.
  bool join_in_forked_child() const;

  std::vector<pid_t> members() const;  // live members (zombies left out); `except` never listed
  bool empty() const { return members().empty(); }
  void signal_members(int sig) const;
  void kill_all() const;  // frozen, SIGKILL, thawed
  void except(pid_t pid) { except_.push_back(pid); }
  // Removes the cgroup directory once no process is in it; true when there is none left.
  bool remove_cgroup();

 private:
  HeldTree(std::string cgroup_dir, std::string env_marker, int procs_fd);
  std::string cgroup_dir_, env_marker_;
  int procs_fd_ = -1;  // cgroup.procs, opened before any fork
  std::vector<pid_t> except_;
};

// How long each stage of end_tree waits for the tree to be gone.
struct TreeEndWaits {
  double after_sigint_s = 10;
  double after_sigterm_s = 5;
};

// What end_tree did: the signals it sent, in order, and how long the tree took to go.
struct TreeEnd {
  std::vector<std::string> signals;  // "SIGINT", "SIGTERM", "SIGKILL"
  double took_s = 0;
  std::size_t killed = 0;  // processes alive when SIGKILL was sent
};

// The staged end above. `group` is the command's process group (0: none left, SIGINT goes to every
// member); `reap` is called while waiting, so the caller can collect its own children.
TreeEnd end_tree(const HeldTree& tree, pid_t group, const TreeEndWaits& waits, const std::function<void()>& reap);

// "SIGINT, then SIGTERM after 10 s, then SIGKILL after 5 s (2 processes)": what end_tree did.
std::string describe_tree_end(const TreeEnd& end, const TreeEndWaits& waits);

}  // namespace nodeaudit
