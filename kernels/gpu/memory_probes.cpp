// gpu.memory-bandwidth and gpu.memory-capacity.
//
// gpu.memory-bandwidth: copy (dst = src) and triad (a = b + s*c) over arrays of --buffer-size each
// (default 4 GiB, far beyond any L2), on every selected GPU at once, timed with CUDA events.
// bandwidth = bytes read + written / time: copy 2*size, triad 3*size (no write-allocate on GPUs).
// Pitfall: a buffer that fits in L2 measures the cache; one larger than free memory cannot run.
// The triad result (a = 1 + 3*2 = 7) is checked on the device after timing.
//
// gpu.memory-capacity (the OOM edge): bisection for the largest single cudaMalloc, then chunks of
// --chunk-size halved down to 2 MiB until nothing more fits. usable_bytes = the chunked total (what
// a framework's caching allocator can hold). Never managed memory. Everything is freed and free
// memory must return to where it started (within 64 MiB), else a warn finding.
#include <fmt/format.h>

#include "harness/core/stats.hpp"
#include "harness/core/units.hpp"
#include "kernels/gpu/capacity_search.hpp"
#include "kernels/gpu/cuda_common.hpp"
#include "kernels/gpu/device_kernels.hpp"
#include "kernels/gpu/peak_table.hpp"
#include "kernels/gpu/probe_bodies.hpp"

namespace nodeaudit::gpu {
namespace {

struct BandwidthBuffers {
  DeviceBuffer a, b, c, wrong;
};

struct KernelRun {
  const char* name;
  double bytes_per_array;  // arrays touched per element pass: copy 2, triad 3
};

void record_bandwidth(ProbeContext& ctx, const std::vector<int>& devices, const char* kernel, std::vector<Measurement>& per_gpu) {
  for (std::size_t g = 0; g < devices.size(); ++g) {
    const Labels labels{{"gpu", std::to_string(devices[g])}, {"kernel", kernel}};
    ctx.add_rate("bandwidth", RateKind::gb_per_s, per_gpu[g], labels);
    const double median = summarize(ctx.metrics().back().samples).median;
    if (auto pct = percent_of_peak(median, peak_memory_gbps(device_properties(devices[g]).name)))
      ctx.add_value("pct_of_peak", unit::percent, Better::higher, *pct, labels);
  }
}

Outcome bandwidth_on(ProbeContext& ctx, const std::vector<int>& devices, std::uint64_t bytes) {
  std::vector<BandwidthBuffers> buffers;
  std::vector<std::unique_ptr<TimedStream>> streams;
  const std::uint64_t floats = bytes / 16 * 4;
  for (int d : devices) {
    if (3 * bytes > device_free_bytes(d))
      return Outcome::bad_input(fmt::format("--buffer-size {}: 3 arrays do not fit in the {} free on GPU {}", format_bytes(bytes),
                                         format_bytes(static_cast<double>(device_free_bytes(d))), d));
    if (bytes < 4 * device_properties(d).l2_bytes)
      ctx.add_finding(Severity::warn, "gpu_bw.small_buffer", fmt::format("GPU {}: buffers under 4x L2: the cache is partly measured", d));
    buffers.push_back({DeviceBuffer(d, bytes), DeviceBuffer(d, bytes), DeviceBuffer(d, bytes), DeviceBuffer(d, 8)});
    streams.push_back(std::make_unique<TimedStream>(d));
    launch_fill_float(static_cast<float*>(buffers.back().b.get()), floats, 1.0f, streams.back()->stream());
    launch_fill_float(static_cast<float*>(buffers.back().c.get()), floats, 2.0f, streams.back()->stream());
  }
  for (const KernelRun k : {KernelRun{"copy", 2}, KernelRun{"triad", 3}}) {
    std::vector<Measurement> per_gpu(devices.size());
    const std::string name = k.name;
    const Measurement all = ctx.repeat(ctx.policy(), [&] {
      for (std::size_t g = 0; g < devices.size(); ++g) {
        check_cuda(cudaSetDevice(devices[g]), "cudaSetDevice");
        auto& bufs = buffers[g];
        streams[g]->start();
        if (name == "copy") launch_copy(bufs.b.get(), bufs.a.get(), floats * 4, streams[g]->stream());
        else launch_triad(static_cast<float*>(bufs.a.get()), static_cast<float*>(bufs.b.get()), static_cast<float*>(bufs.c.get()), 3.0f, floats, streams[g]->stream());
        streams[g]->stop();
      }
      double slowest = 0;
      for (std::size_t g = 0; g < devices.size(); ++g) {
        const double s = streams[g]->elapsed_s();
        per_gpu[g].seconds.push_back(s);
        per_gpu[g].work.push_back(Work{.bytes = k.bytes_per_array * static_cast<double>(floats) * 4, .elapsed_s = s});
        slowest = std::max(slowest, s);
      }
      return Work{.bytes = k.bytes_per_array * static_cast<double>(floats) * 4 * static_cast<double>(devices.size()), .elapsed_s = slowest};
    });
    for (auto& m : per_gpu) {  // keep the timed repetitions only (the first ones were warm-up)
      const auto extra = static_cast<std::ptrdiff_t>(m.seconds.size() - all.seconds.size());
      m.seconds.erase(m.seconds.begin(), m.seconds.begin() + extra);
      m.work.erase(m.work.begin(), m.work.begin() + extra);
    }
    record_bandwidth(ctx, devices, k.name, per_gpu);
    if (all.cancelled) return Outcome::interrupted();
  }
  for (std::size_t g = 0; g < devices.size(); ++g) {
    // A kernel launched into a stream of another device than the current one fails
    // (cudaErrorInvalidResourceHandle): the timing loop left the last GPU current.
    check_cuda(cudaSetDevice(devices[g]), fmt::format("cudaSetDevice({})", devices[g]));
    auto* wrong = static_cast<unsigned long long*>(buffers[g].wrong.get());
    check_cuda(cudaMemsetAsync(wrong, 0, 8, streams[g]->stream()), "cudaMemsetAsync");
    launch_count_not_equal(static_cast<float*>(buffers[g].a.get()), floats, 7.0f, wrong, streams[g]->stream());
    unsigned long long host_wrong = 0;
    check_cuda(cudaMemcpyAsync(&host_wrong, wrong, 8, cudaMemcpyDeviceToHost, streams[g]->stream()), "cudaMemcpyAsync(D2H)");
    check_cuda(cudaStreamSynchronize(streams[g]->stream()), "cudaStreamSynchronize");
    if (host_wrong)
      ctx.add_finding(Severity::fail, "gpu_bw.verify", fmt::format("GPU {}: {} of {} triad results are wrong", devices[g], host_wrong, floats));
  }
  return Outcome::ok();
}

}  // namespace

Outcome run_memory_bandwidth(ProbeContext& ctx) {
  const DeviceChoice choice = choose_devices(ctx);
  if (choice.stop) return *choice.stop;
  return guarded([&] { return bandwidth_on(ctx, choice.devices, ctx.params().size_bytes("buffer-size") / 16 * 16); });
}

Outcome run_memory_capacity(ProbeContext& ctx) {
  const DeviceChoice choice = choose_devices(ctx);
  if (choice.stop) return *choice.stop;
  return guarded([&] {
    for (int d : choice.devices) {
      check_cuda(cudaSetDevice(d), fmt::format("cudaSetDevice({})", d));
      check_cuda(cudaFree(nullptr), "cudaFree(nullptr) (context creation)");
      CudaAllocator allocator(d);
      const CapacityReport r = measure_capacity(allocator, device_properties(d).total_bytes, 2ull << 20, ctx.params().size_bytes("chunk-size"));
      if (!r.error.empty()) return Outcome::failed(r.error);
      const Labels labels{{"gpu", std::to_string(d)}};
      ctx.add_value("usable_bytes", unit::bytes, Better::higher, static_cast<double>(r.chunked_total_bytes), labels);
      ctx.add_value("largest_alloc_bytes", unit::bytes, Better::higher, static_cast<double>(r.largest_alloc_bytes), labels);
      ctx.add_value("total_bytes", unit::bytes, Better::higher, static_cast<double>(r.total_bytes), labels);
      ctx.info()["free_before_bytes"][std::to_string(d)] = r.free_before_bytes;
      ctx.info()["fragmentation_bytes"][std::to_string(d)] = r.chunked_total_bytes - std::min(r.chunked_total_bytes, r.largest_alloc_bytes);
      if (!memory_returned(r, 64ull << 20))
        ctx.add_finding(Severity::warn, "gpu_capacity.leak", fmt::format("GPU {}: free memory {} after freeing everything, {} before",
                                                                       d, format_bytes(static_cast<double>(r.free_after_bytes)),
                                                                       format_bytes(static_cast<double>(r.free_before_bytes))));
    }
    return Outcome::ok();
  });
}

}  // namespace nodeaudit::gpu
