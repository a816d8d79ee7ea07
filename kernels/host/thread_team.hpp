// A fixed team of worker threads, each pinned to one CPU of this process's affinity mask, that run
// the same step together. Used by host probes that time work across all cores at once.
#pragma once

#include <barrier>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace nodeaudit::host {

// CPUs this process may run on (sched_getaffinity), in order.
std::vector<int> allowed_cpus();

class ThreadTeam {
 public:
  // `threads` workers; worker i is pinned to allowed_cpus()[i % n]. Pinning failures are kept in
  // pin_errors() (reported as a finding, not fatal).
  explicit ThreadTeam(int threads);
  ~ThreadTeam();
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  int size() const { return static_cast<int>(workers_.size()); }
  // Runs step(worker_index) on every worker and returns when all are done.
  void run(const std::function<void(int)>& step);
  const std::vector<std::string>& pin_errors() const { return pin_errors_; }

 private:
  void worker_loop(int index, int cpu);

  std::vector<std::thread> workers_;
  std::barrier<> start_, done_;
  const std::function<void(int)>* step_ = nullptr;
  bool stopping_ = false;
  std::vector<std::string> pin_errors_;
};

}  // namespace nodeaudit::host
