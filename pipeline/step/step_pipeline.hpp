// The overlapped training step: loader workers read whole sample files through io_uring straight
// into batch buffers of a bounded prefetch queue (and decode + augment JPEG samples when the
// workload does); the compute stage takes one batch per GPU each step and hands them to the step
// device (emulated: sleeps of the step's compute time and exposed all-reduce share, MLPerf Storage
// style; real: host-to-device copies, cuBLASLt GEMMs, NCCL all-reduce); a checkpoint is saved
// every `checkpoint.every_steps` steps (sync, async or off). Every stage's time is recorded per
// step so the stages account for the wall time.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/dataloader/loader_report.hpp"
#include "pipeline/step/batch_reader.hpp"
#include "pipeline/step/checkpoint_writer.hpp"
#include "pipeline/step/compute_model.hpp"
#include "pipeline/step/step_device.hpp"

namespace nodeaudit::pipeline {

struct PipelineConfig {
  const std::vector<std::string>* files = nullptr;  // the storage.dataset layout: one file per sample
  std::uint32_t sample_bytes = 0;                   // every file's size when exact_sample_size; else the mean
  std::uint32_t sample_capacity = 0;                // bytes reserved per sample in a batch (read length); 0 = derived
  bool exact_sample_size = true;                    // pattern samples have one size; JPEG files vary
  bool decode_jpeg = false;                         // decode + augment each sample in the loader
  bool direct = false;                              // O_DIRECT reads (sample_capacity is a multiple of 4 KiB)
  int samples_per_step = 1;
  int steps = 1;
  int workers = 1;
  int queue_depth = 1;        // batches prefetched
  unsigned io_depth = 8;      // whole-file reads in flight per worker
  double compute_s = 0;       // per step, emulated
  double comm_exposed_s = 0;  // per step, emulated: the all-reduce share not hidden behind compute
  StepDevice* device = nullptr;  // the real GPUs; nullptr = emulated from compute_s and comm_exposed_s
  CheckpointPlan checkpoint;
  CheckpointMode checkpoint_mode = CheckpointMode::sync;
  std::string checkpoint_path;  // written and removed by the pipeline
  std::uint64_t seed = 0x5eed;
};

// One step as the compute stage saw it; `end_s` is from the pipeline start.
struct StepTiming {
  double data_wait_s = 0, copy_s = 0, compute_s = 0, comm_s = 0, checkpoint_s = 0;
  double copy_bytes = 0;  // bytes copied in copy_s (the slowest GPU's batch); 0 when nothing is copied
  double end_s = 0;
};

// Set when a PyTorch DataLoader ran the steps (--loader pytorch) instead of this process's workers:
// its decoder and its CPU over the steps after the first (all zero when it reported none).
struct FrameworkLoaderRun {
  std::string decoder;  // pil, raw
  dataloader::TrainCpu cpu;
};

struct PipelineResult {
  std::vector<StepTiming> steps;  // completed steps, in order
  int workers = 0;
  double loader_read_s = 0;     // sum over workers of time reading (not decoding, not blocked)
  double loader_decode_s = 0;   // sum over workers of time decoding + augmenting
  double loader_blocked_s = 0;  // sum over workers of time waiting for a free buffer
  bool fixed_buffers = false;   // batch buffers registered with every ring
  std::string pinned;           // empty = batch buffers pinned for the device; else why not
  double loader_wall_s = 0;     // from start until the last worker ended
  std::uint64_t samples_loaded = 0, bytes_loaded = 0;
  int checkpoints = 0;
  double checkpoint_bytes = 0;
  std::string error;        // first loader or checkpoint error
  std::string device_error; // the step device failed (a CUDA, cuBLASLt or NCCL call)
  std::string setup_error;  // io_uring could not be set up: nothing ran (a skip for the probe)
  bool interrupted = false;
  std::optional<FrameworkLoaderRun> framework;
};

// Bytes reserved per sample in a batch: the configured capacity, else the sample size rounded up
// to 4 KiB (a read asks for the whole slot, so a file longer than expected shows up as an error).
std::uint32_t sample_slot_bytes(const PipelineConfig& config);

// Runs the pipeline; result.setup_error when a ring cannot be created (nothing ran then).
PipelineResult run_pipeline(const PipelineConfig& config, const std::function<bool()>& should_stop);

// Figures over the timed steps (the first step, which fills the queue, is excluded).
struct PipelineFigures {
  int timed_steps = 0;
  double wall_s = 0, compute_s = 0, data_wait_s = 0, copy_s = 0, comm_s = 0, checkpoint_s = 0, other_s = 0;
  double copy_bytes = 0;              // bytes the timed steps' copies moved (real GPUs only)
  double au_pct = 0;                  // compute / (wall - checkpoint stalls)
  double au_with_checkpoint_pct = 0;  // compute / wall
  double samples_per_s = 0;           // consumed by compute (every GPU's batch counted)
  double loader_read_pct = 0;         // loader read time / (workers x loader wall)
  double loader_decode_pct = 0;       // loader decode time / (workers x loader wall)
  double loader_samples_per_s = 0;    // samples per second of one worker's busy time x workers
};
// `samples_per_step` counts every GPU's batch.
PipelineFigures summarize(const PipelineResult& result, int samples_per_step);

}  // namespace nodeaudit::pipeline
