// The watch sampler: reads host counters (/proc/stat per core, /proc/diskstats, /proc/net/dev,
// /proc/meminfo), the watched process tree, and per GPU the NVML gauges, and turns counters into
// rates between two calls. It only reads: nothing is written to the job's devices, so the job is
// not disturbed beyond a few file reads and NVML queries per interval.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "harness/node/procfs.hpp"
#include "harness/watch/process_stats.hpp"
#include "harness/watch/series.hpp"

namespace nodeaudit {
class Nvml;
}

namespace nodeaudit::watch {

struct SamplerPaths {
  std::string proc = "/proc";
  std::string sys_net = "/sys/class/net";
};

class WatchSampler {
 public:
  WatchSampler(const Nvml* nvml, std::optional<int> pid, SamplerPaths paths = {});

  // What the series is judged against (GPU memory sizes, PCIe links, NIC speeds, CPU count); and
  // why there is no GPU series when there is none.
  void describe(WatchSeries& series) const;
  // Reads every counter. The first call only primes the counters and returns nullopt; later calls
  // return the rates since the previous call, stamped with t_s.
  std::optional<TelemetryRow> sample(double t_s);
  // False once the watched process is gone (always true without --pid).
  bool process_alive() const { return process_alive_; }

 private:
  void add_cpu(TelemetryRow& row, const std::map<std::string, procfs::CpuTimes>& cpu) const;
  void add_counters(TelemetryRow& row, double dt_s) const;
  void add_process(TelemetryRow& row, double dt_s);
  void add_gpus(TelemetryRow& row) const;

  const Nvml* nvml_;
  std::optional<int> pid_;
  SamplerPaths paths_;
  bool primed_ = false;
  bool process_alive_ = true;
  std::chrono::steady_clock::time_point prev_time_;
  std::map<std::string, procfs::CpuTimes> prev_cpu_;
  std::map<std::string, procfs::DiskCounters> prev_disk_, disk_;
  std::map<std::string, procfs::NetCounters> prev_net_, net_;
  std::map<int, ProcessCounters> prev_tree_;
};

// Samples every interval_s until duration_s has passed, `stop` is set, or the watched process
// exits; calls on_row after each row. Returns why it ended: "duration", "interrupted", "process exited".
std::string collect(WatchSampler& sampler, WatchSeries& series, double duration_s, const std::atomic<bool>& stop,
                    const std::function<void(const WatchSeries&)>& on_row);

}  // namespace nodeaudit::watch
