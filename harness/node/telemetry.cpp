#include "harness/node/telemetry.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/stats.hpp"
#include "harness/node/nvml.hpp"
#include "harness/node/procfs.hpp"

namespace nodeaudit {

void append_gpu_reading(TelemetryRow& row, int index, const NvmlReading& r) {
  const std::string p = fmt::format("gpu{}.", index);
  auto put = [&](const char* name, const std::optional<double>& v) {
    if (v) row.values[p + name] = *v;
  };
  put("util_pct", r.util_pct);
  put("mem_used_bytes", r.mem_used_bytes);
  put("power_w", r.power_w);
  put("temp_c", r.temp_c);
  put("sm_clock_mhz", r.sm_clock_mhz);
  put("mem_clock_mhz", r.mem_clock_mhz);
  put("pcie_rx_bytes_per_s", r.pcie_rx_bytes_per_s);
  put("pcie_tx_bytes_per_s", r.pcie_tx_bytes_per_s);
  if (r.throttle_reasons) row.values[p + "throttle_mask"] = static_cast<double>(*r.throttle_reasons);
  if (r.ecc_volatile_uncorrected) row.values[p + "ecc_volatile_uncorrected"] = static_cast<double>(*r.ecc_volatile_uncorrected);
}

TelemetrySampler::TelemetrySampler(const Nvml* nvml, double interval_s) : nvml_(nvml), interval_s_(interval_s) {}

TelemetrySampler::~TelemetrySampler() { stop(); }

void TelemetrySampler::start() {
  if (running_.exchange(true)) return;
  thread_ = std::thread([this] { loop(); });
}

void TelemetrySampler::stop() {
  if (!running_.exchange(false)) return;
  if (thread_.joinable()) thread_.join();
}

namespace {

// The process group of `pid` from /proc/PID/stat (the field after state and ppid); nullopt when the
// process is not visible here.
std::optional<pid_t> process_group_of(unsigned pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) return std::nullopt;
  const auto close = text.rfind(')');  // the command may hold spaces and parentheses
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 1));
  std::string state;
  long ppid = 0, pgrp = 0;
  if (!(fields >> state >> ppid >> pgrp)) return std::nullopt;
  return static_cast<pid_t>(pgrp);
}

}  // namespace

std::vector<ForeignGpuProcess> TelemetrySampler::foreign_gpu_processes() const {
  std::lock_guard lock(mutex_);
  std::vector<ForeignGpuProcess> out;
  for (const auto& [key, process] : foreign_gpu_) out.push_back(process);
  return out;
}

void TelemetrySampler::note_gpu_processes(int gpu) {
  const auto processes = nvml_->compute_processes(gpu);
  if (!processes) return;
  const pid_t own_pgid = own_pgid_.load();
  for (const NvmlGpuProcess& p : *processes) {
    if (static_cast<pid_t>(p.pid) == getpid()) continue;
    const std::optional<pid_t> pgid = process_group_of(p.pid);
    if (!pgid || (own_pgid > 0 && *pgid == own_pgid)) continue;
    std::lock_guard lock(mutex_);
    ForeignGpuProcess& seen = foreign_gpu_[{p.pid, gpu}];
    seen.pid = p.pid;
    seen.gpu = gpu;
    if (seen.command.empty()) seen.command = procfs::read_first_line("/proc/" + std::to_string(p.pid) + "/comm").value_or("");
    if (p.used_memory_bytes)
      seen.used_memory_bytes = std::max(seen.used_memory_bytes.value_or(0), static_cast<double>(*p.used_memory_bytes));
  }
}

std::vector<TelemetryRow> TelemetrySampler::rows() const {
  std::lock_guard lock(mutex_);
  return rows_;
}

void TelemetrySampler::loop() {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto next = start;
  while (running_.load()) {
    TelemetryRow row = sample_once();
    row.t_s = std::chrono::duration<double>(clock::now() - start).count();
    // Counters turn into rates against the previous sample; the first sample only primes them.
    {
      std::lock_guard lock(mutex_);
      if (!row.values.empty()) rows_.push_back(std::move(row));
    }
    next += std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(interval_s_));
    while (running_.load() && clock::now() < next) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

TelemetryRow TelemetrySampler::sample_once() {
  TelemetryRow row;
  const double now_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  std::map<std::string, unsigned long long> counters;
  const auto cpu = procfs::read_cpu_times();
  if (auto it = cpu.find("cpu"); it != cpu.end()) {
    counters["cpu.busy"] = it->second.busy();
    counters["cpu.total"] = it->second.total();
  }
  for (const auto& [disk, c] : procfs::read_diskstats()) {
    counters["disk." + disk + ".read"] = c.sectors_read * 512ULL;
    counters["disk." + disk + ".write"] = c.sectors_written * 512ULL;
  }
  if (prev_counters_) {
    const double dt = now_s - prev_t_s_;
    const auto& prev = *prev_counters_;
    auto delta = [&](const std::string& key) -> std::optional<double> {
      auto a = prev.find(key);
      auto b = counters.find(key);
      if (a == prev.end() || b == counters.end() || b->second < a->second) return std::nullopt;
      return static_cast<double>(b->second - a->second);
    };
    if (auto busy = delta("cpu.busy"), total = delta("cpu.total"); busy && total && *total > 0)
      row.values["cpu_busy_pct"] = 100.0 * *busy / *total;
    for (const auto& [key, value] : counters) {
      if (key.rfind("disk.", 0) != 0 || dt <= 0) continue;
      const bool is_read = key.size() > 5 && key.compare(key.size() - 5, 5, ".read") == 0;
      const std::string disk = key.substr(5, key.rfind('.') - 5);
      if (auto d = delta(key)) row.values["disk." + disk + (is_read ? ".read_bytes_per_s" : ".write_bytes_per_s")] = *d / dt;
    }
    const auto mem = procfs::read_meminfo();
    if (mem.count("MemTotal") && mem.count("MemAvailable"))
      row.values["mem_used_bytes"] = static_cast<double>(mem.at("MemTotal") - mem.at("MemAvailable"));
    if (nvml_ && nvml_->available()) {
      const int n = nvml_->device_count();
      if (throttle_seen_.size() < static_cast<std::size_t>(n)) throttle_seen_.resize(static_cast<std::size_t>(n), 0);
      for (int i = 0; i < n; ++i) {
        const NvmlReading r = nvml_->read(i);
        append_gpu_reading(row, i, r);
        if (r.throttle_reasons) throttle_seen_[static_cast<std::size_t>(i)] |= *r.throttle_reasons;
        note_gpu_processes(i);
      }
    }
  }
  prev_counters_ = std::move(counters);
  prev_t_s_ = now_s;
  return row;
}

nlohmann::json summarize_telemetry(const std::vector<TelemetryRow>& rows, double interval_s, const std::string& note) {
  std::map<std::string, std::vector<double>> columns;
  for (const auto& row : rows)
    for (const auto& [key, value] : row.values) columns[key].push_back(value);
  auto range = [](const std::vector<double>& v) {
    const Summary s = summarize(v);
    return nlohmann::json{{"min", s.min}, {"median", s.median}, {"max", s.max}};
  };
  nlohmann::json out = {{"interval_s", interval_s}, {"samples", rows.size()}};
  nlohmann::json host = nlohmann::json::object();
  nlohmann::json gpus = nlohmann::json::array();
  std::map<int, nlohmann::json> by_gpu;
  for (const auto& [key, values] : columns) {
    if (key == "cpu_busy_pct" || key == "mem_used_bytes") {
      host[key] = range(values);
    } else if (key.rfind("disk.", 0) == 0) {
      const auto dot = key.rfind('.');
      host["disks"][key.substr(5, dot - 5)][key.substr(dot + 1)] = range(values);
    } else if (key.rfind("gpu", 0) == 0) {
      const auto dot = key.find('.');
      const int index = std::stoi(key.substr(3, dot - 3));
      const std::string field = key.substr(dot + 1);
      nlohmann::json& g = by_gpu[index];
      g["index"] = index;
      if (field == "throttle_mask") {
        unsigned long long seen = 0;
        for (double v : values) seen |= static_cast<unsigned long long>(v);
        g["throttle_reasons"] = throttle_reason_names(seen);
      } else if (field == "ecc_volatile_uncorrected") {
        g[field] = values.back();
      } else {
        g[field] = range(values);
      }
    }
  }
  for (auto& [index, g] : by_gpu) gpus.push_back(g);
  out["host"] = host;
  if (!gpus.empty()) out["gpus"] = gpus;
  if (!note.empty()) out["note"] = note;
  return out;
}

void append_telemetry_csv(const std::string& path, const std::string& probe_id, const std::vector<TelemetryRow>& rows) {
  std::ifstream existing(path);
  const bool fresh = !existing.good() || existing.peek() == std::ifstream::traits_type::eof();
  existing.close();
  std::ofstream out(path, std::ios::app);
  if (fresh) out << "probe,t_s,column,value\n";
  // Long format: one line per reading, so columns may differ between probes and GPUs.
  for (const auto& row : rows)
    for (const auto& [key, value] : row.values) out << probe_id << ',' << fmt::format("{:.3f}", row.t_s) << ',' << key << ',' << value << '\n';
}

}  // namespace nodeaudit
