// Readers of /proc files, each taking the path so tests can feed recorded copies.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nodeaudit::procfs {

// /proc/meminfo values in bytes, keyed by field name ("MemTotal", "MemAvailable", "SwapTotal").
std::map<std::string, unsigned long long> read_meminfo(const std::string& path = "/proc/meminfo");

// Aggregate and per-CPU jiffies from /proc/stat ("cpu", "cpu0", ...).
struct CpuTimes {
  unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  unsigned long long total() const { return user + nice + system + idle + iowait + irq + softirq + steal; }
  unsigned long long busy() const { return total() - idle - iowait; }
};
std::map<std::string, CpuTimes> read_cpu_times(const std::string& path = "/proc/stat");
// Busy share in percent between two readings of the same CPU; nullopt when no time passed.
std::optional<double> busy_pct(const CpuTimes& before, const CpuTimes& after);
std::optional<double> iowait_pct(const CpuTimes& before, const CpuTimes& after);

// /proc/diskstats sectors read/written (512-byte units) per whole disk; partitions are dropped.
struct DiskCounters {
  unsigned long long sectors_read = 0, sectors_written = 0;
};
std::map<std::string, DiskCounters> read_diskstats(const std::string& path = "/proc/diskstats");

// /proc/net/dev bytes per interface.
struct NetCounters {
  unsigned long long rx_bytes = 0, tx_bytes = 0;
};
std::map<std::string, NetCounters> read_netdev(const std::string& path = "/proc/net/dev");

// First line of a file, trimmed; nullopt when it cannot be read.
std::optional<std::string> read_first_line(const std::string& path);

}  // namespace nodeaudit::procfs
