#include "harness/watch/sampler.hpp"

#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "harness/node/nvml.hpp"

namespace nodeaudit::watch {

WatchSampler::WatchSampler(const Nvml* nvml, std::optional<int> pid, SamplerPaths paths)
    : nvml_(nvml), pid_(pid), paths_(std::move(paths)) {}

void WatchSampler::describe(WatchSeries& series) const {
  series.pid = pid_;
  const auto cpu = procfs::read_cpu_times(paths_.proc + "/stat");
  series.host_cpus = static_cast<int>(cpu.size() > 0 ? cpu.size() - 1 : 0);  // minus the aggregate line
  for (const auto& [nic, counters] : procfs::read_netdev(paths_.proc + "/net/dev")) {
    const auto speed = procfs::read_first_line(paths_.sys_net + "/" + nic + "/speed");  // Mb/s, -1 when unknown
    try {
      if (speed && std::stod(*speed) > 0) series.nic_speed_bytes_per_s[nic] = std::stod(*speed) * 1e6 / 8;
    } catch (const std::exception&) {
    }
  }
  if (!nvml_ || !nvml_->available() || nvml_->device_count() == 0) {
    series.gpu_note = nvml_ && !nvml_->available() ? nvml_->why_unavailable() : "NVML found no GPU";
    return;
  }
  for (int i = 0; i < nvml_->device_count(); ++i) {
    const NvmlDeviceInfo info = nvml_->device_info(i);
    GpuFacts g;
    g.index = i;
    g.name = info.name;
    if (info.memory_total_bytes) g.memory_total_bytes = static_cast<double>(*info.memory_total_bytes);
    g.pcie_link_bytes_per_s = pcie_link_bytes_per_s(info.pcie_gen_current, info.pcie_width_current);
    g.power_limit_w = info.power_limit_w;
    series.gpus.push_back(g);
  }
}

void WatchSampler::add_cpu(TelemetryRow& row, const std::map<std::string, procfs::CpuTimes>& cpu) const {
  for (const auto& [name, now] : cpu) {
    auto it = prev_cpu_.find(name);
    if (it == prev_cpu_.end()) continue;
    const auto busy = procfs::busy_pct(it->second, now);
    const auto iowait = procfs::iowait_pct(it->second, now);
    const std::string key = name == "cpu" ? "cpu_" : name + ".";
    if (busy) row.values[key + "busy_pct"] = *busy;
    if (iowait) row.values[key + "iowait_pct"] = *iowait;
  }
}

void WatchSampler::add_counters(TelemetryRow& row, double dt_s) const {
  for (const auto& [dev, now] : disk_) {
    auto it = prev_disk_.find(dev);
    if (it == prev_disk_.end() || now.sectors_read < it->second.sectors_read || now.sectors_written < it->second.sectors_written)
      continue;
    row.values["disk." + dev + ".read_bytes_per_s"] = 512.0 * static_cast<double>(now.sectors_read - it->second.sectors_read) / dt_s;
    row.values["disk." + dev + ".write_bytes_per_s"] =
        512.0 * static_cast<double>(now.sectors_written - it->second.sectors_written) / dt_s;
  }
  for (const auto& [nic, now] : net_) {
    auto it = prev_net_.find(nic);
    if (it == prev_net_.end() || now.rx_bytes < it->second.rx_bytes || now.tx_bytes < it->second.tx_bytes) continue;
    row.values["net." + nic + ".rx_bytes_per_s"] = static_cast<double>(now.rx_bytes - it->second.rx_bytes) / dt_s;
    row.values["net." + nic + ".tx_bytes_per_s"] = static_cast<double>(now.tx_bytes - it->second.tx_bytes) / dt_s;
  }
  const auto mem = procfs::read_meminfo(paths_.proc + "/meminfo");
  if (mem.count("MemTotal") && mem.count("MemAvailable"))
    row.values["mem_used_bytes"] = static_cast<double>(mem.at("MemTotal") - mem.at("MemAvailable"));
}

void WatchSampler::add_process(TelemetryRow& row, double dt_s) {
  if (!pid_) return;
  auto tree = read_process_tree(*pid_, paths_.proc);
  if (tree.empty()) {
    process_alive_ = false;
    return;
  }
  const ProcessRates r = process_rates(prev_tree_, tree, dt_s, static_cast<double>(sysconf(_SC_CLK_TCK)));
  row.values["proc.cpu_pct"] = r.cpu_pct;
  row.values["proc.processes"] = static_cast<double>(r.processes);
  if (r.read_bytes_per_s) row.values["proc.read_bytes_per_s"] = *r.read_bytes_per_s;
  if (r.write_bytes_per_s) row.values["proc.write_bytes_per_s"] = *r.write_bytes_per_s;
  prev_tree_ = std::move(tree);
}

void WatchSampler::add_gpus(TelemetryRow& row) const {
  if (!nvml_ || !nvml_->available()) return;
  for (int i = 0; i < nvml_->device_count(); ++i) append_gpu_reading(row, i, nvml_->read(i, true));
}

std::optional<TelemetryRow> WatchSampler::sample(double t_s) {
  const auto now = std::chrono::steady_clock::now();
  const auto cpu = procfs::read_cpu_times(paths_.proc + "/stat");
  disk_ = procfs::read_diskstats(paths_.proc + "/diskstats");
  net_ = procfs::read_netdev(paths_.proc + "/net/dev");
  std::optional<TelemetryRow> row;
  const double dt_s = std::chrono::duration<double>(now - prev_time_).count();
  if (!primed_) {
    if (pid_) {
      prev_tree_ = read_process_tree(*pid_, paths_.proc);
      process_alive_ = !prev_tree_.empty();
    }
  } else if (dt_s > 0) {
    row.emplace();
    row->t_s = t_s;
    add_cpu(*row, cpu);
    add_counters(*row, dt_s);
    add_process(*row, dt_s);
    add_gpus(*row);
  }
  primed_ = true;
  prev_time_ = now;
  prev_cpu_ = cpu;
  prev_disk_ = std::move(disk_);
  prev_net_ = std::move(net_);
  return row;
}

std::string collect(WatchSampler& sampler, WatchSeries& series, double duration_s, const std::atomic<bool>& stop,
                    const std::function<void(const WatchSeries&)>& on_row) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto step = std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(series.interval_s));
  auto next = start;
  sampler.sample(0);
  while (true) {
    next += step;
    while (!stop.load() && clock::now() < next) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (stop.load()) return "interrupted";
    const double t_s = std::chrono::duration<double>(clock::now() - start).count();
    if (auto row = sampler.sample(t_s)) series.append(*row);
    if (!sampler.process_alive()) return "process exited";
    if (on_row) on_row(series);
    if (t_s >= duration_s - 1e-6) return "duration";
  }
}

}  // namespace nodeaudit::watch
