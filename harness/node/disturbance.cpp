#include "harness/node/disturbance.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "harness/node/procfs.hpp"

namespace nodeaudit {
namespace {

constexpr double min_judged_wall_s = 1.0;

double seconds_of(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

// Virtual block devices repeat the traffic of the disks below them.
bool is_physical_disk(const std::string& name) {
  for (const char* prefix : {"dm-", "md", "zram", "loop", "ram"})
    if (name.rfind(prefix, 0) == 0) return false;
  return true;
}

}  // namespace

HostLoadReading read_host_load() {
  HostLoadReading r;
  const auto cpus = procfs::read_cpu_times();
  if (const auto it = cpus.find("cpu"); it != cpus.end()) {
    const procfs::CpuTimes& t = it->second;
    const double ticks_per_s = static_cast<double>(sysconf(_SC_CLK_TCK));
    r.cpu_busy_s = static_cast<double>(t.user + t.nice + t.system + t.steal) / ticks_per_s;
    r.cpu_steal_s = static_cast<double>(t.steal) / ticks_per_s;
  }
  for (const auto& [disk, counters] : procfs::read_diskstats())
    if (is_physical_disk(disk))
      r.disk_bytes += static_cast<double>(counters.sectors_read + counters.sectors_written) * 512.0;
  for (const int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage usage{};
    getrusage(who, &usage);
    r.own_cpu_s += seconds_of(usage.ru_utime) + seconds_of(usage.ru_stime);
    r.own_disk_bytes += static_cast<double>(usage.ru_inblock + usage.ru_oublock) * 512.0;
  }
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  return r;
}

namespace {

std::string gpu_evidence(const std::vector<ForeignGpuProcess>& processes) {
  std::string text = "other processes held a compute context on the GPUs:";
  for (std::size_t i = 0; i < processes.size(); ++i) {
    const ForeignGpuProcess& p = processes[i];
    const std::string memory = p.used_memory_bytes ? fmt::format(", {:.1f} GB", *p.used_memory_bytes / 1e9) : "";
    text += fmt::format("{} pid {} ({}{}) on GPU {}", i ? "," : "", p.pid, p.command.empty() ? "?" : p.command, memory,
                        p.gpu);
  }
  return text;
}

nlohmann::json gpu_processes_json(const std::vector<ForeignGpuProcess>& processes) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : processes) {
    nlohmann::json one = {{"pid", p.pid}, {"gpu", p.gpu}, {"command", p.command}};
    if (p.used_memory_bytes) one["used_memory_bytes"] = *p.used_memory_bytes;
    out.push_back(std::move(one));
  }
  return out;
}

}  // namespace

nlohmann::json judge_disturbance(const HostLoadReading& before, const HostLoadReading& after, int cpu_count,
                                 const std::vector<ForeignGpuProcess>& gpu_foreign,
                                 const DisturbanceThresholds& thresholds) {
  const double wall_s = std::max(after.wall_s - before.wall_s, 1e-9);
  const double own_cpu_s = after.own_cpu_s - before.own_cpu_s;
  const double foreign_cpu_s = std::max(0.0, after.cpu_busy_s - before.cpu_busy_s - own_cpu_s);
  const double capacity_s = wall_s * std::max(cpu_count, 1);
  const double foreign_share_pct = 100.0 * foreign_cpu_s / capacity_s;
  const double steal_s = std::max(0.0, after.cpu_steal_s - before.cpu_steal_s);
  const double own_disk_bytes = after.own_disk_bytes - before.own_disk_bytes;
  const double foreign_disk_bytes = std::max(0.0, after.disk_bytes - before.disk_bytes - own_disk_bytes);
  const double foreign_disk_rate = foreign_disk_bytes / wall_s;
  std::string evidence;
  // Under a second /proc/stat's 10 ms ticks are too coarse: one kernel thread's tick would read as
  // several percent of the machine. Such probes (host.config) record findings, not rates.
  const bool judged = wall_s >= min_judged_wall_s;
  if (judged && foreign_share_pct > thresholds.cpu_share_pct)
    evidence =
        fmt::format("other processes used {:.1f} CPU-seconds in {:.1f} s, {:.0f}% of the {} CPUs (threshold {:g}%)",
                    foreign_cpu_s, wall_s, foreign_share_pct, cpu_count, thresholds.cpu_share_pct) +
        (steal_s > 0 ? fmt::format(", of which {:.1f} CPU-seconds hypervisor steal (/proc/stat)", steal_s) : "");
  if (judged && foreign_disk_rate > thresholds.disk_bytes_per_s)
    evidence += fmt::format("{}other processes moved {:.0f} MB on the disks, {:.1f} MB/s (threshold {:g} MB/s)",
                            evidence.empty() ? "" : "; ", foreign_disk_bytes / 1e6, foreign_disk_rate / 1e6,
                            thresholds.disk_bytes_per_s / 1e6);
  if (!gpu_foreign.empty()) evidence += (evidence.empty() ? "" : "; ") + gpu_evidence(gpu_foreign);
  nlohmann::json out = {
      {"wall_s", wall_s},
      {"cpu_count", cpu_count},
      {"own_cpu_s", own_cpu_s},
      {"cpu_foreign_s", foreign_cpu_s},
      {"cpu_foreign_share_pct", foreign_share_pct},
      {"cpu_steal_s", steal_s},
      {"own_disk_bytes", own_disk_bytes},
      {"disk_foreign_bytes", foreign_disk_bytes},
      {"disk_foreign_bytes_per_s", foreign_disk_rate},
      {"gpu_foreign_processes", gpu_processes_json(gpu_foreign)},
      {"thresholds", {{"cpu_share_pct", thresholds.cpu_share_pct}, {"disk_bytes_per_s", thresholds.disk_bytes_per_s}}},
      {"disturbed", !evidence.empty()}};
  if (!evidence.empty()) out["evidence"] = evidence;
  if (!judged) out["note"] = fmt::format("not judged: shorter than {:g} s", min_judged_wall_s);
  return out;
}

std::string disturbance_warning(const nlohmann::json& entry) {
  if (!entry.value("disturbed", false)) return "";
  const nlohmann::json& d = entry.at("disturbance");
  std::string rounds;
  if (d.contains("rounds_disturbed"))
    rounds =
        fmt::format(" (in {} of {} rounds; worst shown)", d.value("rounds_disturbed", 0), d.value("rounds_judged", 0));
  return fmt::format("warning: {} was disturbed{}: {}; compare will not call a regression from its figures\n",
                     entry.value("id", "?"), rounds, d.value("evidence", "foreign load"));
}

}  // namespace nodeaudit
