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
       {}},
  };
}

}  // namespace nodeaudit
