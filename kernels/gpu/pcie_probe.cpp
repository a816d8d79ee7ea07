// gpu.pcie — host-to-device and device-to-host copies over PCIe.
//
// h2d_bandwidth / d2h_bandwidth = --transfer-size / time of one cudaMemcpyAsync (CUDA events), with
// pinned (cudaHostAlloc) and pageable (plain malloc, touched first) host buffers, for each GPU alone
// (mode=single) and for all selected GPUs at once (mode=concurrent: GPUs behind one PCIe switch
// share its uplink and show it only then). The link's generation and width from NVML and the
// link's encoded bandwidth go into info so the figure can be judged against the link.
// Pitfalls: pageable copies are staged through a driver buffer and are CPU-bound; the host buffer
// should sit on the GPU's NUMA node (the node is recorded; buffers are not bound to it here).
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "config_rules.hpp"
#include "cuda_common.hpp"
#include "nvml.hpp"
#include "probe_bodies.hpp"

namespace nodeaudit::gpu {
namespace {

struct HostBuffer {
  void* data = nullptr;
  bool pinned = false;
  ~HostBuffer() {
    if (pinned) cudaFreeHost(data);
    else std::free(data);
  }
};

struct Endpoint {
  int device;
  DeviceBuffer device_buffer;
  HostBuffer pinned, pageable;
  std::unique_ptr<TimedStream> stream;
};

Outcome copy_measurement(ProbeContext& ctx, std::vector<Endpoint*> ends, bool to_device, bool pinned, const char* mode,
                         std::uint64_t bytes) {
  std::vector<Measurement> per_gpu(ends.size());
  const Measurement all = ctx.repeat(ctx.policy(), [&] {
    for (Endpoint* e : ends) {
      check_cuda(cudaSetDevice(e->device), "cudaSetDevice");
      void* host = pinned ? e->pinned.data : e->pageable.data;
      e->stream->start();
      check_cuda(to_device ? cudaMemcpyAsync(e->device_buffer.get(), host, bytes, cudaMemcpyHostToDevice, e->stream->stream())
                           : cudaMemcpyAsync(host, e->device_buffer.get(), bytes, cudaMemcpyDeviceToHost, e->stream->stream()),
                 fmt::format("cudaMemcpyAsync({}, {} bytes, GPU {})", to_device ? "H2D" : "D2H", bytes, e->device));
      e->stream->stop();
    }
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
    ctx.add_rate(to_device ? "h2d_bandwidth" : "d2h_bandwidth", RateKind::gb_per_s, m,
                 {{"gpu", std::to_string(ends[g]->device)}, {"memory", pinned ? "pinned" : "pageable"}, {"mode", mode}});
  }
  return all.cancelled ? Outcome::interrupted() : Outcome::ok();
}

void record_links(ProbeContext& ctx, const std::vector<int>& devices) {
  const Nvml nvml;
  for (int d : devices) {
    const auto index = nvml_index_for(nvml, d);
    if (!index) continue;
    const NvmlDeviceInfo info = nvml.device_info(*index);
    auto& link = ctx.info()["links"][std::to_string(d)];
    if (info.pcie_gen_max) link["gen_max"] = *info.pcie_gen_max;
    if (info.pcie_width_max) link["width_max"] = *info.pcie_width_max;
    if (info.numa_node) link["numa_node"] = *info.numa_node;
    if (info.pcie_gen_max && info.pcie_width_max)
      if (auto gbps = pcie_link_gbps(*info.pcie_gen_max, *info.pcie_width_max)) link["encoded_gbps_per_direction"] = *gbps;
  }
}

}  // namespace

Outcome run_pcie(ProbeContext& ctx) {
  const DeviceChoice choice = choose_devices(ctx);
  if (choice.stop) return *choice.stop;
  const std::uint64_t bytes = ctx.params().size_bytes("transfer-size");
  return guarded([&] {
    std::vector<std::unique_ptr<Endpoint>> ends;
    for (int d : choice.devices) {
      auto e = std::make_unique<Endpoint>(Endpoint{d, DeviceBuffer(d, bytes)});
      check_cuda(cudaHostAlloc(&e->pinned.data, bytes, cudaHostAllocPortable), fmt::format("cudaHostAlloc({} bytes)", bytes));
      e->pinned.pinned = true;
      e->pageable.data = std::malloc(bytes);
      if (!e->pageable.data) return Outcome::failed(fmt::format("--transfer-size {}: host malloc failed", bytes));
      std::memset(e->pageable.data, 0x5a, bytes);
      std::memset(e->pinned.data, 0xa5, bytes);
      e->stream = std::make_unique<TimedStream>(d);
      ends.push_back(std::move(e));
    }
    record_links(ctx, choice.devices);
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
