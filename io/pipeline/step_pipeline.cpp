#include "step_pipeline.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "batch_queue.hpp"
#include "dataset_loader.hpp"
#include "jpeg_samples.hpp"
#include "loader_stage.hpp"
#include "storage_target.hpp"

namespace nodeaudit::pipeline {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Sleeps to `deadline`, spinning through the last 100 us: a sleep overshoots by the timer slack
// (~50-100 us), which would count as compute time and hide a starved loader at short steps.
void busy_until(Clock::time_point deadline) {
  const auto spin = std::chrono::microseconds(100);
  if (deadline - Clock::now() > spin) std::this_thread::sleep_until(deadline - spin);
  while (Clock::now() < deadline) {
  }
}

Clock::duration as_duration(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

bool checkpoint_due(const PipelineConfig& config, int step) {
  return config.checkpoint_mode != CheckpointMode::off && config.checkpoint.every_steps > 0 &&
         (step + 1) % config.checkpoint.every_steps == 0;
}

// One step as a trainer runs it: wait for a batch, compute, the exposed share of the all-reduce,
// then a checkpoint when one is due.
void run_compute_stage(const PipelineConfig& config, LoaderShared& shared, CheckpointWriter& checkpoints,
                       Clock::time_point start, const std::function<bool()>& should_stop, PipelineResult& result) {
  for (int step = 0; step < config.steps; ++step) {
    if (should_stop()) {
      result.interrupted = true;
      return;
    }
    const auto wait_start = Clock::now();
    const auto slot = shared.queue.ready_slots().pop(should_stop);
    const auto compute_start = Clock::now();
    if (!slot) {
      result.interrupted = !shared.failed;
      return;
    }
    // The batch has been copied to the GPU when compute starts, so its buffer goes back to the
    // loaders now. Waking a loader may preempt this thread on a busy host; inside the compute
    // window that costs nothing (a GPU keeps computing), after it the delay would count as a stage.
    shared.queue.free_slots().push(*slot);
    busy_until(compute_start + as_duration(config.compute_s));
    const auto compute_end = Clock::now();
    if (config.comm_exposed_s > 0) busy_until(compute_end + as_duration(config.comm_exposed_s));
    const auto comm_end = Clock::now();
    if (checkpoint_due(config, step)) {
      if (const std::string error = checkpoints.save(config.checkpoint.bytes); !error.empty())
        return shared.fail(error);
      result.checkpoint_bytes += config.checkpoint.bytes;
    }
    const auto end = Clock::now();
    StepTiming t;
    t.data_wait_s = seconds_between(wait_start, compute_start);
    t.compute_s = seconds_between(compute_start, compute_end);
    t.comm_s = seconds_between(compute_end, comm_end);
    t.checkpoint_s = seconds_between(comm_end, end);
    t.end_s = seconds_between(start, end);
    result.steps.push_back(t);
  }
}

std::vector<std::unique_ptr<BatchReader>> make_readers(const PipelineConfig& config, BatchQueue& queue,
                                                       std::string& error) {
  std::vector<std::unique_ptr<BatchReader>> readers;
  const std::vector<iovec> buffers = sample_area_iovecs(queue);
  for (int i = 0; i < config.workers; ++i) {
    readers.push_back(BatchReader::create(config.io_depth, buffers, error));
    if (!readers.back()) return {};
  }
  return readers;
}

void run_stages(const PipelineConfig& config, LoaderShared& shared, std::vector<std::unique_ptr<BatchReader>>& readers,
                const std::function<bool()>& should_stop, PipelineResult& result) {
  std::vector<LoaderTally> tallies(readers.size());
  CheckpointWriter checkpoints(config.checkpoint_mode, config.checkpoint_path);
  const auto start = Clock::now();
  {
    std::vector<std::jthread> loaders;
    for (std::size_t i = 0; i < readers.size(); ++i)
      loaders.emplace_back([&, i] { run_loader_worker(shared, *readers[i], static_cast<int>(i), tallies[i]); });
    run_compute_stage(config, shared, checkpoints, start, should_stop, result);
    shared.abort = true;
    shared.queue.close();
  }
  result.loader_wall_s = seconds_between(start, Clock::now());
  if (const std::string error = checkpoints.finish(); !error.empty() && shared.error.empty()) shared.error = error;
  result.checkpoints = checkpoints.written();
  for (const LoaderTally& tally : tallies) {
    result.loader_read_s += tally.read_s;
    result.loader_decode_s += tally.decode_s;
    result.loader_blocked_s += tally.blocked_s;
    result.samples_loaded += tally.samples;
    result.bytes_loaded += tally.bytes;
  }
}

}  // namespace

std::uint32_t sample_slot_bytes(const PipelineConfig& config) {
  if (config.sample_capacity > 0) return config.sample_capacity;
  return static_cast<std::uint32_t>(io::round_up(config.sample_bytes, 4096));
}

PipelineResult run_pipeline(const PipelineConfig& config, const std::function<bool()>& should_stop) {
  PipelineResult result;
  result.workers = config.workers;
  PipelineConfig resolved = config;
  resolved.sample_capacity = sample_slot_bytes(config);
  const std::size_t samples = static_cast<std::size_t>(config.samples_per_step);
  BatchQueue queue(static_cast<std::size_t>(config.queue_depth), samples * resolved.sample_capacity,
                   config.decode_jpeg ? samples * SampleDecoder::tensor_bytes : 0);
  const io::EpochPlan plan = io::make_epoch_plan(*config.files, config.sample_bytes, config.direct, config.seed);
  LoaderShared shared{resolved, plan, queue};
  auto readers = make_readers(resolved, queue, result.setup_error);
  if (readers.empty()) return result;
  result.fixed_buffers = std::all_of(readers.begin(), readers.end(), [](const auto& r) { return r->fixed_buffers(); });
  run_stages(resolved, shared, readers, should_stop, result);
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
    f.comm_s += result.steps[i].comm_s;
    f.checkpoint_s += result.steps[i].checkpoint_s;
  }
  f.other_s = f.wall_s - f.compute_s - f.data_wait_s - f.comm_s - f.checkpoint_s;
  if (f.wall_s <= 0) return f;
  f.au_with_checkpoint_pct = f.compute_s / f.wall_s * 100;
  f.au_pct = f.wall_s > f.checkpoint_s ? f.compute_s / (f.wall_s - f.checkpoint_s) * 100 : 0;
  f.samples_per_s = static_cast<double>(f.timed_steps) * samples_per_step / f.wall_s;
  if (result.loader_wall_s > 0 && result.workers > 0) {
    f.loader_read_pct = result.loader_read_s / (result.workers * result.loader_wall_s) * 100;
    f.loader_decode_pct = result.loader_decode_s / (result.workers * result.loader_wall_s) * 100;
  }
  const double busy_s = result.loader_read_s + result.loader_decode_s;
  if (busy_s > 0) f.loader_samples_per_s = static_cast<double>(result.samples_loaded) / (busy_s / result.workers);
  return f;
}

}  // namespace nodeaudit::pipeline
