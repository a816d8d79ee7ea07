// The telemetry series of one watch: a time axis and named columns of equal length, plus what is
// known about the node that the readings are judged against (GPU memory size, PCIe link, NIC speed).
// Column names follow the sampler used by `run` (harness/node/telemetry.hpp) so its summary applies:
//   cpu_busy_pct, cpu_iowait_pct, cpuN.busy_pct, cpuN.iowait_pct, mem_used_bytes,
//   disk.DEV.read_bytes_per_s, disk.DEV.write_bytes_per_s, net.IF.rx_bytes_per_s, net.IF.tx_bytes_per_s,
//   proc.cpu_pct (percent of one core, the whole process tree), proc.read_bytes_per_s, proc.write_bytes_per_s,
//   gpuN.util_pct, gpuN.mem_used_bytes, gpuN.power_w, gpuN.sm_clock_mhz, gpuN.throttle_mask,
//   gpuN.pcie_rx_bytes_per_s, gpuN.pcie_tx_bytes_per_s.
// A reading missing at one sample is NaN (null in JSON), so columns stay aligned with t_s.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/node/telemetry.hpp"

namespace nodeaudit::watch {

struct GpuFacts {
  int index = 0;
  std::string name;
  std::optional<double> memory_total_bytes;
  std::optional<double> power_limit_w;           // absent: judged against the peak power seen
  std::optional<double> pcie_link_bytes_per_s;   // per direction, from the current generation and width
};

struct WatchSeries {
  double interval_s = 1.0;
  std::vector<double> t_s;
  std::map<std::string, std::vector<double>> columns;
  std::vector<GpuFacts> gpus;     // empty when no GPU was read
  std::string gpu_note;           // why there is no GPU series ("no NVIDIA driver (...)")
  std::map<std::string, double> nic_speed_bytes_per_s;  // interfaces whose link speed is known
  int host_cpus = 0;
  std::optional<int> pid;

  std::size_t size() const { return t_s.size(); }
  // Adds one row; columns first seen now are back-filled with NaN, absent ones get NaN.
  void append(const TelemetryRow& row);
  // The column, or an empty vector when it was never recorded.
  const std::vector<double>& column(const std::string& name) const;
  // Column names starting with `prefix` and ending with `suffix`.
  std::vector<std::string> names_like(const std::string& prefix, const std::string& suffix) const;
  std::vector<TelemetryRow> rows() const;
};

// Value i of a column, NaN past its end (a column first seen late is shorter than the time axis).
double value_at(const std::vector<double>& column, std::size_t i);
// A GPU's column names start with this ("gpu3.").
std::string gpu_column_prefix(const GpuFacts& gpu);

// Finite values only.
std::vector<double> finite(const std::vector<double>& values);
// Mean of the finite values; nullopt when there are none.
std::optional<double> mean_of(const std::vector<double>& values);

// Per-direction PCIe bandwidth of a link: lanes x the generation's per-lane rate after encoding.
std::optional<double> pcie_link_bytes_per_s(std::optional<unsigned> generation, std::optional<unsigned> width);

nlohmann::json series_to_json(const WatchSeries& series);
// Reads a series written by series_to_json (or a recorded fixture). Throws UsageError naming `where`.
WatchSeries series_from_json(const nlohmann::json& doc, const std::string& where);

}  // namespace nodeaudit::watch
