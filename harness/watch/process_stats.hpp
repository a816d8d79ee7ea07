// CPU time and storage I/O of a process and all its descendants (a training job's data-loader
// workers are child processes), read from /proc/PID/stat and /proc/PID/io.
// Pitfalls: /proc/PID/io needs the same user (or ptrace rights), so I/O may be unknown while CPU
// time is known; children that exit between two samples drop out of the sum rather than making it
// go backwards, because deltas are taken per PID.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace nodeaudit::watch {

struct ProcessCounters {
  unsigned long long cpu_ticks = 0;  // utime + stime, in clock ticks (sysconf(_SC_CLK_TCK))
  int parent = 0;
  std::optional<unsigned long long> read_bytes, write_bytes;  // bytes that reached the storage layer
};

std::optional<ProcessCounters> read_process(int pid, const std::string& proc_root = "/proc");
// The process and every descendant, keyed by PID; empty when `pid` does not exist.
std::map<int, ProcessCounters> read_process_tree(int pid, const std::string& proc_root = "/proc");
bool process_exists(int pid, const std::string& proc_root = "/proc");
// The memory a tree of processes holds apart from the page cache: each one's proportional share of its
// anonymous and shared-memory pages (Pss_Anon + Pss_Shmem in /proc/PID/smaps_rollup, Linux 5.8 and
// later), so pages a rank shares with the workers it forked count once in all, as a memory cgroup
// charges them. File pages are left out: a memory-mapped data set's are the page cache itself. Empty
// when no process's could be read.
std::optional<double> tree_resident_bytes(const std::map<int, ProcessCounters>& tree, const std::string& proc_root = "/proc");

struct ProcessRates {
  double cpu_pct = 0;  // percent of one core
  std::optional<double> read_bytes_per_s, write_bytes_per_s;
  std::size_t processes = 0;
};
// Rates between two readings of a tree, over dt_s seconds; only PIDs present in both count.
ProcessRates process_rates(const std::map<int, ProcessCounters>& before, const std::map<int, ProcessCounters>& after,
                           double dt_s, double ticks_per_s);

}  // namespace nodeaudit::watch
