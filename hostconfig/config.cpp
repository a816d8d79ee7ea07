// host.config — node configuration checks for a GPU training server; findings are its output.
//
// Reads, and says what it expects of: the CPU frequency governor (performance), transparent huge
// pages (madvise/always, defrag not always), swap (none), /dev/shm size (>= 1 GiB; the 64 MiB
// container default breaks multi-worker loaders), ulimit -l (unlimited), automatic NUMA balancing
// (off), the IOMMU mode (off or passthrough), host RAM against total GPU memory (>= 2x), CPU
// cores per GPU (>= 4), and the kernel log for NVIDIA Xid events (GPU faults the driver logged:
// fallen off the bus, ECC, NVLink), read here rather than in gpu.config because a GPU that fell off
// the bus is invisible to CUDA. No figure is measured, so no metric is recorded.
// Pitfalls: inside a container /dev/shm, ulimit -l, the CPU affinity and the cgroup CPU and memory
// limits are the container's, which is what a training job in the same container gets (RAM and cores
// per GPU are judged on them); the host's governor and IOMMU may be hidden (then not judged); cpufreq is often hidden in VMs (then not judged);
// the kernel log holds only what its ring buffer still has, and a container may not read it at all
// (then not judged, never a pass).
#include "harness/core/context.hpp"
#include "harness/core/registry.hpp"
#include "harness/node/nvml.hpp"
#include "hostconfig/config_rules.hpp"
#include "kernels/host/thread_team.hpp"

namespace nodeaudit::host {
namespace {

GpuInventory gpu_inventory() {
  const Nvml nvml;
  GpuInventory inventory;
  inventory.gpus = nvml.device_count();
  if (inventory.gpus == 0) inventory.why_none = nvml.available() ? "NVML reports 0 devices" : nvml.why_unavailable();
  std::uint64_t total = 0;
  bool all_known = true;
  for (int i = 0; i < inventory.gpus; ++i) {
    const auto bytes = nvml.device_info(i).memory_total_bytes;
    if (bytes) total += *bytes;
    else all_known = false;
  }
  if (inventory.gpus > 0 && all_known) inventory.total_memory_bytes = total;
  return inventory;
}

Outcome check_config(ProbeContext& ctx) {
  const GpuInventory gpus = gpu_inventory();
  const ContainerInfo container = detect_container();
  for (Finding& f : check_node_config(ConfigPaths{}, gpus, static_cast<int>(allowed_cpus().size()), container))
    ctx.add_finding(f.severity, std::move(f.code), std::move(f.message));
  ctx.info()["gpus"] = gpus.gpus;
  ctx.info()["container"] = container.detected ? container.runtime : "";
  return Outcome::ok();
}

ProbeSpec host_config_spec() {
  ProbeSpec spec;
  spec.id = "host.config";
  spec.description = "Node configuration checks: governor, THP, swap, /dev/shm, ulimit -l, NUMA balancing, IOMMU, RAM and cores per GPU, "
                     "NVIDIA Xid events in the kernel log";
  spec.body = check_config;
  spec.deadline_s = [](const ParamValues&, Level) { return 30.0; };
  return spec;
}

const ProbeRegistrar host_config_registrar{host_config_spec()};

}  // namespace
}  // namespace nodeaudit::host
