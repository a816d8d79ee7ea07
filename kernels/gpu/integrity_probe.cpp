// gpu.memory-integrity — memtest-style patterns over all the memory the capacity search can hold.
//
// Per GPU: allocate in chunks (1 GiB halved down to 2 MiB) until all but a margin of the free memory
// is held (integrity_margin_bytes, 256 MiB: the driver's own later allocations need room), then for each
// pass and each pattern (own address, walking ones, seeded random) write every word on the device,
// read every word back and count the words that differ. bytes_tested = bytes held * patterns *
// passes; errors = bad words. The first bad addresses go into the finding.
// info.untested_bytes.<gpu> = the device's total memory - bytes held: the margin, the CUDA context and
// whatever other processes hold, none of which the patterns reach.
// Pitfalls: testing a small corner misses bad rows (so all allocatable memory but the margin is used); the
// random seed changes every pass so a stuck bit that matches one pass is caught in the next;
// with lazy module loading a kernel's first launch needs device memory, so the kernels are loaded
// before the memory is taken; the held memory is released however the probe ends (RAII).
// Passes continue until --passes or --duration, whichever comes first (soak: the budget).
#include <chrono>

#include <fmt/format.h>

#include "harness/core/units.hpp"
#include "kernels/gpu/cuda_common.hpp"
#include "kernels/gpu/device_kernels.hpp"
#include "kernels/gpu/probe_bodies.hpp"

namespace nodeaudit::gpu {
namespace {

struct GpuTest {
  int device;
  std::unique_ptr<CudaAllocator> allocator;
  HeldChunks held;  // after `allocator`: released before the allocator goes
  std::unique_ptr<TimedStream> stream;
  DeviceBuffer counters;
  PatternErrors errors;
  double bytes_tested = 0;
};

void run_pattern(GpuTest& t, Pattern pattern, std::uint64_t seed) {
  const ChunkedAllocation& held = t.held.chunks();
  std::uint64_t first_index = 0;
  for (std::size_t i = 0; i < held.pointers.size(); ++i) {
    const std::uint64_t words = held.sizes[i] / 8;
    launch_write_pattern(static_cast<std::uint64_t*>(held.pointers[i]), words, first_index, pattern, seed, t.stream->stream());
    first_index += words;
  }
  first_index = 0;
  for (std::size_t i = 0; i < held.pointers.size(); ++i) {
    const std::uint64_t words = held.sizes[i] / 8;
    launch_check_pattern(static_cast<const std::uint64_t*>(held.pointers[i]), words, first_index, pattern, seed,
                         static_cast<unsigned long long*>(t.counters.get()), t.stream->stream());
    first_index += words;
  }
}

void collect(GpuTest& t) {
  check_cuda(cudaSetDevice(t.device), fmt::format("cudaSetDevice({})", t.device));
  unsigned long long host[1 + max_reported_addresses] = {};
  check_cuda(cudaMemcpyAsync(host, t.counters.get(), sizeof host, cudaMemcpyDeviceToHost, t.stream->stream()), "cudaMemcpyAsync(D2H)");
  check_cuda(cudaStreamSynchronize(t.stream->stream()), fmt::format("cudaStreamSynchronize(GPU {})", t.device));
  PatternErrors found;
  found.errors = host[0];
  for (unsigned long long i = 0; i < std::min<unsigned long long>(host[0], max_reported_addresses); ++i) found.first_addresses.push_back(host[1 + i]);
  merge_errors(t.errors, found);
  check_cuda(cudaMemsetAsync(t.counters.get(), 0, sizeof host, t.stream->stream()), "cudaMemsetAsync");
}

}  // namespace

Outcome run_memory_integrity(ProbeContext& ctx) {
  const DeviceChoice choice = choose_devices(ctx);
  if (choice.stop) return *choice.stop;
  return guarded([&] {
    std::vector<GpuTest> tests;
    for (int d : choice.devices) {
      GpuTest t{d, std::make_unique<CudaAllocator>(d)};
      t.stream = std::make_unique<TimedStream>(d);
      t.counters = DeviceBuffer(d, 8 * (1 + max_reported_addresses));
      // On the probe's own stream: a cudaMemset on the legacy stream is not ordered with a
      // non-blocking stream. Synchronized so the device work is done before the memory is taken.
      check_cuda(cudaMemsetAsync(t.counters.get(), 0, t.counters.bytes(), t.stream->stream()), "cudaMemsetAsync");
      check_cuda(cudaStreamSynchronize(t.stream->stream()), "cudaStreamSynchronize");
      load_kernels_on_current_device();
      const std::uint64_t limit_bytes = integrity_allocation_limit(t.allocator->free_bytes(), integrity_margin_bytes);
      t.held = HeldChunks(*t.allocator, allocate_in_chunks(*t.allocator, 1ull << 30, 2ull << 20, limit_bytes));
      if (!t.allocator->error().empty()) return Outcome::failed(t.allocator->error());
      if (t.held.chunks().total_bytes == 0)
        return Outcome::skipped(fmt::format("GPU {}: {} free, no more than the {} margin the test leaves to the driver", d,
                                            format_bytes(static_cast<double>(t.allocator->free_bytes())),
                                            format_bytes(static_cast<double>(integrity_margin_bytes))));
      tests.push_back(std::move(t));
    }
    const auto start = std::chrono::steady_clock::now();
    const double budget_s = ctx.round_share_s(ctx.params().duration_s("duration"));  // the quick level splits it over its rounds
    std::int64_t passes = 0;
    for (; passes < ctx.params().integer("passes") && !ctx.should_stop(); ++passes) {
      for (Pattern p : all_patterns) {
        for (auto& t : tests) {
          check_cuda(cudaSetDevice(t.device), "cudaSetDevice");
          run_pattern(t, p, splitmix64(static_cast<std::uint64_t>(passes) * 3 + static_cast<std::uint64_t>(p)));
        }
        for (auto& t : tests) collect(t), t.bytes_tested += static_cast<double>(t.held.chunks().total_bytes);
      }
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > budget_s) { ++passes; break; }
    }
    ctx.info()["passes"] = passes;
    ctx.info()["margin_bytes"] = integrity_margin_bytes;
    for (auto& t : tests) {
      const Labels labels{{"gpu", std::to_string(t.device)}};
      ctx.add_value("bytes_tested", unit::bytes, Better::higher, t.bytes_tested, labels);
      ctx.add_value("errors", unit::count, Better::lower, static_cast<double>(t.errors.errors), labels);
      const std::uint64_t held_bytes = t.held.chunks().total_bytes, total_bytes = device_properties(t.device).total_bytes;
      const std::uint64_t untested_bytes = total_bytes > held_bytes ? total_bytes - held_bytes : 0;
      ctx.info()["bytes_held"][std::to_string(t.device)] = held_bytes;
      ctx.info()["untested_bytes"][std::to_string(t.device)] = untested_bytes;
      ctx.add_finding(Severity::info, "gpu_memory.untested",
                      fmt::format("GPU {}: {} of {} not tested: the {} margin left free for the driver, the CUDA context "
                                  "and other processes' memory",
                                  t.device, format_bytes(static_cast<double>(untested_bytes)),
                                  format_bytes(static_cast<double>(total_bytes)),
                                  format_bytes(static_cast<double>(integrity_margin_bytes))));
      if (t.errors.errors) {
        std::string addresses;
        for (auto a : t.errors.first_addresses) addresses += fmt::format("{}0x{:x}", addresses.empty() ? "" : ", ", a);
        ctx.add_finding(Severity::fail, "gpu_memory.errors", fmt::format("GPU {}: {} words read back wrong; first at {}", t.device, t.errors.errors, addresses));
      }
      t.held.release();
    }
    if (ctx.cancelled()) return Outcome::interrupted();
    for (const auto& t : tests)
      if (t.errors.errors) return Outcome::failed("memory patterns read back wrong (see findings)");
    return Outcome::ok();
  });
}

}  // namespace nodeaudit::gpu
