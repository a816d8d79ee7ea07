// The measurement loop. Probes say how much work one repetition does; the harness owns warm-up,
// repetition count, the time budget, the stopping rule and the rate arithmetic.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "harness/core/metric.hpp"

namespace nodeaudit {

// Work done by one repetition. Rates are derived from these in one place (rate_samples).
struct Work {
  double bytes = 0;  // bytes moved (read + written) for bandwidth figures
  double flops = 0;  // floating-point operations (2*M*N*K for a GEMM)
  double ops = 0;    // operations counted (I/Os, images, samples)
  // Set when the probe timed the work itself (CUDA events around device work); the harness then
  // uses it instead of its host wall-clock time for this repetition.
  std::optional<double> elapsed_s;
};

struct RepeatPolicy {
  int warmup = 1;           // repetitions run and discarded first
  int min_repetitions = 5;  // always at least this many timed repetitions
  int max_repetitions = 1000;
  double budget_s = 2.0;    // stop after min_repetitions once this much timed work has run
  // Optional early stop: once min_repetitions are in and the CV of the timings is below this.
  std::optional<double> target_cv;
};

struct Measurement {
  std::vector<double> seconds;  // timed repetitions only
  std::vector<Work> work;
  bool cancelled = false;       // the loop stopped early on a cancel request
};

enum class RateKind {
  gb_per_s,     // bytes / 1e9 / s
  tflop_per_s,  // flops / 1e12 / s
  ops_per_s,    // ops / s
};

// Per-repetition rate samples from a measurement.
std::vector<double> rate_samples(const Measurement& m, RateKind kind);
const char* rate_unit(RateKind kind);

// Runs `body` under `policy`. `should_stop` is polled between repetitions (cancel / deadline).
Measurement run_repetitions(const RepeatPolicy& policy, const std::function<Work()>& body,
                            const std::function<bool()>& should_stop);

}  // namespace nodeaudit
