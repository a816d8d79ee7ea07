#include "io/dataset_loader.hpp"

#include <fcntl.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <thread>

#include "io/storage_target.hpp"

namespace nodeaudit::io {
namespace {

class EpochSource : public UnitSource {
 public:
  EpochSource(const EpochPlan& plan, std::atomic<std::uint64_t>& cursor, std::vector<std::atomic<std::uint32_t>>* counts)
      : plan_(plan), cursor_(cursor), counts_(counts) {}
  bool next(IoUnit& unit) override {
    const std::uint64_t i = cursor_.fetch_add(1, std::memory_order_relaxed);
    if (i >= plan_.order.size()) return false;
    const std::uint32_t sample = plan_.order[i];
    unit.kind = UnitKind::whole_file_read;
    unit.path = (*plan_.files)[sample].c_str();
    unit.open_flags = plan_.open_flags;
    unit.length = plan_.read_length;
    unit.expect = plan_.sample_bytes;
    unit.tag = sample;
    return true;
  }
  void completed(const IoUnit& unit, const std::byte*, std::uint32_t) override {
    if (counts_) (*counts_)[unit.tag].fetch_add(1, std::memory_order_relaxed);
  }

 private:
  const EpochPlan& plan_;
  std::atomic<std::uint64_t>& cursor_;
  std::vector<std::atomic<std::uint32_t>>* counts_;
};

}  // namespace

EpochPlan make_epoch_plan(const std::vector<std::string>& files, std::uint32_t sample_bytes, bool direct,
                          std::uint64_t epoch_seed) {
  EpochPlan plan;
  plan.files = &files;
  plan.order.resize(files.size());
  std::iota(plan.order.begin(), plan.order.end(), 0u);
  std::shuffle(plan.order.begin(), plan.order.end(), std::mt19937_64(epoch_seed));
  plan.sample_bytes = sample_bytes;
  plan.read_length = static_cast<std::uint32_t>(round_up(sample_bytes, 4096));
  plan.open_flags = O_RDONLY | (direct ? O_DIRECT : 0);  // O_CLOEXEC is refused for direct descriptors
  return plan;
}

EpochResult run_epoch(const std::vector<std::unique_ptr<UringWorker>>& rings, int workers, const EpochPlan& plan,
                      const LoopLimits& limits, std::vector<std::atomic<std::uint32_t>>* reads_per_sample) {
  std::atomic<std::uint64_t> cursor{0};
  const auto n = static_cast<std::size_t>(workers);
  std::vector<LoopResult> results(n);
  std::vector<LatencyHistogram> hist(n);
  {
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < n; ++i) {
      threads.emplace_back([&, i] {
        EpochSource source(plan, cursor, reads_per_sample);
        results[i] = rings[i]->run(source, limits, hist[i]);
      });
    }
  }
  EpochResult out;
  for (std::size_t i = 0; i < n; ++i) {
    out.bytes += results[i].bytes;
    out.samples += results[i].units;
    out.latency.merge(hist[i]);
    if (out.error.empty()) out.error = results[i].error;
  }
  return out;
}

}  // namespace nodeaudit::io
