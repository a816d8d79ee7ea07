#include "pipeline/step/loader_stage.hpp"

#include <fcntl.h>

#include <chrono>
#include <map>
#include <optional>
#include <span>

#include "pipeline/samples/jpeg_samples.hpp"
#include "pipeline/step/step_clock.hpp"

namespace nodeaudit::pipeline {
namespace {

class LoaderSource : public SampleSource {
 public:
  LoaderSource(LoaderShared& shared, int worker, LoaderTally& tally)
      : shared_(shared), config_(shared.config), tally_(tally) {
    if (config_.decode_jpeg) decoder_.emplace(config_.seed * 1000003 + static_cast<std::uint64_t>(worker));
  }

  Supply next(SampleRead& read, bool may_block) override {
    if (shared_.abort.load(std::memory_order_relaxed)) return Supply::done;
    if (issuing_ < 0 || batches_.at(issuing_).issued == config_.samples_per_step) {
      const Supply acquired = acquire(may_block);
      if (acquired != Supply::ready) return acquired;
    }
    Batch& batch = batches_.at(issuing_);
    const std::uint64_t global = static_cast<std::uint64_t>(issuing_) * config_.samples_per_step + batch.issued;
    const std::uint32_t sample = shared_.plan.order[global % shared_.plan.order.size()];
    read.path = (*shared_.plan.files)[sample].c_str();
    read.open_flags = shared_.plan.open_flags;
    read.dest = shared_.queue.buffer(batch.slot) + static_cast<std::size_t>(batch.issued) * config_.sample_capacity;
    read.capacity = config_.sample_capacity;
    read.expect = config_.exact_sample_size ? config_.sample_bytes : 0;
    read.buffer_index = static_cast<int>(batch.slot);
    read.tag = (static_cast<std::uint64_t>(issuing_) << 32) | static_cast<std::uint32_t>(batch.issued);
    ++batch.issued;
    return Supply::ready;
  }

  bool completed(const SampleRead& read, std::uint32_t bytes, std::string& error) override {
    const auto step = static_cast<int>(read.tag >> 32);
    const auto index = static_cast<std::size_t>(read.tag & 0xffffffffu);
    Batch& batch = batches_.at(step);
    if (decoder_) {
      const auto start = Clock::now();
      const std::span<const std::uint8_t> jpeg(reinterpret_cast<const std::uint8_t*>(read.dest), bytes);
      std::byte* out = shared_.queue.tensors(batch.slot) + index * SampleDecoder::tensor_bytes;
      const bool ok = decoder_->decode(jpeg, out, error);
      tally_.decode_s += seconds_since(start);
      if (!ok) {
        error = std::string(read.path) + ": " + error;
        return false;
      }
    }
    tally_.samples += 1;
    tally_.bytes += bytes;
    if (++batch.completed == config_.samples_per_step) {
      shared_.queue.ready_slots().push(batch.slot);
      batches_.erase(step);
      if (issuing_ == step) issuing_ = -1;
    }
    return true;
  }

 private:
  struct Batch {
    std::size_t slot = 0;
    int issued = 0, completed = 0;
  };

  // A free batch buffer and the next step number; waits only when nothing is in flight.
  Supply acquire(bool may_block) {
    std::optional<std::size_t> slot;
    if (may_block) {
      const auto start = Clock::now();
      slot = shared_.queue.free_slots().pop();  // nullopt once the queue is closed
      tally_.blocked_s += seconds_since(start);
      if (!slot) return Supply::done;
    } else {
      slot = shared_.queue.free_slots().try_pop();
      if (!slot) return Supply::later;
    }
    // Batches past the last step are read too (a trainer's loader prefetches into the next epoch
    // the same way): workers do not run out of work one by one at the end of a finite run, which
    // would slow the last timed steps. The compute stage never takes them.
    const int step = shared_.next_step.fetch_add(1);
    batches_[step] = Batch{*slot, 0, 0};
    issuing_ = step;
    return Supply::ready;
  }

  LoaderShared& shared_;
  const PipelineConfig& config_;
  LoaderTally& tally_;
  std::optional<SampleDecoder> decoder_;
  std::map<int, Batch> batches_;  // batches with reads issued and not all completed, by step
  int issuing_ = -1;              // the batch whose samples are being issued
};

}  // namespace

void LoaderShared::fail(const std::string& why) {
  {
    std::lock_guard lock(error_mutex);
    if (error.empty()) error = why;
  }
  failed = true;
  abort = true;
  queue.close();
}

std::vector<iovec> sample_area_iovecs(BatchQueue& queue) {
  std::vector<iovec> iovecs;
  for (std::size_t i = 0; i < queue.depth(); ++i) iovecs.push_back({queue.buffer(i), queue.sample_area_bytes()});
  return iovecs;
}

void run_loader_worker(LoaderShared& shared, BatchReader& reader, int worker, LoaderTally& tally) {
  const auto start = Clock::now();
  LoaderSource source(shared, worker, tally);
  const ReaderTotals totals = reader.run(source, shared.abort);
  tally.read_s = seconds_since(start) - tally.blocked_s - tally.decode_s;
  if (!totals.error.empty()) shared.fail(totals.error);
}

}  // namespace nodeaudit::pipeline
