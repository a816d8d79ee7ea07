// The loader stage of pipeline.step: each worker owns a BatchReader (its own io_uring) and fills
// whole batches: it takes a free batch buffer, claims the next step number, reads that step's
// samples (the shuffled epoch order, wrapping into the next epoch) straight into the buffer,
// decodes + augments each JPEG sample as its read completes when the workload decodes, and hands
// the batch to the compute stage once every sample is in. A worker starts reading its next batch
// while the last samples of the previous one are still in flight.
#pragma once

#include <atomic>
#include <mutex>
#include <string>

#include "io/dataset_loader.hpp"
#include "pipeline/step/batch_queue.hpp"
#include "pipeline/step/batch_reader.hpp"
#include "pipeline/step/step_pipeline.hpp"

namespace nodeaudit::pipeline {

struct LoaderShared {
  const PipelineConfig& config;
  const io::EpochPlan& plan;
  BatchQueue& queue;
  std::atomic<int> next_step{0};
  std::atomic<bool> abort{false};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::string error;

  // Records the first error and stops both sides.
  void fail(const std::string& why);
};

struct LoaderTally {
  double read_s = 0;     // in the reader loop, not waiting for a free buffer, not decoding
  double decode_s = 0;   // decode + augmentation
  double blocked_s = 0;  // waiting for a free batch buffer (the compute stage is behind)
  std::uint64_t samples = 0, bytes = 0;
};

// Registered-buffer list of the queue's sample areas, for BatchReader::create.
std::vector<iovec> sample_area_iovecs(BatchQueue& queue);

void run_loader_worker(LoaderShared& shared, BatchReader& reader, int worker, LoaderTally& tally);

}  // namespace nodeaudit::pipeline
