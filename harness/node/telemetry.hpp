// Telemetry sampled alongside every probe: host CPU busy, memory used, per-disk throughput, and per
// GPU (when NVML loads) utilization, memory, power, temperature, clocks, throttle reasons, ECC.
// The sampler runs in the parent process, so a probe's crash does not lose it.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <sys/types.h>

#include <nlohmann/json.hpp>

#include "harness/node/disturbance.hpp"

namespace nodeaudit {

class Nvml;
struct NvmlReading;

// One row of the series: time since start and a value per column ("cpu_busy_pct",
// "disk.nvme0n1.read_bytes_per_s", "gpu0.power_w").
struct TelemetryRow {
  double t_s = 0;
  std::map<std::string, double> values;
};

// Puts one GPU's NVML reading into `row` as gpu<index>.<name> columns (util_pct, mem_used_bytes,
// power_w, temp_c, sm_clock_mhz, mem_clock_mhz, pcie_rx/tx_bytes_per_s (when read), throttle_mask,
// ecc_volatile_uncorrected); readings the driver did not give are left out.
void append_gpu_reading(TelemetryRow& row, int index, const NvmlReading& reading);

class TelemetrySampler {
 public:
  TelemetrySampler(const Nvml* nvml, double interval_s);
  ~TelemetrySampler();
  TelemetrySampler(const TelemetrySampler&) = delete;
  TelemetrySampler& operator=(const TelemetrySampler&) = delete;

  void start();
  void stop();  // idempotent
  std::vector<TelemetryRow> rows() const;

  // The probe's process group (its child is a group leader): GPU contexts of processes in it, or of
  // this process, are the probe's own; any other seen while sampling is foreign.
  void set_own_process_group(pid_t pgid) { own_pgid_.store(pgid); }
  // Processes NVML listed on a GPU that were neither; a process in another PID namespace (no
  // /proc/PID here) cannot be attributed and is left out.
  std::vector<ForeignGpuProcess> foreign_gpu_processes() const;

 private:
  void loop();
  TelemetryRow sample_once();
  void note_gpu_processes(int gpu);

  const Nvml* nvml_;
  double interval_s_;
  std::atomic<bool> running_{false};
  std::thread thread_;
  mutable std::mutex mutex_;
  std::vector<TelemetryRow> rows_;
  std::vector<unsigned long long> throttle_seen_;
  std::atomic<pid_t> own_pgid_{0};
  std::map<std::pair<unsigned, int>, ForeignGpuProcess> foreign_gpu_;  // (pid, gpu) -> what was seen
  // Previous counters, for rates.
  std::optional<std::map<std::string, unsigned long long>> prev_counters_;
  double prev_t_s_ = 0;
};

// Min/median/max of each column, shaped as results/SCHEMA.md's `telemetry` block.
nlohmann::json summarize_telemetry(const std::vector<TelemetryRow>& rows, double interval_s, const std::string& note);

// Appends rows to a CSV file (header written when the file is new), tagged with the probe id.
void append_telemetry_csv(const std::string& path, const std::string& probe_id, const std::vector<TelemetryRow>& rows);

}  // namespace nodeaudit
