// gpu.stress — sustained GEMM on all selected GPUs for --duration, in intervals of --interval.
//
// Per interval and GPU: sustained TFLOP/s = 2*M*N*K * products / event-timed seconds; after each
// interval two products of the same inputs are compared (burn-in check). Telemetry from NVML is
// read between batches: throttle_pct = share of readings with a clocks-costing throttle reason
// (power cap, HW slowdown, thermal, power brake). drop_pct = first -> last interval. A GPU more
// than 10% slower than the fastest is a fail finding. Memory health (volatile uncorrectable ECC count,
// retired pages, remapped rows, pending/failed remaps) is read before and after the soak; anything
// that got worse under load is a fail finding naming the before -> after counts.
// Pitfalls: the first interval includes clock ramp-up; a short --duration hides thermal throttling.
#include <chrono>

#include <fmt/format.h>

#include "cuda_common.hpp"
#include "gemm_runner.hpp"
#include "nvml.hpp"
#include "probe_bodies.hpp"
#include "stats.hpp"
#include "stress_math.hpp"
#include "units.hpp"

namespace nodeaudit::gpu {
namespace {

constexpr int batch_products = 8;

struct StressedGpu {
  std::unique_ptr<LtGemm> gemm;
  std::optional<int> nvml_index;
  Measurement intervals;  // one "repetition" per interval
  std::vector<std::optional<unsigned long long>> throttle_masks;
  std::uint64_t mismatches = 0;
  std::optional<MemoryHealth> health_before;
};

std::optional<MemoryHealth> read_health(const Nvml& nvml, const std::optional<int>& index) {
  if (!index) return std::nullopt;
  return MemoryHealth{nvml.memory_repair(*index), nvml.read(*index).ecc_volatile_uncorrected};
}

void check_health(ProbeContext& ctx, const Nvml& nvml, const std::vector<StressedGpu>& gpus) {
  for (const auto& g : gpus) {
    const auto after = read_health(nvml, g.nvml_index);
    if (!g.health_before || !after) continue;
    for (const std::string& change : memory_health_changes(*g.health_before, *after))
      ctx.add_finding(Severity::fail, "stress.memory_health", fmt::format("GPU {} during the soak: {}", g.gemm->device(), change));
  }
}

void run_interval(std::vector<StressedGpu>& gpus, const Nvml& nvml, double interval_s, const ProbeContext& ctx) {
  std::vector<double> seconds(gpus.size(), 0);
  std::vector<int> products(gpus.size(), 0);
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < interval_s && !ctx.should_stop()) {
    for (auto& g : gpus) g.gemm->stream().start(), g.gemm->enqueue(batch_products), g.gemm->stream().stop();
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      seconds[i] += gpus[i].gemm->stream().elapsed_s();
      products[i] += batch_products;
      if (gpus[i].nvml_index) gpus[i].throttle_masks.push_back(nvml.read(*gpus[i].nvml_index).throttle_reasons);
    }
  }
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    if (products[i] == 0) continue;
    gpus[i].intervals.seconds.push_back(seconds[i]);
    gpus[i].intervals.work.push_back(Work{.flops = gemm_flops(gpus[i].gemm->shape()) * products[i], .elapsed_s = seconds[i]});
    gpus[i].mismatches += gpus[i].gemm->check_repeatability();
  }
}

void record(ProbeContext& ctx, std::vector<StressedGpu>& gpus, Dtype dtype) {
  std::map<int, double> medians;
  for (auto& g : gpus) {
    const Labels labels{{"gpu", std::to_string(g.gemm->device())}};
    ctx.add_rate("sustained_tflops", RateKind::tflop_per_s, g.intervals, labels);
    const std::vector<double> per_interval = ctx.metrics().back().samples;
    if (!per_interval.empty()) medians[g.gemm->device()] = summarize(per_interval).median;
    ctx.add_value("drop_pct", unit::percent, Better::lower, drop_pct(per_interval), labels);
    if (!g.throttle_masks.empty()) ctx.add_value("throttle_pct", unit::percent, Better::lower, throttle_pct(g.throttle_masks), labels);
    if (g.mismatches)
      ctx.add_finding(Severity::fail, "stress.mismatch", fmt::format("GPU {} {}: {} elements differed between repeated products",
                                                                      g.gemm->device(), to_string(dtype), g.mismatches));
  }
  for (const auto& [gpu, slower] : slower_than_fastest(medians, 10.0))
    ctx.add_finding(Severity::fail, "stress.slow_gpu", fmt::format("GPU {} sustained {:.1f}% less than the fastest GPU of the node (limit 10%)", gpu, slower));
}

}  // namespace

Outcome run_stress(ProbeContext& ctx) {
  const Dtype dtype = *parse_dtype(ctx.params().text("dtype"));
  const std::int64_t size = ctx.params().integer("size");
  const double duration_s = ctx.params().duration_s("duration"), interval_s = ctx.params().duration_s("interval");
  if (interval_s > duration_s)
    return Outcome::bad_input(fmt::format("--interval {}: must not exceed --duration {}", format_duration(interval_s), format_duration(duration_s)));
  const DeviceChoice choice = choose_devices(ctx);
  if (choice.stop) return *choice.stop;
  return guarded([&] {
    const Nvml nvml;
    std::vector<StressedGpu> gpus;
    for (int d : choice.devices) {
      if (auto why = dtype_unsupported_reason(dtype, device_properties(d).compute_capability)) return Outcome::skipped(fmt::format("GPU {}: {}", d, *why));
      const GemmShape shape{size, size, size};
      if (gemm_bytes(shape, dtype) * 3 > device_free_bytes(d))
        return Outcome::bad_input(fmt::format("--size {}: two {} products do not fit in GPU {}'s free memory", size, to_string(dtype), d));
      gpus.push_back({std::make_unique<LtGemm>(d, dtype, shape, 2, 0x57e55ull + d), nvml_index_for(nvml, d)});
    }
    if (!nvml.available()) ctx.info()["telemetry_note"] = nvml.why_unavailable();
    for (auto& g : gpus) g.health_before = read_health(nvml, g.nvml_index);
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() + interval_s <= duration_s + 1e-9 && !ctx.should_stop())
      run_interval(gpus, nvml, interval_s, ctx);
    record(ctx, gpus, dtype);
    check_health(ctx, nvml, gpus);
    if (ctx.cancelled()) return Outcome::interrupted();
    for (const auto& f : ctx.findings())
      if (f.severity == Severity::fail) return Outcome::failed("stress found a fault (see findings)");
    return Outcome::ok();
  });
}

}  // namespace nodeaudit::gpu
