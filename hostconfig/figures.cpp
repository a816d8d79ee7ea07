// The configuration audit's figures: none, only findings (each rule names the measured value and
// its threshold). Dependency-free (figures.hpp only): compiled into the probe catalogue that the
// scorer and the reporters link.
#include "harness/core/figures.hpp"

namespace nodeaudit {

std::vector<ProbeFigures> hostconfig_probe_figures() {
  return {
      {"host.config",
       "Node configuration checks: governor, THP, swap, /dev/shm, ulimit -l, NUMA balancing, IOMMU, RAM "
       "and cores per GPU, NVIDIA Xid events in the kernel log (findings, no figures).",
       ProbeRole::configuration_audit,
       {},
       "Among the findings: `host_config.kernel_log` (always one: the records read from `/dev/kmsg` and how far "
       "back the ring buffer reaches, or `not judged (<why>)` when the log cannot be read or is empty, never a "
       "pass) and `host_config.xid` (one per GPU and Xid code: count, first/last seconds after boot, the driver's "
       "text, meaning and action from NVIDIA's Xid documentation; fail for 48, 62, 74, 79, 95, 119, 120 and a 154 "
       "that asks for a recovery, warn for 8, 32, 61, 63, 64, 92, 94 and codes not in the table, info for "
       "application faults 13, 31, 43, 45)."},
  };
}

}  // namespace nodeaudit
