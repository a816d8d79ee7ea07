// A training-style loader over a directory of sample files: each epoch reads every sample exactly
// once, in a fresh random permutation, whole files (open, read, close) through io_uring. Worker
// threads take the next sample from one shared cursor, as DataLoader workers share an index list.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/uring_engine.hpp"

namespace nodeaudit::io {

struct EpochPlan {
  const std::vector<std::string>* files = nullptr;
  std::vector<std::uint32_t> order;  // permutation of file indices
  std::uint32_t sample_bytes = 0;
  std::uint32_t read_length = 0;     // sample_bytes rounded up to the O_DIRECT alignment
  int open_flags = 0;
};

EpochPlan make_epoch_plan(const std::vector<std::string>& files, std::uint32_t sample_bytes, bool direct,
                          std::uint64_t epoch_seed);

struct EpochResult {
  std::uint64_t bytes = 0, samples = 0;
  LatencyHistogram latency;
  std::string error;
};

// Runs one epoch on the first `workers` rings. `reads_per_sample` (size = files), when not null,
// counts how often each sample was read (for the exactly-once check).
EpochResult run_epoch(const std::vector<std::unique_ptr<UringWorker>>& rings, int workers, const EpochPlan& plan,
                      const LoopLimits& limits, std::vector<std::atomic<std::uint32_t>>* reads_per_sample);

}  // namespace nodeaudit::io
