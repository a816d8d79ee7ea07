// Host memory placed on one NUMA node, for copies between the host and a GPU attached to that node.
// A host buffer on the far socket makes every PCIe transfer cross the inter-socket link as well,
// which can cost a large share of the H2D rate and is neither the GPU's nor the link's fault.
// Host-only (mmap, mbind, get_mempolicy), so it is tested on a CPU; gpu.pcie pins it with
// cudaHostRegister for the pinned figures.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nodeaudit::gpu {

// "0000:3B:00.0" (CUDA) or "00000000:3B:00.0" (NVML) -> "0000:3b:00.0", the sysfs spelling;
// std::nullopt when the text is not a PCI address.
std::optional<std::string> sysfs_pci_address(const std::string& bus_id);

// The NUMA node of a PCI device from <pci_devices_dir>/<address>/numa_node (the kernel writes -1
// when the platform does not say); std::nullopt when unknown.
std::optional<int> pci_device_numa_node(const std::string& pci_devices_dir, const std::string& bus_id);

// Whether NUMA node `node` has CPUs, from <node_root>/node<N>/cpulist (empty for a memory-only
// node); std::nullopt when the file cannot be read. On GH200/GB200 the GPU's own memory appears
// as such a memory-only node: host buffers placed there would live in the GPU.
std::optional<bool> numa_node_has_cpus(const std::string& node_root, int node);

// Where a GPU's host buffers belong: the first of the GPU's CPU-affinity nodes (NVML memory
// affinity) that is not known to be memory-only, else its PCI device's node (sysfs) on the same
// terms; std::nullopt = leave placement to the kernel. `source` says which one was taken.
struct HostNodeChoice {
  std::optional<int> node;
  std::string source;  // "NVML memory affinity", "sysfs PCI device", or why none
};
HostNodeChoice host_node_for_gpu(const std::vector<int>& affinity_nodes, std::optional<int> pci_node, const std::string& node_root);

// The NUMA node that holds the page at `address` (get_mempolicy), or std::nullopt.
std::optional<int> numa_node_of(const void* address);

// True when mbind failing with `errno_value` means "this process may not choose placement" rather
// than a bad request: EPERM (Docker's and containerd's default seccomp profiles refuse mbind and
// set_mempolicy without CAP_SYS_NICE) and ENOSYS (a kernel without NUMA support). The memory is
// then used where the kernel puts it, and the caller says so; EINVAL (no such node) stays an error.
bool mbind_refusal_means_unplaced(int errno_value);

// Anonymous memory, preferring `node` (MPOL_PREFERRED: a node short of memory falls back rather
// than killing the process), touched page by page so it is placed before anyone times it.
// `placed_node` reports where the first and last pages really landed (nullopt if they differ or
// cannot be read), so a figure never claims a placement it did not get.
class NodeMemory {
 public:
  // Empty `error` on success; else what failed ("mbind(node 7): Invalid argument"). A refused
  // mbind (see mbind_refusal_means_unplaced) is not an error: the memory is returned unplaced and
  // placement_not_applied() says why.
  static NodeMemory allocate(std::uint64_t bytes, std::optional<int> node, std::string& error);
  NodeMemory() = default;
  ~NodeMemory();
  NodeMemory(NodeMemory&& other) noexcept;
  NodeMemory& operator=(NodeMemory&& other) noexcept;
  NodeMemory(const NodeMemory&) = delete;
  NodeMemory& operator=(const NodeMemory&) = delete;

  void* data() const { return data_; }
  std::uint64_t bytes() const { return bytes_; }
  std::optional<int> placed_node() const;
  // Why the requested node was not applied ("mbind(node 1) refused: Operation not permitted ...");
  // empty when it was applied or none was requested.
  const std::string& placement_not_applied() const { return placement_not_applied_; }

 private:
  void* data_ = nullptr;
  std::uint64_t bytes_ = 0;
  std::string placement_not_applied_;
};

}  // namespace nodeaudit::gpu
