// GPU rules that need the host series beside the GPU's own: starvation at low power (CPU, core,
// disk, NIC), communication-bound signs (PCIe / NIC busy while the GPU idles), clock throttling.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/node/nvml.hpp"
#include "harness/watch/classify.hpp"

namespace nodeaudit::watch {
namespace detail {
std::optional<double> gpu_memory_share(const WatchSeries& s, const GpuFacts& g);
std::pair<std::optional<double>, std::string> gpu_power_reference(const WatchSeries& s, const GpuFacts& g);
}  // namespace detail

namespace {


std::size_t finite_count(const std::vector<double>& v) {
  return static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [](double x) { return std::isfinite(x); }));
}

// Low utilization, or low power when the power is known: the GPU is not doing the job's work.
struct IdleTest {
  const std::vector<double>& util;
  const std::vector<double>& power;
  std::optional<double> power_ref;
  const Thresholds& th;
  bool low_util(std::size_t i) const { return util[i] < th.not_compute_bound_pct; }
  bool low_power(std::size_t i) const {
    const double p = value_at(power, i);
    return !power_ref || !std::isfinite(p) || p < th.low_power_share * *power_ref;
  }
};

std::string starvation_causes(const HostPressure& hp, const Thresholds& th, nlohmann::json& evidence, std::string& action) {
  std::vector<std::string> causes, actions;
  if (hp.cpu_busy_pct >= th.cpu_saturated_pct) {
    causes.push_back(fmt::format("the host CPUs were {:.0f}% busy (CPU preprocessing)", hp.cpu_busy_pct));
    actions.push_back("give the loader more cores or move decode/augmentation to the GPU (DALI) or offline");
  } else if (hp.busiest_core_pct >= th.core_saturated_pct) {
    causes.push_back(fmt::format("one CPU core was {:.0f}% busy (a single-threaded loader or the Python GIL)", hp.busiest_core_pct));
    actions.push_back("use more DataLoader worker processes so preprocessing leaves the main thread");
  }
  if (hp.iowait_pct >= th.iowait_high_pct) {
    causes.push_back(fmt::format("the CPUs waited on I/O {:.0f}% of the time (disk)", hp.iowait_pct));
    actions.push_back("read from faster storage or cache the data set on local NVMe / in page cache, with larger reads");
  }
  if (hp.busiest_nic_share >= th.link_busy_share) {
    causes.push_back(fmt::format("{} ran at {:.0f}% of its link (network)", hp.busiest_nic, 100 * hp.busiest_nic_share));
    actions.push_back("stage remote data locally or add network bandwidth");
  }
  evidence["host_cpu_busy_pct"] = hp.cpu_busy_pct;
  evidence["busiest_core_pct"] = hp.busiest_core_pct;
  evidence["iowait_pct"] = hp.iowait_pct;
  if (!hp.busiest_nic.empty()) evidence["busiest_nic"] = {{"name", hp.busiest_nic}, {"link_share_pct", 100 * hp.busiest_nic_share}};
  std::string text;
  for (std::size_t i = 0; i < causes.size(); ++i) text += (i ? "; " : "") + causes[i];
  for (std::size_t i = 0; i < actions.size(); ++i) action += (i ? "; " : "") + actions[i];
  if (!action.empty()) action[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(action[0])));
  if (!action.empty()) action += ".";
  return text;
}

}  // namespace

void judge_input_starvation(const WatchSeries& s, const GpuFacts& g, const Thresholds& th, Diagnosis& out) {
  const auto& util = s.column(gpu_column_prefix(g) + "util_pct");
  const auto values = finite(util);
  if (values.empty() || *std::max_element(values.begin(), values.end()) < th.drops.low_pct) return;  // no job to starve
  const auto [ref, ref_kind] = detail::gpu_power_reference(s, g);
  const IdleTest idle{util, s.column(gpu_column_prefix(g) + "power_w"), ref, th};
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < util.size(); ++i)
    if (std::isfinite(util[i]) && idle.low_util(i) && idle.low_power(i)) idx.push_back(i);
  const double idle_share = static_cast<double>(idx.size()) / static_cast<double>(values.size());
  if (idle_share < th.starved_min_share) return;
  WatchFinding f;
  f.severity = Severity::warn;
  f.gpu = g.index;
  f.code = "watch.input_starved";
  f.evidence = {{"low_power_idle_time_pct", 100 * idle_share}, {"power_reference", ref_kind}};
  if (ref) f.evidence["power_reference_w"] = *ref;
  std::vector<double> idle_power;
  for (auto i : idx)
    if (std::isfinite(value_at(idle.power, i))) idle_power.push_back(idle.power[i]);
  const auto mean_idle_power = mean_of(idle_power);
  if (mean_idle_power) f.evidence["mean_idle_power_w"] = *mean_idle_power;
  const std::string causes = starvation_causes(host_pressure(s, idx), th, f.evidence, f.action);
  // Without a host cause, full memory already explains low utilization better than starvation does.
  if (causes.empty() && (idle_share < th.starved_alone_share || has_code(out, "watch.memory_full_idle", g.index))) return;
  const std::string power_text = mean_idle_power && ref ? fmt::format(" (mean {:.0f} W; {} {:.0f} W)", *mean_idle_power, ref_kind, *ref)
                                                        : " (" + ref_kind + "; judged on utilization)";
  f.headline = fmt::format("GPU {}: idle at low power in {:.0f}% of samples{}; {}.", g.index, 100 * idle_share, power_text,
                           causes.empty() ? "no sampled host resource was saturated then" : "meanwhile " + causes);
  if (f.action.empty())
    f.action = "The wait is outside what was sampled: check remote storage, locks or synchronization between ranks "
               "(profile one step with the framework's profiler).";
  out.findings.push_back(std::move(f));
}

void judge_communication(const WatchSeries& s, const GpuFacts& g, const Thresholds& th, Diagnosis& out) {
  const auto& util = s.column(gpu_column_prefix(g) + "util_pct");
  const auto& rx = s.column(gpu_column_prefix(g) + "pcie_rx_bytes_per_s");
  const auto& tx = s.column(gpu_column_prefix(g) + "pcie_tx_bytes_per_s");
  const auto [ref, ref_kind] = detail::gpu_power_reference(s, g);
  const IdleTest idle{util, s.column(gpu_column_prefix(g) + "power_w"), ref, th};
  std::vector<std::size_t> idx;
  double pcie_sum = 0, nic_sum = 0;
  std::string nic_name;
  for (std::size_t i = 0; i < util.size(); ++i) {
    if (!std::isfinite(util[i]) || !(idle.low_util(i) || (ref && idle.low_power(i)))) continue;
    const double pcie = std::max(std::isfinite(value_at(rx, i)) ? rx[i] : 0.0, std::isfinite(value_at(tx, i)) ? tx[i] : 0.0);
    std::string nic;
    const double nic_share = nic_load_at(s, i, &nic);
    const bool pcie_busy = g.pcie_link_bytes_per_s && pcie >= th.link_busy_share * *g.pcie_link_bytes_per_s;
    if (!pcie_busy && nic_share < th.link_busy_share) continue;
    idx.push_back(i);
    pcie_sum += pcie;
    nic_sum += nic_share;
    if (nic_share >= th.link_busy_share) nic_name = nic;
  }
  const std::size_t n = finite_count(util);
  if (n == 0 || static_cast<double>(idx.size()) / static_cast<double>(n) < th.comm_min_share) return;
  const double sh = static_cast<double>(idx.size()) / static_cast<double>(n), count = static_cast<double>(idx.size());
  WatchFinding f;
  f.severity = Severity::warn;
  f.gpu = g.index;
  f.code = "watch.communication_bound";
  f.evidence = {{"time_pct", 100 * sh}, {"mean_pcie_gbps", pcie_sum / count / 1e9}, {"mean_nic_link_share_pct", 100 * nic_sum / count}};
  if (g.pcie_link_bytes_per_s) f.evidence["pcie_link_gbps"] = *g.pcie_link_bytes_per_s / 1e9;
  if (!nic_name.empty()) f.evidence["nic"] = nic_name;
  f.headline = fmt::format("GPU {}: in {:.0f}% of samples the GPU idled or ran at low power while PCIe moved {:.1f} GB/s{}{}: "
                           "communication-bound signs.", g.index, 100 * sh, pcie_sum / count / 1e9,
                           g.pcie_link_bytes_per_s ? fmt::format(" of a {:.1f} GB/s link", *g.pcie_link_bytes_per_s / 1e9) : "",
                           nic_name.empty() ? "" : fmt::format(" and {} ran at {:.0f}% of its link", nic_name, 100 * nic_sum / count));
  f.action = "Overlap communication with compute (bucketed all-reduce, gradient accumulation), check the NCCL topology and "
             "GPUDirect RDMA, or use a faster interconnect.";
  out.findings.push_back(std::move(f));
}

void judge_throttle(const WatchSeries& s, const GpuFacts& g, const Thresholds& th, Diagnosis& out) {
  constexpr unsigned long long power_cap = 0x4, harmful = 0x8 | 0x20 | 0x40 | 0x80;  // hw slowdown, thermal, brake
  const auto masks = finite(s.column(gpu_column_prefix(g) + "throttle_mask"));
  if (masks.empty()) return;
  std::size_t hit = 0;
  unsigned long long seen = 0;
  for (double m : masks) {
    const auto bits = static_cast<unsigned long long>(m) & (harmful | power_cap);
    if (bits) ++hit, seen |= bits;
  }
  const double sh = static_cast<double>(hit) / static_cast<double>(masks.size());
  if (sh < th.throttle_min_share) return;
  WatchFinding f;
  f.gpu = g.index;
  f.severity = (seen & harmful) ? Severity::warn : Severity::info;
  f.code = "watch.throttled";
  const auto names = throttle_reason_names(seen);
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : ", ") + n;
  f.evidence = {{"time_pct", 100 * sh}, {"reasons", names}};
  f.headline = fmt::format("GPU {}: clocks held back ({}) in {:.0f}% of samples.", g.index, joined, 100 * sh);
  f.action = (seen & harmful) ? "Check cooling, the power supply and `nvidia-smi -q -d PERFORMANCE`; thermal or hardware slowdown costs throughput."
                              : "Running at the power cap is normal for a compute-bound job; raise the cap only if the platform allows it.";
  out.findings.push_back(std::move(f));
}

}  // namespace nodeaudit::watch
