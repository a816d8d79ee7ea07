// Host rules and host metrics: CPU saturation, I/O wait, the watched process; and the host
// pressure at given samples, which the GPU rules correlate idle time with.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/watch/classify.hpp"

namespace nodeaudit::watch {
namespace {


std::vector<std::string> core_columns(const WatchSeries& s) {
  std::vector<std::string> out;
  for (const auto& name : s.names_like("cpu", ".busy_pct"))
    if (name.size() > 3 && std::isdigit(static_cast<unsigned char>(name[3]))) out.push_back(name);
  return out;
}

double busiest_core_at(const WatchSeries& s, const std::vector<std::string>& cores, std::size_t i) {
  double best = 0;
  for (const auto& c : cores)
    if (std::isfinite(value_at(s.column(c), i))) best = std::max(best, s.column(c)[i]);
  return best;
}

Metric series_metric(const std::string& name, const char* unit, Better better, Labels labels, const std::vector<double>& values,
                     double scale = 1.0) {
  Metric m{name, unit, better, std::move(labels), {}};
  for (double v : finite(values)) m.samples.push_back(v * scale);
  return m;
}

bool ever_moved(const std::vector<double>& values) {
  const auto v = finite(values);
  return std::any_of(v.begin(), v.end(), [](double x) { return x > 0; });
}

}  // namespace

double nic_load_at(const WatchSeries& s, std::size_t i, std::string* nic) {
  double best = 0;
  for (const auto& [name, speed] : s.nic_speed_bytes_per_s) {
    if (speed <= 0) continue;
    for (const char* dir : {".rx_bytes_per_s", ".tx_bytes_per_s"}) {
      const double v = value_at(s.column("net." + name + dir), i);
      if (std::isfinite(v) && v / speed > best) {
        best = v / speed;
        if (nic) *nic = name;
      }
    }
  }
  return best;
}

HostPressure host_pressure(const WatchSeries& s, const std::vector<std::size_t>& samples) {
  HostPressure hp;
  const auto cores = core_columns(s);
  double cpu = 0, core = 0, iowait = 0, nic_total = 0;
  std::size_t cpu_n = 0, iowait_n = 0;
  std::map<std::string, double> nic_hits;
  for (auto i : samples) {
    if (double v = value_at(s.column("cpu_busy_pct"), i); std::isfinite(v)) cpu += v, ++cpu_n;
    if (double v = value_at(s.column("cpu_iowait_pct"), i); std::isfinite(v)) iowait += v, ++iowait_n;
    core += busiest_core_at(s, cores, i);
    std::string nic;
    const double load = nic_load_at(s, i, &nic);
    nic_total += load;
    if (!nic.empty()) nic_hits[nic] += load;
  }
  hp.samples = samples.size();
  if (samples.empty()) return hp;
  const double n = static_cast<double>(samples.size());
  hp.cpu_busy_pct = cpu_n ? cpu / static_cast<double>(cpu_n) : 0;
  hp.iowait_pct = iowait_n ? iowait / static_cast<double>(iowait_n) : 0;
  hp.busiest_core_pct = cores.empty() ? hp.cpu_busy_pct : core / n;
  hp.busiest_nic_share = nic_total / n;
  for (const auto& [name, load] : nic_hits)
    if (hp.busiest_nic.empty() || load > nic_hits[hp.busiest_nic]) hp.busiest_nic = name;
  return hp;
}

void diagnose_host(const WatchSeries& s, const Thresholds& th, Diagnosis& out) {
  const auto cpu = mean_of(s.column("cpu_busy_pct"));
  const auto iowait = mean_of(s.column("cpu_iowait_pct"));
  if (cpu && *cpu >= th.cpu_saturated_pct) {
    WatchFinding f{Severity::warn, "watch.cpu_saturated", -1,
                   fmt::format("Host CPUs averaged {:.0f}% busy over the watch ({} CPUs).", *cpu, s.host_cpus),
                   "The CPUs are the limit: more cores per GPU, fewer host-side transforms, or decode on the GPU.",
                   {{"mean_cpu_busy_pct", *cpu}, {"cpus", s.host_cpus}}};
    out.findings.push_back(std::move(f));
  }
  if (iowait && *iowait >= th.iowait_high_pct) {
    WatchFinding f{Severity::warn, "watch.io_wait", -1, fmt::format("The CPUs waited on I/O {:.0f}% of the time.", *iowait),
                   "Storage is slow for this job: cache the data set locally, read larger blocks, or use faster storage.",
                   {{"mean_iowait_pct", *iowait}}};
    out.findings.push_back(std::move(f));
  }
  if (!s.pid) return;
  const auto proc_cpu = mean_of(s.column("proc.cpu_pct"));
  const auto proc_read = mean_of(s.column("proc.read_bytes_per_s"));
  WatchFinding f{Severity::info, "watch.process", -1,
                 fmt::format("Process {} and its children used {:.0f}% of one core on average and read {:.3f} GB/s from storage.",
                             *s.pid, proc_cpu.value_or(0), proc_read.value_or(0) / 1e9),
                 "", {{"pid", *s.pid}, {"mean_cpu_pct_of_one_core", proc_cpu.value_or(0)}, {"mean_read_gbps", proc_read.value_or(0) / 1e9}}};
  out.findings.push_back(std::move(f));
}

void add_host_metrics(const WatchSeries& s, std::vector<Metric>& metrics) {
  if (!s.column("cpu_busy_pct").empty()) metrics.push_back(series_metric("cpu_busy", "%", Better::lower, {}, s.column("cpu_busy_pct")));
  if (!s.column("cpu_iowait_pct").empty()) metrics.push_back(series_metric("cpu_iowait", "%", Better::lower, {}, s.column("cpu_iowait_pct")));
  for (const auto& name : s.names_like("disk.", ".read_bytes_per_s")) {
    if (!ever_moved(s.column(name))) continue;
    const std::string dev = name.substr(5, name.size() - 5 - std::string(".read_bytes_per_s").size());
    metrics.push_back(series_metric("disk_read_bandwidth", "GB/s", Better::higher, {{"device", dev}}, s.column(name), 1e-9));
  }
  for (const char* dir : {"rx", "tx"}) {
    const std::string suffix = fmt::format(".{}_bytes_per_s", dir);
    for (const auto& name : s.names_like("net.", suffix)) {
      const std::string nic = name.substr(4, name.size() - 4 - suffix.size());
      if (nic == "lo" || !ever_moved(s.column(name))) continue;
      metrics.push_back(series_metric(fmt::format("net_{}_bandwidth", dir), "GB/s", Better::higher, {{"interface", nic}}, s.column(name), 1e-9));
    }
  }
  if (!s.pid) return;
  const Labels pid{{"pid", std::to_string(*s.pid)}};
  if (!s.column("proc.cpu_pct").empty()) metrics.push_back(series_metric("process_cpu", "%", Better::lower, pid, s.column("proc.cpu_pct")));
  if (!s.column("proc.read_bytes_per_s").empty())
    metrics.push_back(series_metric("process_read_bandwidth", "GB/s", Better::higher, pid, s.column("proc.read_bytes_per_s"), 1e-9));
}

}  // namespace nodeaudit::watch
