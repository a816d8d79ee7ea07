#include "kernels/gpu/numa_memory.hpp"

#include <linux/mempolicy.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace nodeaudit::gpu {

std::optional<std::string> sysfs_pci_address(const std::string& bus_id) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  char tail = 0;
  if (std::sscanf(bus_id.c_str(), "%x:%x:%x.%x%c", &domain, &bus, &device, &function, &tail) != 4) return std::nullopt;
  if (domain > 0xffff || bus > 0xff || device > 0x1f || function > 0x7) return std::nullopt;
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, device, function);
}

std::optional<int> pci_device_numa_node(const std::string& pci_devices_dir, const std::string& bus_id) {
  const auto address = sysfs_pci_address(bus_id);
  if (!address) return std::nullopt;
  std::ifstream in(pci_devices_dir + "/" + *address + "/numa_node");
  int node = -1;
  if (!(in >> node) || node < 0) return std::nullopt;
  return node;
}

std::optional<bool> numa_node_has_cpus(const std::string& node_root, int node) {
  std::ifstream in(fmt::format("{}/node{}/cpulist", node_root, node));
  if (!in) return std::nullopt;
  std::string cpus;
  std::getline(in, cpus);
  return cpus.find_first_of("0123456789") != std::string::npos;
}

HostNodeChoice host_node_for_gpu(const std::vector<int>& affinity_nodes, std::optional<int> pci_node, const std::string& node_root) {
  for (int node : affinity_nodes)
    if (numa_node_has_cpus(node_root, node).value_or(true)) return {node, "NVML memory affinity"};
  if (pci_node && numa_node_has_cpus(node_root, *pci_node).value_or(true)) return {pci_node, "sysfs PCI device"};
  return {std::nullopt, "neither NVML memory affinity nor the PCI device's sysfs entry names a node with CPUs"};
}

std::optional<int> numa_node_of(const void* address) {
  int node = -1;
  if (syscall(SYS_get_mempolicy, &node, nullptr, 0, address, MPOL_F_NODE | MPOL_F_ADDR) != 0 || node < 0) return std::nullopt;
  return node;
}

bool mbind_refusal_means_unplaced(int errno_value) { return errno_value == EPERM || errno_value == ENOSYS; }

NodeMemory NodeMemory::allocate(std::uint64_t bytes, std::optional<int> node, std::string& error) {
  NodeMemory memory;
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (data == MAP_FAILED) {
    error = fmt::format("mmap({} bytes): {}", bytes, std::strerror(errno));
    return memory;
  }
  memory.data_ = data, memory.bytes_ = bytes;
  if (node) {
    constexpr unsigned bits_per_word = 8 * sizeof(unsigned long);
    std::vector<unsigned long> mask(static_cast<std::size_t>(*node) / bits_per_word + 1, 0);
    mask[static_cast<std::size_t>(*node) / bits_per_word] = 1ul << (static_cast<unsigned>(*node) % bits_per_word);
    // maxnode counts bits; the kernel ignores the last one, hence the +1.
    if (syscall(SYS_mbind, data, bytes, MPOL_PREFERRED, mask.data(), mask.size() * bits_per_word + 1, 0) != 0) {
      const int refused = errno;
      if (!mbind_refusal_means_unplaced(refused)) {
        error = fmt::format("mbind(node {}): {}", *node, std::strerror(refused));
        return NodeMemory{};
      }
      memory.placement_not_applied_ =
          fmt::format("mbind(node {}) refused: {} (a container's default seccomp profile refuses it without "
                      "CAP_SYS_NICE; a kernel without NUMA support lacks it): the pages lie where the kernel put them",
                      *node, std::strerror(refused));
    }
  }
  const long page = sysconf(_SC_PAGESIZE);
  auto* bytes_ptr = static_cast<unsigned char*>(data);
  for (std::uint64_t offset = 0; offset < bytes; offset += static_cast<std::uint64_t>(page)) bytes_ptr[offset] = 0x5a;
  return memory;
}

NodeMemory::~NodeMemory() {
  if (data_) munmap(data_, bytes_);
}

NodeMemory::NodeMemory(NodeMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      placement_not_applied_(std::exchange(other.placement_not_applied_, {})) {}

NodeMemory& NodeMemory::operator=(NodeMemory&& other) noexcept {
  if (this != &other) {
    if (data_) munmap(data_, bytes_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    placement_not_applied_ = std::exchange(other.placement_not_applied_, {});
  }
  return *this;
}

std::optional<int> NodeMemory::placed_node() const {
  if (!data_ || bytes_ == 0) return std::nullopt;
  const auto first = numa_node_of(data_);
  const auto last = numa_node_of(static_cast<const unsigned char*>(data_) + bytes_ - 1);
  if (!first || first != last) return std::nullopt;
  return first;
}

}  // namespace nodeaudit::gpu
