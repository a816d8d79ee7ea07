// Steady-state measurement windows over workers that keep their queues full for the whole run,
// as fio does for its runtime: the threads and rings start once, before the first (warm-up)
// window, and are drained once, after the last. A repetition is one window of wall time; its
// work is what completed inside it, so no window contains a thread start, a ramp-up or a drain.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "harness/core/measure.hpp"
#include "io/uring_engine.hpp"

namespace nodeaudit::io {

class SteadyWindows {
 public:
  // Starts one thread per ring, each running units from its source until stop(). Rings and
  // sources must outlive this object.
  SteadyWindows(const std::vector<std::unique_ptr<UringWorker>>& rings, std::vector<UnitSource*> sources);
  ~SteadyWindows();
  SteadyWindows(const SteadyWindows&) = delete;
  SteadyWindows& operator=(const SteadyWindows&) = delete;

  // Waits `window_s` (returning early when `should_stop` says so or a worker failed), then closes
  // the window: the bytes and units completed in it, with elapsed_s its measured wall time.
  Work next_window(double window_s, const std::function<bool()>& should_stop);
  // Process CPU seconds spent during the last closed window.
  double last_window_cpu_s() const { return last_cpu_s_; }
  bool failed() const { return failed_.load(std::memory_order_relaxed); }

  // Stops the workers, drains their queues and joins them (idempotent). Afterwards: the first
  // error, and each window's latencies merged over the workers.
  void stop();
  const std::string& error() const { return error_; }
  LatencyHistogram window_latency(unsigned window) const;

 private:
  std::vector<UnitSource*> sources_;
  std::vector<std::unique_ptr<LoopProgress>> progress_;
  std::vector<LoopResult> results_;
  std::vector<std::jthread> threads_;
  std::atomic<bool> stop_flag_{false}, failed_{false};
  std::atomic<unsigned> window_{0};
  std::uint64_t window_start_ns_ = 0, bytes_before_ = 0, units_before_ = 0;
  double cpu_before_s_ = 0, last_cpu_s_ = 0;
  std::string error_;
};

}  // namespace nodeaudit::io
