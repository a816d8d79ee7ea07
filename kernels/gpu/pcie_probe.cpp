// gpu.pcie — host-to-device and device-to-host copies over PCIe.
//
// h2d_bandwidth / d2h_bandwidth = --transfer-size / time of one cudaMemcpyAsync (CUDA events), with
// pinned (cudaHostAlloc) and pageable (plain malloc, touched first) host buffers, for each GPU alone
// (mode=single) and for all selected GPUs at once (mode=concurrent: GPUs behind one PCIe switch
// share its uplink and show it only then). The link's maximum generation and width come from NVML;
// h2d_pct_of_link / d2h_pct_of_link = median / encoded bandwidth of one direction of that link
// (Gen5 x16: 32 GT/s * 16 * 128/130 / 8 = 63.0 GB/s), the datasheet ceiling, not a guess.
// Pitfalls: pageable copies are staged through a driver buffer and are CPU-bound; a host buffer on
// the far socket also crosses the inter-socket link, so both host buffers are placed on the CPU node
// nearest the GPU (NVML memory affinity, else sysfs; a memory-only node such as a GH200's HBM is
// never chosen) and the node they really landed on is recorded per GPU in info. In a
// container whose seccomp profile refuses mbind the buffers are used unplaced, and info says so
// (placement_not_applied) rather than losing the H2D/D2H figures.
// A pageable cudaMemcpyAsync returns only once the driver has staged (H2D) or finished (D2H) the
// copy, so issued from one thread the GPUs would take turns: in concurrent mode each GPU's copy is
// issued from its own thread.
#include <cstring>
#include <exception>
#include <thread>

#include <fmt/format.h>

#include "harness/core/stats.hpp"
#include "harness/core/units.hpp"
#include "harness/node/nvml.hpp"
#include "kernels/gpu/cuda_common.hpp"
#include "kernels/gpu/gpu_config_rules.hpp"
#include "kernels/gpu/numa_memory.hpp"
#include "kernels/gpu/probe_bodies.hpp"

namespace nodeaudit::gpu {
namespace {

// NUMA-placed host memory; the pinned one is page-locked with cudaHostRegister.
struct HostBuffer {
  NodeMemory memory;
  bool registered = false;
  void* data() const { return memory.data(); }
  ~HostBuffer() {
    if (registered) cudaHostUnregister(memory.data());
  }
};
struct Endpoint {
  int device = 0;
  DeviceBuffer device_buffer;
  HostBuffer pinned, pageable;
  std::unique_ptr<TimedStream> stream;
  std::optional<double> link_gbps;  // encoded bandwidth of one direction at the link's maximum gen x width
};

// Queues one timed copy on the endpoint's stream (the calling thread's current device is set).
void issue_copy(Endpoint& e, bool to_device, bool pinned, std::uint64_t bytes) {
  check_cuda(cudaSetDevice(e.device), fmt::format("cudaSetDevice({})", e.device));
  void* host = pinned ? e.pinned.data() : e.pageable.data();
  e.stream->start();
  check_cuda(to_device ? cudaMemcpyAsync(e.device_buffer.get(), host, bytes, cudaMemcpyHostToDevice, e.stream->stream())
                       : cudaMemcpyAsync(host, e.device_buffer.get(), bytes, cudaMemcpyDeviceToHost, e.stream->stream()),
             fmt::format("cudaMemcpyAsync({}, {} bytes, GPU {})", to_device ? "H2D" : "D2H", bytes, e.device));
  e.stream->stop();
}

// One copy per endpoint; several endpoints each get their own host thread so that pageable copies,
// which block the issuing thread, overlap. A failure in any thread is rethrown here.
void issue_copies(const std::vector<Endpoint*>& ends, bool to_device, bool pinned, std::uint64_t bytes) {
  if (ends.size() == 1) return issue_copy(*ends.front(), to_device, pinned, bytes);
  std::vector<std::exception_ptr> errors(ends.size());
  std::vector<std::thread> threads;
  for (std::size_t g = 0; g < ends.size(); ++g)
    threads.emplace_back([&, g] {
      try {
        issue_copy(*ends[g], to_device, pinned, bytes);
      } catch (...) {
        errors[g] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& error : errors)
    if (error) std::rethrow_exception(error);
}

Outcome copy_measurement(ProbeContext& ctx, std::vector<Endpoint*> ends, bool to_device, bool pinned, const char* mode,
                         std::uint64_t bytes) {
  std::vector<Measurement> per_gpu(ends.size());
  const Measurement all = ctx.repeat(ctx.policy(), [&] {
    issue_copies(ends, to_device, pinned, bytes);
    double slowest = 0;
    for (std::size_t g = 0; g < ends.size(); ++g) {
      const double s = ends[g]->stream->elapsed_s();
      per_gpu[g].seconds.push_back(s);
      per_gpu[g].work.push_back(Work{.bytes = static_cast<double>(bytes), .elapsed_s = s});
      slowest = std::max(slowest, s);
    }
    return Work{.bytes = static_cast<double>(bytes * ends.size()), .elapsed_s = slowest};
  });
  for (std::size_t g = 0; g < ends.size(); ++g) {
    auto& m = per_gpu[g];
    const auto extra = static_cast<std::ptrdiff_t>(m.seconds.size() - all.seconds.size());
    m.seconds.erase(m.seconds.begin(), m.seconds.begin() + extra);
    m.work.erase(m.work.begin(), m.work.begin() + extra);
    const Labels labels{{"gpu", std::to_string(ends[g]->device)}, {"memory", pinned ? "pinned" : "pageable"}, {"mode", mode}};
    ctx.add_rate(to_device ? "h2d_bandwidth" : "d2h_bandwidth", RateKind::gb_per_s, m, labels);
    const std::vector<double>& samples = ctx.metrics().back().samples;
    if (ends[g]->link_gbps && !samples.empty())
      ctx.add_value(to_device ? "h2d_pct_of_link" : "d2h_pct_of_link", unit::percent, Better::higher,
                    summarize(samples).median / *ends[g]->link_gbps * 100.0, labels);
  }
  return all.cancelled ? Outcome::interrupted() : Outcome::ok();
}

// The CPU node nearest the GPU, never nvmlDeviceGetNumaNodeId: that is the GPU's own memory as a
// NUMA node on GH200/GB200, and host buffers bound there would sit in GPU memory.
HostNodeChoice gpu_host_node(const Nvml& nvml, int device) {
  std::vector<int> affinity;
  if (const auto index = nvml_index_for(nvml, device)) affinity = nvml.device_info(*index).cpu_numa_nodes;
  return host_node_for_gpu(affinity, pci_device_numa_node("/sys/bus/pci/devices", device_properties(device).pci_bus_id),
                           "/sys/devices/system/node");
}

void record_link(ProbeContext& ctx, const Nvml& nvml, Endpoint& e) {
  const auto index = nvml_index_for(nvml, e.device);
  if (!index) return;
  const NvmlDeviceInfo info = nvml.device_info(*index);
  auto& link = ctx.info()["links"][std::to_string(e.device)];
  if (info.pcie_gen_max) link["gen_max"] = *info.pcie_gen_max;
  if (info.pcie_width_max) link["width_max"] = *info.pcie_width_max;
  if (info.pcie_gen_max && info.pcie_width_max) e.link_gbps = pcie_link_gbps(*info.pcie_gen_max, *info.pcie_width_max);
  if (e.link_gbps) link["encoded_gbps_per_direction"] = *e.link_gbps;
}

// Host buffers on the GPU's node; info.host_memory.<gpu> says which node was asked for and which
// the pages landed on (null = unknown), so a figure never claims a placement it did not get.
std::string place_host_buffers(ProbeContext& ctx, Endpoint& e, const HostNodeChoice& choice, std::uint64_t bytes) {
  const std::optional<int> node = choice.node;
  std::string error;
  e.pinned.memory = NodeMemory::allocate(bytes, node, error);
  if (error.empty()) e.pageable.memory = NodeMemory::allocate(bytes, node, error);
  if (!error.empty()) return fmt::format("--transfer-size {}: host buffer: {}", bytes, error);
  check_cuda(cudaHostRegister(e.pinned.data(), bytes, cudaHostRegisterPortable), fmt::format("cudaHostRegister({} bytes)", bytes));
  e.pinned.registered = true;
  std::memset(e.pinned.data(), 0xa5, bytes);
  auto& placement = ctx.info()["host_memory"][std::to_string(e.device)];
  placement["requested_numa_node"] = node ? nlohmann::json(*node) : nlohmann::json();
  placement["numa_node_source"] = choice.source;
  const auto placed = e.pinned.memory.placed_node();
  placement["placed_numa_node"] = placed ? nlohmann::json(*placed) : nlohmann::json();
  if (!e.pinned.memory.placement_not_applied().empty())
    placement["placement_not_applied"] = e.pinned.memory.placement_not_applied();
  return {};
}

}  // namespace

Outcome run_pcie(ProbeContext& ctx) {
  const DeviceChoice choice = choose_devices(ctx);
  if (choice.stop) return *choice.stop;
  const std::uint64_t bytes = ctx.params().size_bytes("transfer-size");
  return guarded([&] {
    const Nvml nvml;
    std::vector<std::unique_ptr<Endpoint>> ends;
    for (int d : choice.devices) {
      if (bytes > device_free_bytes(d))
        return Outcome::bad_input(fmt::format("--transfer-size {}: more than the {} free on GPU {}", format_bytes(static_cast<double>(bytes)),
                                              format_bytes(static_cast<double>(device_free_bytes(d))), d));
      auto e = std::make_unique<Endpoint>();
      e->device = d;
      e->device_buffer = DeviceBuffer(d, bytes);
      if (std::string error = place_host_buffers(ctx, *e, gpu_host_node(nvml, d), bytes); !error.empty())
        return Outcome::failed(error);
      e->stream = std::make_unique<TimedStream>(d);
      record_link(ctx, nvml, *e);
      ends.push_back(std::move(e));
    }
    std::vector<Endpoint*> every;
    for (auto& e : ends) every.push_back(e.get());
    for (bool pinned : {true, false})
      for (bool to_device : {true, false}) {
        for (Endpoint* e : every)
          if (Outcome o = copy_measurement(ctx, {e}, to_device, pinned, "single", bytes); o.status != Status::ok) return o;
        if (every.size() > 1)
          if (Outcome o = copy_measurement(ctx, every, to_device, pinned, "concurrent", bytes); o.status != Status::ok) return o;
      }
    return Outcome::ok();
  });
}

}  // namespace nodeaudit::gpu
