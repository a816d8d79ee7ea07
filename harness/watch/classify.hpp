// The watch diagnosis: telemetry series in, findings out. Pure: no I/O, no clock, so it is tested on
// recorded series. Each finding carries its evidence (time shares, period, correlated figures) and
// the recommended action. The rules and their thresholds (the seeds' numbers):
//   utilization   mean and stability against the 70% line (< 50%: not compute-bound)
//   sawtooth      periodic drops to near zero -> data loader behind (sawtooth.hpp)
//   memory_full_idle  memory >= 90% used while utilization < 50% -> batch size / accumulation / split
//   input_starved low utilization at low power, correlated with CPU, one core, iowait or a NIC
//   communication_bound  PCIe or NIC busy (>= 50% of link) while SMs idle or power is low
//   oversized     node mean utilization < 30% and memory < 50% (the seed judges this over days)
//   throttled     clock-event reasons other than idle for >= 10% of samples
// Pitfall: NVML "utilization" is the share of time a kernel was running, not SM occupancy; NCCL
// kernels that spin on the network count as busy, which is why low power is checked too.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/metric.hpp"
#include "harness/watch/sawtooth.hpp"
#include "harness/watch/series.hpp"

namespace nodeaudit::watch {

struct Thresholds {
  double healthy_util_pct = 70;
  double not_compute_bound_pct = 50;
  double healthy_time_share = 0.8;   // share of samples at or above the 70% line for "stable"
  double memory_full_share = 0.9;
  double low_power_share = 0.5;      // of the power limit (or the peak seen)
  double starved_min_share = 0.25;   // with a correlated cause
  double starved_alone_share = 0.5;  // without one
  double cpu_saturated_pct = 90;
  double core_saturated_pct = 95;
  double iowait_high_pct = 20;
  double link_busy_share = 0.5;
  double comm_min_share = 0.2;
  double oversized_util_pct = 30;
  double oversized_memory_share = 0.5;
  double idle_util_pct = 5;
  double throttle_min_share = 0.1;
  std::size_t min_samples = 10;
  DropThresholds drops;
};

struct WatchFinding {
  Severity severity = Severity::info;
  std::string code;      // "watch.sawtooth"
  int gpu = -1;          // -1: the node or host
  std::string headline;  // one sentence with the figures
  std::string action;    // the seeds' recommendation; empty for plain facts
  nlohmann::json evidence = nlohmann::json::object();
};

struct Diagnosis {
  std::vector<WatchFinding> findings;
  std::vector<Metric> metrics;
  std::string summary;  // one paragraph
};

Diagnosis diagnose(const WatchSeries& series, const Thresholds& thresholds = {});

// As the result's findings[]: message = headline + " Action: " + action.
Finding to_finding(const WatchFinding& finding);
bool has_code(const Diagnosis& diagnosis, const std::string& code, int gpu = -2);  // -2: any GPU or node
const WatchFinding* find_code(const Diagnosis& diagnosis, const std::string& code, int gpu = -2);

// Parts used by diagnose(), in classify_host.cpp.
void diagnose_host(const WatchSeries& series, const Thresholds& th, Diagnosis& out);
void add_host_metrics(const WatchSeries& series, std::vector<Metric>& metrics);
// Why GPUs may be starved at sample i: the host resources saturated then ("cpu", "core", "disk", "network").
struct HostPressure {
  double cpu_busy_pct = 0, busiest_core_pct = 0, iowait_pct = 0, busiest_nic_share = 0;
  std::string busiest_nic;
  std::size_t samples = 0;
};
HostPressure host_pressure(const WatchSeries& series, const std::vector<std::size_t>& samples);
// The busiest NIC's load at sample i as a share of its link speed (0 when no speed is known).
double nic_load_at(const WatchSeries& series, std::size_t i, std::string* nic);

}  // namespace nodeaudit::watch
