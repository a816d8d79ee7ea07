#include "harness/core/measure.hpp"

#include <chrono>

#include "harness/core/stats.hpp"

namespace nodeaudit {

const char* rate_unit(RateKind kind) {
  switch (kind) {
    case RateKind::gb_per_s: return unit::gbps;
    case RateKind::tflop_per_s: return unit::tflops;
    case RateKind::ops_per_s: return unit::iops;
  }
  return "";
}

std::vector<double> rate_samples(const Measurement& m, RateKind kind) {
  std::vector<double> rates;
  rates.reserve(m.seconds.size());
  for (std::size_t i = 0; i < m.seconds.size(); ++i) {
    const double t = m.seconds[i];
    if (t <= 0) continue;  // a repetition too short to time says nothing about a rate
    const Work& w = m.work[i];
    switch (kind) {
      case RateKind::gb_per_s: rates.push_back(w.bytes / 1e9 / t); break;
      case RateKind::tflop_per_s: rates.push_back(w.flops / 1e12 / t); break;
      case RateKind::ops_per_s: rates.push_back(w.ops / t); break;
    }
  }
  return rates;
}

Measurement run_repetitions(const RepeatPolicy& policy, const std::function<Work()>& body,
                            const std::function<bool()>& should_stop) {
  using clock = std::chrono::steady_clock;
  Measurement m;
  for (int i = 0; i < policy.warmup; ++i) {
    if (should_stop && should_stop()) {
      m.cancelled = true;
      return m;
    }
    body();
  }
  double timed_total_s = 0;
  while (static_cast<int>(m.seconds.size()) < policy.max_repetitions) {
    const int done = static_cast<int>(m.seconds.size());
    if (done >= policy.min_repetitions) {
      if (timed_total_s >= policy.budget_s) break;
      if (policy.target_cv && summarize(m.seconds).cv <= *policy.target_cv) break;
    }
    if (should_stop && should_stop()) {
      m.cancelled = true;
      break;
    }
    const auto start = clock::now();
    Work w = body();
    const double host_s = std::chrono::duration<double>(clock::now() - start).count();
    const double t = w.elapsed_s.value_or(host_s);
    m.seconds.push_back(t);
    m.work.push_back(w);
    // The budget counts host time, which includes launch and sync overheads of device work.
    timed_total_s += host_s;
  }
  return m;
}

}  // namespace nodeaudit
