#include "pipeline/step/step_pipeline.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "io/dataset_loader.hpp"
#include "io/storage_target.hpp"
#include "pipeline/step/batch_queue.hpp"
#include "pipeline/samples/jpeg_samples.hpp"
#include "pipeline/step/loader_stage.hpp"
#include "pipeline/step/step_clock.hpp"

namespace nodeaudit::pipeline {
namespace {

bool checkpoint_due(const PipelineConfig& config, int step) {
  return config.checkpoint_mode != CheckpointMode::off && config.checkpoint.every_steps > 0 &&
         (step + 1) % config.checkpoint.every_steps == 0;
}

// The step's batches, one per GPU: the decoded tensors when the loader decodes, else the samples.
std::vector<HostBatch> batches_of(const PipelineConfig& config, BatchQueue& queue, const std::vector<std::size_t>& slots) {
  std::vector<HostBatch> batches;
  const auto samples = static_cast<std::size_t>(config.samples_per_step);
  for (const std::size_t slot : slots) {
    if (config.decode_jpeg) {
      const std::size_t bytes = queue.tensor_area_bytes();
      batches.push_back({queue.tensors(slot), 1, bytes, bytes});
    } else {
      // Undecoded samples have one size (pattern files): each slot holds sample_bytes of data.
      batches.push_back({queue.buffer(slot), samples, config.sample_bytes, config.sample_capacity});
    }
  }
  return batches;
}

// One step as a trainer runs it: wait for a batch per GPU, the device's copy, compute and exposed
// all-reduce, then a checkpoint when one is due.
void run_compute_stage(const PipelineConfig& config, LoaderShared& shared, StepDevice& device,
                       CheckpointWriter& checkpoints, Clock::time_point start, const std::function<bool()>& should_stop,
                       PipelineResult& result) {
  std::vector<std::size_t> slots;
  for (int step = 0; step < config.steps; ++step) {
    if (should_stop()) {
      result.interrupted = true;
      return;
    }
    const auto wait_start = Clock::now();
    slots.clear();
    while (static_cast<int>(slots.size()) < device.batches_per_step()) {
      const auto slot = shared.queue.ready_slots().pop(should_stop);
      if (!slot) {
        result.interrupted = !shared.failed;
        return;
      }
      slots.push_back(*slot);
    }
    const auto device_start = Clock::now();
    DeviceStepTimes d;
    try {
      d = device.run_step(batches_of(config, shared.queue, slots), [&] {
        for (const std::size_t slot : slots) shared.queue.free_slots().push(slot);
      });
    } catch (const std::exception& e) {
      // A stop request while the GPUs worked is an interruption; anything else is the device's
      // failure, reported apart from the loaders' read errors.
      if (should_stop()) {
        result.interrupted = true;
      } else {
        result.device_error = e.what();
        shared.failed = true;
      }
      shared.abort = true;
      shared.queue.close();
      return;
    }
    const auto device_end = Clock::now();
    // Only a step that saves a checkpoint has a checkpoint stall: the host time of the check
    // itself (or a preemption right after the device returned) is the step's "other" time.
    auto checkpoint_end = device_end;
    if (checkpoint_due(config, step)) {
      if (const std::string error = checkpoints.save(config.checkpoint.bytes); !error.empty())
        return shared.fail(error);
      result.checkpoint_bytes += config.checkpoint.bytes;
      checkpoint_end = Clock::now();
    }
    const auto end = Clock::now();
    StepTiming t;
    t.data_wait_s = seconds_between(wait_start, device_start);
    t.copy_s = d.copy_s;
    t.copy_bytes = d.copy_bytes;
    t.compute_s = d.compute_s;
    t.comm_s = d.comm_s;
    t.checkpoint_s = seconds_between(device_end, checkpoint_end);
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

void run_stages(const PipelineConfig& config, LoaderShared& shared, StepDevice& device,
                std::vector<std::unique_ptr<BatchReader>>& readers, const std::function<bool()>& should_stop,
                PipelineResult& result) {
  std::vector<LoaderTally> tallies(readers.size());
  CheckpointWriter checkpoints(config.checkpoint_mode, config.checkpoint_path);
  const auto start = Clock::now();
  {
    std::vector<std::jthread> loaders;
    for (std::size_t i = 0; i < readers.size(); ++i)
      loaders.emplace_back([&, i] { run_loader_worker(shared, *readers[i], static_cast<int>(i), tallies[i]); });
    run_compute_stage(config, shared, device, checkpoints, start, should_stop, result);
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

// Batch buffers pinned for the device from here to the end of the scope, even on an exception.
struct PinnedWhileAlive {
  StepDevice& device;
  std::string why_not;
  PinnedWhileAlive(StepDevice& d, const std::vector<iovec>& areas) : device(d), why_not(d.pin(areas)) {}
  ~PinnedWhileAlive() { device.unpin(); }
  PinnedWhileAlive(const PinnedWhileAlive&) = delete;
  PinnedWhileAlive& operator=(const PinnedWhileAlive&) = delete;
};

// The areas the device copies from: every batch's tensors when the loader decodes, else its samples.
std::vector<iovec> copied_areas(const PipelineConfig& config, BatchQueue& queue) {
  if (!config.decode_jpeg) return sample_area_iovecs(queue);
  std::vector<iovec> areas;
  for (std::size_t i = 0; i < queue.depth(); ++i) areas.push_back({queue.tensors(i), queue.tensor_area_bytes()});
  return areas;
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
  EmulatedDevice emulated(config.compute_s, config.comm_exposed_s);
  StepDevice& device = config.device ? *config.device : emulated;
  const PinnedWhileAlive pinned(device, copied_areas(resolved, queue));  // released before the queue's memory
  result.pinned = pinned.why_not;
  run_stages(resolved, shared, device, readers, should_stop, result);
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
    f.copy_s += result.steps[i].copy_s;
    f.copy_bytes += result.steps[i].copy_bytes;
    f.comm_s += result.steps[i].comm_s;
    f.checkpoint_s += result.steps[i].checkpoint_s;
  }
  f.other_s = f.wall_s - f.compute_s - f.data_wait_s - f.copy_s - f.comm_s - f.checkpoint_s;
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
