// Foreign load while a probe ran: CPU time and disk traffic on the node that were not the probe's
// own (its child process and everything it waited for) nor the runner's (watchdog, telemetry).
// A probe that ran beside enough of it is `disturbed`, and `compare` calls no regression from it.
//
//   foreign CPU  = /proc/stat busy (user+nice+system+steal) during the probe
//                  - the probe process's rusage (wait4, includes its reaped children)
//                  - the runner's own rusage over the same span (for `nodeaudit probe`, which
//                    measures in its own process, that is the probe's use)
//   foreign disk = /proc/diskstats bytes on physical disks - the probe's ru_inblock/ru_oublock
//   foreign GPU  = processes NVML lists with a compute context on a GPU while the probe ran, other
//                  than the probe's process group and the runner (telemetry samples them)
//
// irq/softirq time is left out of busy: it is mostly the completions of the probe's own I/O and no
// process is charged for it. steal is kept: a hypervisor giving our CPUs to another guest is
// exactly the foreign load that moves a figure.
#pragma once

#include <sys/resource.h>

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nodeaudit {

struct HostLoadReading {
  double cpu_busy_s = 0;    // all CPUs together
  double disk_bytes = 0;    // read + written, physical disks (dm-, md, zram left out: counted below them)
  double runner_cpu_s = 0;  // this process (user + system): the runner, or the probe itself under `probe`
  double runner_disk_bytes = 0;
  double wall_s = 0;  // steady clock
};
HostLoadReading read_host_load();

struct ProbeOwnUse {
  double cpu_s = 0;
  double disk_bytes = 0;
};
ProbeOwnUse own_use_of(const struct rusage& usage);

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

// The `disturbance` block of a probe entry (results/SCHEMA.md). `own` is the probe's child process;
// {} when the probe ran in this process.
nlohmann::json judge_disturbance(const HostLoadReading& before, const HostLoadReading& after, const ProbeOwnUse& own,
                                 int cpu_count, const std::vector<ForeignGpuProcess>& gpu_foreign = {},
                                 const DisturbanceThresholds& thresholds = {});

// "warning: host.decode was disturbed: ..." for `run`; empty when the entry is not disturbed.
std::string disturbance_warning(const nlohmann::json& entry);

}  // namespace nodeaudit
