// The overlapped training step, emulated: loader workers read whole sample files through io_uring
// into batch buffers of a bounded prefetch queue; the compute stage takes one batch per step and
// is busy for the step's compute time (a sleep, MLPerf Storage style); a synchronous checkpoint is
// written every `checkpoint.every_steps` steps. Every stage's time is recorded per step so the
// stages account for the wall time.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compute_model.hpp"
#include "uring_engine.hpp"

namespace nodeaudit::pipeline {

struct PipelineConfig {
  const std::vector<std::string>* files = nullptr;  // the storage.dataset layout: one file per sample
  std::uint32_t sample_bytes = 0;
  int samples_per_step = 1;
  int steps = 1;
  int workers = 1;
  int queue_depth = 1;      // batches prefetched
  unsigned io_depth = 8;    // whole-file reads in flight per worker
  double compute_s = 0;     // per step
  CheckpointPlan checkpoint;
  std::string checkpoint_path;  // written and removed by the pipeline
  std::uint64_t seed = 0x5eed;
};

// One step as the compute stage saw it; `end_s` is from the pipeline start.
struct StepTiming {
  double data_wait_s = 0, compute_s = 0, checkpoint_s = 0, other_s = 0;
  double end_s = 0;
};

struct PipelineResult {
  std::vector<StepTiming> steps;  // completed steps, in order
  int workers = 0;
  double loader_busy_s = 0;       // sum over workers of time spent reading a batch
  double loader_blocked_s = 0;    // sum over workers of time waiting for a free buffer
  double loader_wall_s = 0;       // from start until the last worker ended
  std::uint64_t samples_loaded = 0, bytes_loaded = 0;
  int checkpoints = 0;
  double checkpoint_bytes = 0;
  std::string error;              // first loader or checkpoint error
  bool interrupted = false;
};

// Creates the rings; nullptr-free vector or `error` (io_uring refused: a skip for the probe).
std::vector<std::unique_ptr<io::UringWorker>> make_loader_rings(const PipelineConfig& config, std::string& error);

PipelineResult run_pipeline(const PipelineConfig& config, const std::vector<std::unique_ptr<io::UringWorker>>& rings,
                            const std::function<bool()>& should_stop);

// Figures over the timed steps (the first step, which fills the queue, is excluded).
struct PipelineFigures {
  int timed_steps = 0;
  double wall_s = 0, compute_s = 0, data_wait_s = 0, checkpoint_s = 0, other_s = 0;
  double au_pct = 0;                  // compute / wall
  double samples_per_s = 0;           // consumed by compute
  double loader_busy_pct = 0;         // loader_busy / (workers x loader wall)
  double loader_samples_per_s = 0;    // samples per second of one worker's busy time x workers
};
PipelineFigures summarize(const PipelineResult& result, int samples_per_step);

}  // namespace nodeaudit::pipeline
