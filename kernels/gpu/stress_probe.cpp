// gpu.stress — sustained GEMM on all selected GPUs for --duration, in floor(duration / interval)
// intervals of --interval.
//
// Per interval and GPU: sustained TFLOP/s = 2*M*N*K * products / event-timed seconds of the whole
// interval; two batches stay queued on every GPU so it never idles while the host waits, and the
// interval's events bracket the continuous stream of products. After each interval two products of
// the same inputs are compared (burn-in check). Telemetry from NVML is read on its own thread
// (an NVML read takes tens of milliseconds; the GEMM loop must not wait for it): throttle_pct =
// share of readings with a clocks-costing throttle reason (power cap, HW slowdown, thermal, power
// brake). drop_pct = first -> last interval. A GPU more
// than 10% slower than the fastest is a fail finding. Memory health (volatile uncorrectable ECC count,
// retired pages, remapped rows, pending/failed remaps) is read before and after the soak; anything
// that got worse under load is a fail finding naming the before -> after counts.
// Pitfalls: the first interval includes clock ramp-up; a short --duration hides thermal throttling.
#include <array>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "harness/core/stats.hpp"
#include "harness/core/units.hpp"
#include "harness/node/nvml.hpp"
#include "kernels/gpu/cuda_common.hpp"
#include "kernels/gpu/gemm_runner.hpp"
#include "kernels/gpu/probe_bodies.hpp"
#include "kernels/gpu/stress_math.hpp"

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

// Two events per GPU marking the end of the last two queued batches: before a batch is queued the
// host waits for the one queued two batches earlier, so one batch is always running or ready while
// the host queues the next, and the queue never grows past two batches (the interval ends on time).
class BatchFences {
 public:
  explicit BatchFences(int device) : device_(device) {
    check_cuda(cudaSetDevice(device), fmt::format("cudaSetDevice({})", device));
    for (cudaEvent_t& e : events_) check_cuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  }
  ~BatchFences() {
    for (cudaEvent_t e : events_)
      if (e) cudaEventDestroy(e);
  }
  BatchFences(const BatchFences&) = delete;
  BatchFences& operator=(const BatchFences&) = delete;
  // Waits until at most one batch is still queued.
  void wait_for_room() {
    if (recorded_[next_])
      check_cuda(cudaEventSynchronize(events_[next_]), fmt::format("cudaEventSynchronize(GPU {})", device_));
  }
  void mark_batch_end(cudaStream_t stream) {
    check_cuda(cudaEventRecord(events_[next_], stream), fmt::format("cudaEventRecord(GPU {})", device_));
    recorded_[next_] = true;
    next_ ^= 1;
  }

 private:
  int device_;
  std::array<cudaEvent_t, 2> events_{};
  std::array<bool, 2> recorded_{};
  int next_ = 0;
};

// Reads each GPU's NVML clocks-event mask every `period_s` on its own thread until stopped.
class ThrottleWatch {
 public:
  ThrottleWatch(const Nvml& nvml, std::vector<std::optional<int>> indices, double period_s)
      : nvml_(nvml), indices_(std::move(indices)), masks_(indices_.size()) {
    thread_ = std::thread([this, period_s] { loop(period_s); });
  }
  ~ThrottleWatch() { stop(); }
  ThrottleWatch(const ThrottleWatch&) = delete;
  ThrottleWatch& operator=(const ThrottleWatch&) = delete;
  void stop() {
    running_ = false;
    if (thread_.joinable()) thread_.join();
  }
  // Per GPU, in the order of `indices`; call after stop().
  const std::vector<std::vector<std::optional<unsigned long long>>>& masks() const { return masks_; }

 private:
  void loop(double period_s) {
    using clock = std::chrono::steady_clock;
    while (running_) {
      const auto next = clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(period_s));
      for (std::size_t i = 0; i < indices_.size() && running_; ++i)
        if (indices_[i]) masks_[i].push_back(nvml_.read(*indices_[i]).throttle_reasons);
      while (running_ && clock::now() < next) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  const Nvml& nvml_;
  std::vector<std::optional<int>> indices_;
  std::vector<std::vector<std::optional<unsigned long long>>> masks_;
  std::atomic<bool> running_{true};
  std::thread thread_;
};

void run_interval(std::vector<StressedGpu>& gpus, std::vector<std::unique_ptr<BatchFences>>& fences, double interval_s,
                  const ProbeContext& ctx) {
  int products = 0;
  for (auto& g : gpus) g.gemm->stream().start();
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < interval_s && !ctx.should_stop()) {
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      fences[i]->wait_for_room();
      gpus[i].gemm->enqueue(batch_products);
      fences[i]->mark_batch_end(gpus[i].gemm->stream().stream());
    }
    products += batch_products;
  }
  for (auto& g : gpus) g.gemm->stream().stop();
  for (auto& g : gpus) {
    const double seconds = g.gemm->stream().elapsed_s();  // waits for every queued batch
    if (products == 0) continue;
    g.intervals.seconds.push_back(seconds);
    g.intervals.work.push_back(Work{.flops = gemm_flops(g.gemm->shape()) * products, .elapsed_s = seconds});
    g.mismatches += g.gemm->check_repeatability();
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
    std::vector<std::unique_ptr<BatchFences>> fences;
    std::vector<std::optional<int>> indices;
    for (auto& g : gpus) fences.push_back(std::make_unique<BatchFences>(g.gemm->device())), indices.push_back(g.nvml_index);
    // One product each first: its launch loads the cuBLASLt kernel (lazy loading), which would
    // otherwise sit inside the first interval's timing.
    for (auto& g : gpus) g.gemm->timed(1);
    ThrottleWatch watch(nvml, indices, 0.5);
    const int intervals = interval_count(duration_s, interval_s);
    for (int i = 0; i < intervals && !ctx.should_stop(); ++i) run_interval(gpus, fences, interval_s, ctx);
    watch.stop();
    for (std::size_t i = 0; i < gpus.size(); ++i) gpus[i].throttle_masks = watch.masks()[i];
    record(ctx, gpus, dtype);
    check_health(ctx, nvml, gpus);
    if (ctx.cancelled()) return Outcome::interrupted();
    for (const auto& f : ctx.findings())
      if (f.severity == Severity::fail) return Outcome::failed("stress found a fault (see findings)");
    return Outcome::ok();
  });
}

}  // namespace nodeaudit::gpu
