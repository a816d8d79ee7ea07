// gpu.gemm — cuBLASLt matmul per dtype on every selected GPU at once.
//
// Formula: tflops = 2*M*N*K * products / time / 1e12, time from CUDA events around a batch of
// products (about 10 ms of work, so the launch latency inside the timing is negligible) after warm-up.
// Per dtype a short shape search (0.5x, 1x, 1.5x the base size and tall/wide 2x variants, all
// multiples of 256) keeps the shape with the best mean rate over the GPUs; that shape is then
// measured under the level's repetition policy. pct_of_peak uses the datasheet table (unknown
// device: omitted); spread_pct = (fastest - slowest) / fastest over the GPUs.
// Pitfalls: zeros make tensor cores draw less power and run faster (inputs are random); L2 reuse
// (two buffer sets rotate); clocks ramp (warm-up); fp8 needs sm_89+ and the TN layout.
// Correctness after timing: 8x8 elements of one product against a float64 CPU reference within the
// dtype's tolerance, and two repeated products compared element by element; any mismatch is a fail.
#include <algorithm>
#include <map>
#include <optional>
#include <memory>

#include <fmt/format.h>

#include "harness/core/stats.hpp"
#include "kernels/gpu/cuda_common.hpp"
#include "kernels/gpu/gemm_runner.hpp"
#include "kernels/gpu/peak_table.hpp"
#include "kernels/gpu/probe_bodies.hpp"
#include "kernels/gpu/stress_math.hpp"

namespace nodeaudit::gpu {
namespace {

constexpr int buffer_copies = 2;
constexpr int search_repetitions = 3;
constexpr double timing_target_s = 0.01;

using Runners = std::vector<std::unique_ptr<LtGemm>>;

Runners make_runners(const std::vector<int>& devices, Dtype dtype, const GemmShape& shape) {
  Runners runners;
  for (int d : devices) runners.push_back(std::make_unique<LtGemm>(d, dtype, shape, buffer_copies, 0x5eed0000ull + d));
  return runners;
}

// Runs `products` products on every GPU at once; returns each GPU's event-timed seconds.
std::vector<double> products_on_all(Runners& runners, int products) {
  for (auto& r : runners) {
    r->stream().start();
    r->enqueue(products);
    r->stream().stop();
  }
  std::vector<double> seconds;
  for (auto& r : runners) seconds.push_back(r->stream().elapsed_s());
  return seconds;
}

// Warm-up on every GPU; returns the products per timed repetition. The first product's launch
// loads the cuBLASLt kernel (lazy loading) inside its timing, so the batch is sized on the second.
int warm_up(Runners& runners) {
  products_on_all(runners, 1);
  const std::vector<double> seconds = products_on_all(runners, 1);
  return products_per_timing(*std::max_element(seconds.begin(), seconds.end()), timing_target_s);
}

// The candidate with the best mean rate; std::nullopt when stopped first or when cuBLASLt has an
// algorithm for none of them (each such candidate's reason is in the search log).
std::optional<GemmShape> search_shape(const std::vector<int>& devices, Dtype dtype, const std::vector<GemmShape>& candidates,
                                      ProbeContext& ctx, nlohmann::json& search_log) {
  std::optional<GemmShape> best;
  double best_tflops = -1;
  for (const GemmShape& shape : candidates) {
    if (ctx.should_stop()) break;
    Runners runners;
    try {
      runners = make_runners(devices, dtype, shape);
    } catch (const NoAlgorithm& e) {
      search_log[to_string(shape)] = e.what();
      continue;
    }
    const int products = warm_up(runners);
    double sum_tflops = 0;
    for (int rep = 0; rep < search_repetitions; ++rep)
      for (double s : products_on_all(runners, products))
        if (s > 0) sum_tflops += gemm_flops(shape) * products / s / 1e12;
    const double mean = sum_tflops / (search_repetitions * static_cast<double>(devices.size()));
    search_log[to_string(shape)] = mean;
    if (mean > best_tflops) best_tflops = mean, best = shape;
  }
  return best;
}

void record_rates(ProbeContext& ctx, Dtype dtype, const std::vector<int>& devices,
                  const std::vector<Measurement>& per_gpu) {
  std::vector<double> medians;
  for (std::size_t g = 0; g < devices.size(); ++g) {
    const Labels labels{{"gpu", std::to_string(devices[g])}, {"dtype", to_string(dtype)}};
    ctx.add_rate("tflops", RateKind::tflop_per_s, per_gpu[g], labels);
    const double median = ctx.metrics().back().samples.empty() ? 0 : summarize(ctx.metrics().back().samples).median;
    medians.push_back(median);
    const auto pct = percent_of_peak(median, peak_tflops(device_properties(devices[g]).name, dtype));
    if (pct) ctx.add_value("pct_of_peak", unit::percent, Better::higher, *pct, labels);
  }
  ctx.add_value("spread_pct", unit::percent, Better::lower, spread_pct(medians), {{"dtype", to_string(dtype)}});
}

void verify(ProbeContext& ctx, Dtype dtype, Runners& runners) {
  for (auto& r : runners) {
    const std::uint64_t wrong = r->check_against_reference(8);
    const std::uint64_t unstable = r->check_repeatability();
    if (wrong)
      ctx.add_finding(Severity::fail, "gemm.mismatch",
                      fmt::format("GPU {} {}: {} of 64 checked elements differ from the float64 reference beyond the {} tolerance",
                                  r->device(), to_string(dtype), wrong, to_string(dtype)));
    if (unstable)
      ctx.add_finding(Severity::fail, "gemm.unrepeatable",
                      fmt::format("GPU {} {}: {} elements differ between two products of the same inputs", r->device(),
                                  to_string(dtype), unstable));
  }
}

// Measures one dtype on the GPUs that support it; returns false when interrupted.
bool measure_dtype(ProbeContext& ctx, Dtype dtype, const std::vector<int>& all_devices) {
  std::vector<int> devices;
  std::uint64_t budget = UINT64_MAX;
  for (int d : all_devices) {
    if (auto why = dtype_unsupported_reason(dtype, device_properties(d).compute_capability)) {
      ctx.info()["skipped_dtypes"][to_string(dtype)][std::to_string(d)] = *why;
      continue;
    }
    devices.push_back(d);
    budget = std::min(budget, device_free_bytes(d) / 10 * 8);
  }
  if (devices.empty()) return true;
  const auto candidates = shape_candidates(dtype, ctx.params().integer("size"), buffer_copies, budget);
  if (candidates.empty()) {
    ctx.info()["skipped_dtypes"][to_string(dtype)]["all"] = "no candidate shape fits in 80% of free GPU memory";
    return true;
  }
  nlohmann::json& log = ctx.info()["shape_search"][to_string(dtype)];
  const std::optional<GemmShape> found = search_shape(devices, dtype, candidates, ctx, log);
  if (!found) {
    if (ctx.should_stop()) return false;
    ctx.info()["skipped_dtypes"][to_string(dtype)]["all"] = "cuBLASLt has no algorithm for any candidate shape (see shape_search)";
    return true;
  }
  const GemmShape best = *found;
  ctx.info()["best_shape"][to_string(dtype)] = to_string(best);
  Runners runners = make_runners(devices, dtype, best);
  const int products = warm_up(runners);
  ctx.info()["products_per_timing"][to_string(dtype)] = products;
  const double flops = gemm_flops(best) * products;
  std::vector<Measurement> per_gpu(devices.size());
  const Measurement all = ctx.repeat(ctx.policy(), [&] {
    const std::vector<double> seconds = products_on_all(runners, products);
    double slowest = 0;
    for (std::size_t g = 0; g < seconds.size(); ++g) {
      per_gpu[g].seconds.push_back(seconds[g]);
      per_gpu[g].work.push_back(Work{.flops = flops, .elapsed_s = seconds[g]});
      slowest = std::max(slowest, seconds[g]);
    }
    return Work{.flops = flops * static_cast<double>(seconds.size()), .elapsed_s = slowest};
  });
  // The harness keeps only timed repetitions: drop the warm-up entries recorded above.
  for (auto& m : per_gpu) {
    const std::size_t extra = m.seconds.size() - all.seconds.size();
    m.seconds.erase(m.seconds.begin(), m.seconds.begin() + static_cast<std::ptrdiff_t>(extra));
    m.work.erase(m.work.begin(), m.work.begin() + static_cast<std::ptrdiff_t>(extra));
  }
  record_rates(ctx, dtype, devices, per_gpu);
  verify(ctx, dtype, runners);
  return !all.cancelled;
}

}  // namespace

Outcome run_gemm(ProbeContext& ctx) {
  // Bad input is named before the device check, so it is reported the same with or without a GPU.
  const DtypeList dtypes = parse_dtype_list(ctx.params().text("dtypes"));
  if (!dtypes.error.empty()) return Outcome::bad_input(dtypes.error);
  const DeviceChoice choice = choose_devices(ctx);
  if (choice.stop) return *choice.stop;
  return guarded([&] {
    for (Dtype dtype : dtypes.dtypes)
      if (!measure_dtype(ctx, dtype, choice.devices)) return Outcome::interrupted();
    for (const auto& f : ctx.findings())
      if (f.severity == Severity::fail) return Outcome::failed("GEMM results did not verify (see findings)");
    return Outcome::ok();
  });
}

}  // namespace nodeaudit::gpu
