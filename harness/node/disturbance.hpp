// Foreign load while a probe ran: CPU time and disk traffic on the node that were not the probe's
// own (its child process and everything it waited for) nor the runner's (watchdog, telemetry).
// A probe that ran beside enough of it is `disturbed`, and `compare` calls no regression from it.
//
//   foreign CPU  = /proc/stat busy (user+nice+system+steal) during the probe
//                  - nodeaudit's own over the same span: this process and every process it has
//                    waited for (getrusage SELF + CHILDREN). Under `run` that is the runner and
//                    the probe's child with everything the child waited for (mpirun and its
//                    ranks, fio, ...); under `probe` the probe itself.
//   foreign disk = /proc/diskstats bytes on physical disks - the same processes' ru_inblock/ru_oublock
//   foreign GPU  = processes NVML lists with a compute context on a GPU while the probe ran, other
//                  than the probe's process group and the runner (telemetry samples them)
//
// irq/softirq time is left out of busy: it is mostly the completions of the probe's own I/O and no
// process is charged for it. steal is kept: a hypervisor giving our CPUs to another guest is
// exactly the foreign load that moves a figure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nodeaudit {

struct HostLoadReading {
  double cpu_busy_s = 0;      // all CPUs together, hypervisor steal included
  double cpu_steal_s = 0;     // of which the hypervisor gave our CPUs to another guest
  double disk_bytes = 0;      // read + written, physical disks (dm-, md, zram left out: counted below them)
  double own_cpu_s = 0;       // this process and the children it waited for (user + system)
  double own_disk_bytes = 0;  // the same processes' block I/O
  double wall_s = 0;          // steady clock
};
HostLoadReading read_host_load();

struct ForeignGpuProcess {
  unsigned pid = 0;
  int gpu = 0;
  std::string command;  // /proc/PID/comm
  std::optional<double> used_memory_bytes;
};

// Why these numbers: the default compare tolerance is 5%. A CPU-bound probe that uses every core
// loses about the foreign share of the CPUs from its figure, so foreign use of 5% of the machine
// alone can move it by the tolerance. Disk: 10 MB/s is far above an idle node's background
// (journal, logs: well under 1 MB/s measured here) and a few percent of even a SATA SSD. GPU: any
// foreign compute context, since the GPU time-slices between contexts and a context holds memory
// the capacity probes then cannot use; NVML gives no cheap per-process share to set a level on.
struct DisturbanceThresholds {
  double cpu_share_pct = 5.0;
  double disk_bytes_per_s = 10e6;
};

// The `disturbance` block of a probe entry (results/SCHEMA.md). `after` must be read once the
// probe's child has been waited for, so its use counts as our own.
nlohmann::json judge_disturbance(const HostLoadReading& before, const HostLoadReading& after, int cpu_count,
                                 const std::vector<ForeignGpuProcess>& gpu_foreign = {},
                                 const DisturbanceThresholds& thresholds = {});

// "warning: host.decode was disturbed: ..." for `run`; empty when the entry is not disturbed.
std::string disturbance_warning(const nlohmann::json& entry);

}  // namespace nodeaudit
