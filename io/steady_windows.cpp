#include "io/steady_windows.hpp"

#include <algorithm>
#include <chrono>

#include "io/storage_target.hpp"

namespace nodeaudit::io {
namespace {

// How often a waiting window looks at the stop request and at failed workers.
constexpr double poll_interval_s = 0.05;

}  // namespace

SteadyWindows::SteadyWindows(const std::vector<std::unique_ptr<UringWorker>>& rings, std::vector<UnitSource*> sources)
    : sources_(std::move(sources)), results_(sources_.size()) {
  for (std::size_t i = 0; i < sources_.size(); ++i) {
    progress_.push_back(std::make_unique<LoopProgress>());
    progress_.back()->window = &window_;
  }
  cpu_before_s_ = process_cpu_s();
  window_start_ns_ = monotonic_ns();
  for (std::size_t i = 0; i < sources_.size(); ++i) {
    threads_.emplace_back([this, &ring = *rings[i], i] {
      LatencyHistogram unused;
      const LoopLimits limits{std::chrono::steady_clock::time_point::max(), &stop_flag_, progress_[i].get()};
      results_[i] = ring.run(*sources_[i], limits, unused);
      if (!results_[i].error.empty()) failed_.store(true, std::memory_order_relaxed);
    });
  }
}

SteadyWindows::~SteadyWindows() { stop(); }

Work SteadyWindows::next_window(double window_s, const std::function<bool()>& should_stop) {
  const auto end_ns = window_start_ns_ + static_cast<std::uint64_t>(window_s * 1e9);
  for (std::uint64_t now = monotonic_ns(); now < end_ns; now = monotonic_ns()) {
    if (failed() || (should_stop && should_stop())) break;
    const double left_s = static_cast<double>(end_ns - now) / 1e9;
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(left_s, poll_interval_s)));
  }
  // Read the totals first, then move the workers to the next window's histograms.
  const std::uint64_t now_ns = monotonic_ns();
  std::uint64_t bytes = 0, units = 0;
  for (const auto& p : progress_) {
    bytes += p->bytes.load(std::memory_order_relaxed);
    units += p->units.load(std::memory_order_relaxed);
  }
  window_.fetch_add(1, std::memory_order_relaxed);
  const double cpu_s = process_cpu_s();
  Work work{.bytes = static_cast<double>(bytes - bytes_before_), .ops = static_cast<double>(units - units_before_),
            .elapsed_s = static_cast<double>(now_ns - window_start_ns_) / 1e9};
  last_cpu_s_ = cpu_s - cpu_before_s_;
  bytes_before_ = bytes, units_before_ = units, cpu_before_s_ = cpu_s, window_start_ns_ = now_ns;
  return work;
}

void SteadyWindows::stop() {
  if (threads_.empty()) return;
  stop_flag_.store(true, std::memory_order_relaxed);
  threads_.clear();  // joins
  for (const auto& r : results_)
    if (error_.empty() && !r.error.empty()) error_ = r.error;
}

LatencyHistogram SteadyWindows::window_latency(unsigned window) const {
  LatencyHistogram merged;
  for (const auto& p : progress_)
    if (window < p->window_latency.size()) merged.merge(p->window_latency[window]);
  return merged;
}

}  // namespace nodeaudit::io
