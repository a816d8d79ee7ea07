#include "step_pipeline.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "batch_queue.hpp"
#include "dataset_loader.hpp"
#include "storage_target.hpp"

namespace nodeaudit::pipeline {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

std::size_t sample_stride(std::uint32_t sample_bytes) { return io::round_up(sample_bytes, 64); }

// The samples of one batch: global sample numbers first..first+count, mapped onto the shuffled
// file order (an epoch is one pass over it); each completed read is copied into the batch buffer.
class BatchSource : public io::UnitSource {
 public:
  BatchSource(const io::EpochPlan& plan, std::byte* buffer, std::uint64_t first, int count)
      : plan_(plan), buffer_(buffer), first_(first), count_(static_cast<std::uint64_t>(count)) {}
  bool next(io::IoUnit& unit) override {
    if (issued_ >= count_) return false;
    const std::uint64_t global = first_ + issued_;
    const std::uint32_t sample = plan_.order[global % plan_.order.size()];
    unit.kind = io::UnitKind::whole_file_read;
    unit.path = (*plan_.files)[sample].c_str();
    unit.open_flags = plan_.open_flags;
    unit.length = plan_.read_length;
    unit.expect = plan_.sample_bytes;
    unit.tag = issued_++;
    return true;
  }
  void completed(const io::IoUnit& unit, const std::byte* data, std::uint32_t length) override {
    std::memcpy(buffer_ + unit.tag * sample_stride(plan_.sample_bytes), data, length);
  }

 private:
  const io::EpochPlan& plan_;
  std::byte* buffer_;
  std::uint64_t first_, count_, issued_ = 0;
};

struct LoaderShared {
  const PipelineConfig& config;
  const io::EpochPlan& plan;
  BatchQueue& queue;
  std::atomic<int> next_step{0};
  std::atomic<bool> abort{false};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::string error;

  void fail(const std::string& why) {
    {
      std::lock_guard lock(error_mutex);
      if (error.empty()) error = why;
    }
    failed = true;
    abort = true;
    queue.close();
  }
};

struct LoaderTally {
  double busy_s = 0, blocked_s = 0;
  std::uint64_t samples = 0, bytes = 0;
};

void loader_worker(LoaderShared& shared, io::UringWorker& ring, LoaderTally& tally) {
  io::LatencyHistogram latency;
  io::LoopLimits limits;
  limits.stop_flag = &shared.abort;
  const int per_step = shared.config.samples_per_step;
  while (!shared.abort) {
    const int step = shared.next_step.fetch_add(1);
    if (step >= shared.config.steps) return;
    const auto wait_start = Clock::now();
    const auto slot = shared.queue.free_slots().pop();
    const auto read_start = Clock::now();
    tally.blocked_s += seconds_between(wait_start, read_start);
    if (!slot) return;
    BatchSource source(shared.plan, shared.queue.buffer(*slot), static_cast<std::uint64_t>(step) * per_step, per_step);
    const io::LoopResult r = ring.run(source, limits, latency);
    tally.busy_s += seconds_between(read_start, Clock::now());
    tally.samples += r.units;
    tally.bytes += r.bytes;
    if (!r.error.empty()) return shared.fail(r.error);
    if (r.units != static_cast<std::uint64_t>(per_step)) return;  // stopped by abort
    shared.queue.ready_slots().push(*slot);
  }
}

// Writes `bytes` to `path` and makes them durable (a synchronous save); empty on success.
std::string write_checkpoint(const std::string& path, double bytes) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return fmt::format("checkpoint {}: open: {}", path, std::strerror(errno));
  std::vector<std::byte> chunk(1 << 20, std::byte{0x5a});
  auto left = static_cast<std::uint64_t>(bytes);
  std::string error;
  while (left > 0 && error.empty()) {
    const std::size_t n = std::min<std::uint64_t>(left, chunk.size());
    const ssize_t w = write(fd, chunk.data(), n);
    if (w <= 0) error = fmt::format("checkpoint {}: write: {}", path, w < 0 ? std::strerror(errno) : "no progress");
    left -= w > 0 ? static_cast<std::uint64_t>(w) : 0;
  }
  if (error.empty() && fdatasync(fd) != 0) error = fmt::format("checkpoint {}: fdatasync: {}", path, std::strerror(errno));
  close(fd);
  return error;
}

// Sleeps to `deadline`, spinning through the last 100 us: a sleep overshoots by the timer slack
// (~50-100 us), which would count as compute time and hide a starved loader at short steps.
void busy_until(Clock::time_point deadline) {
  const auto spin = std::chrono::microseconds(100);
  if (deadline - Clock::now() > spin) std::this_thread::sleep_until(deadline - spin);
  while (Clock::now() < deadline) {
  }
}

void run_compute_stage(const PipelineConfig& config, LoaderShared& shared, Clock::time_point start,
                       const std::function<bool()>& should_stop, PipelineResult& result) {
  const auto compute = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(config.compute_s));
  for (int step = 0; step < config.steps; ++step) {
    if (should_stop()) {
      result.interrupted = true;
      return;
    }
    StepTiming t;
    const auto wait_start = Clock::now();
    const auto slot = shared.queue.ready_slots().pop(should_stop);
    const auto compute_start = Clock::now();
    if (!slot) {
      result.interrupted = !shared.failed;
      return;
    }
    busy_until(compute_start + compute);
    const auto compute_end = Clock::now();
    shared.queue.free_slots().push(*slot);
    if (config.checkpoint.every_steps > 0 && (step + 1) % config.checkpoint.every_steps == 0) {
      const std::string error = write_checkpoint(config.checkpoint_path, config.checkpoint.bytes);
      if (!error.empty()) return shared.fail(error);
      ++result.checkpoints;
      result.checkpoint_bytes += config.checkpoint.bytes;
    }
    const auto end = Clock::now();
    t.data_wait_s = seconds_between(wait_start, compute_start);
    t.compute_s = seconds_between(compute_start, compute_end);
    t.checkpoint_s = seconds_between(compute_end, end);
    t.end_s = seconds_between(start, end);
    result.steps.push_back(t);
  }
}

}  // namespace

std::vector<std::unique_ptr<io::UringWorker>> make_loader_rings(const PipelineConfig& config, std::string& error) {
  std::vector<std::unique_ptr<io::UringWorker>> rings;
  const io::EngineOptions options{config.io_depth, io::round_up(config.sample_bytes, 4096), false, false, config.io_depth};
  for (int i = 0; i < config.workers; ++i) {
    rings.push_back(io::UringWorker::create(options, error));
    if (!rings.back()) return {};
  }
  return rings;
}

PipelineResult run_pipeline(const PipelineConfig& config, const std::vector<std::unique_ptr<io::UringWorker>>& rings,
                            const std::function<bool()>& should_stop) {
  PipelineResult result;
  result.workers = config.workers;
  BatchQueue queue(static_cast<std::size_t>(config.queue_depth), config.samples_per_step * sample_stride(config.sample_bytes));
  const io::EpochPlan plan = io::make_epoch_plan(*config.files, config.sample_bytes, false, config.seed);
  LoaderShared shared{config, plan, queue};
  std::vector<LoaderTally> tallies(static_cast<std::size_t>(config.workers));
  const auto start = Clock::now();
  {
    std::vector<std::jthread> loaders;
    for (std::size_t i = 0; i < tallies.size(); ++i)
      loaders.emplace_back([&, i] { loader_worker(shared, *rings[i], tallies[i]); });
    run_compute_stage(config, shared, start, should_stop, result);
    shared.abort = true;
    queue.close();
  }
  result.loader_wall_s = seconds_between(start, Clock::now());
  for (const LoaderTally& tally : tallies) {
    result.loader_busy_s += tally.busy_s;
    result.loader_blocked_s += tally.blocked_s;
    result.samples_loaded += tally.samples;
    result.bytes_loaded += tally.bytes;
  }
  result.error = shared.error;
  if (!config.checkpoint_path.empty()) unlink(config.checkpoint_path.c_str());  // ENOENT when none was written
  return result;
}

PipelineFigures summarize(const PipelineResult& result, int samples_per_step) {
  PipelineFigures f;
  if (result.steps.size() < 2) return f;
  f.timed_steps = static_cast<int>(result.steps.size()) - 1;
  f.wall_s = result.steps.back().end_s - result.steps.front().end_s;
  for (std::size_t i = 1; i < result.steps.size(); ++i) {
    f.compute_s += result.steps[i].compute_s;
    f.data_wait_s += result.steps[i].data_wait_s;
    f.checkpoint_s += result.steps[i].checkpoint_s;
  }
  f.other_s = f.wall_s - f.compute_s - f.data_wait_s - f.checkpoint_s;
  if (f.wall_s <= 0) return f;
  f.au_pct = f.compute_s / f.wall_s * 100;
  f.samples_per_s = static_cast<double>(f.timed_steps) * samples_per_step / f.wall_s;
  if (result.loader_wall_s > 0 && result.workers > 0)
    f.loader_busy_pct = result.loader_busy_s / (result.workers * result.loader_wall_s) * 100;
  if (result.loader_busy_s > 0)
    f.loader_samples_per_s = static_cast<double>(result.samples_loaded) / (result.loader_busy_s / result.workers);
  return f;
}

}  // namespace nodeaudit::pipeline
