// The device side of one training step as the compute stage drives it: the step's batches (one
// per GPU) are copied in, computed on, and their gradients all-reduced. EmulatedDevice sleeps for
// the durations a profile implies on a named GPU (MLPerf Storage's way: no GPU needed, and the
// batch is taken as copied the moment compute starts); the CUDA device (gpu_step_device.cpp) runs
// real host-to-device copies, cuBLASLt GEMMs and NCCL all-reduces.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace nodeaudit::pipeline {

// One GPU's batch in host memory: `rows` samples of `row_bytes`, each starting `pitch` bytes after
// the previous one (the sample slots; decoded tensors are one contiguous row). Only the sample
// bytes are copied, not the slack that rounds a slot up to 4 KiB.
struct HostBatch {
  const std::byte* data = nullptr;
  std::size_t rows = 0, row_bytes = 0, pitch = 0;
  std::size_t bytes() const { return rows * row_bytes; }
};

// One step's device stages in seconds, from the GPU that finished the step last: the copy of its
// batch, its compute, and the all-reduce time not hidden behind that compute; `copy_bytes` is that
// GPU's batch (what copy_s moved), so copy_bytes / copy_s is the copy rate the step achieved.
struct DeviceStepTimes {
  double copy_s = 0, compute_s = 0, comm_s = 0;
  double copy_bytes = 0;
};

class StepDevice {
 public:
  virtual ~StepDevice() = default;
  // Batches each step consumes: one per GPU (data parallel, each GPU its own batch).
  virtual int batches_per_step() const = 0;
  // Pins the batch buffers for asynchronous copies; returns why not when refused (the copies
  // then go through the driver's staging buffers). unpin() before the buffers are freed.
  virtual std::string pin(const std::vector<iovec>& areas) = 0;
  virtual void unpin() = 0;
  // Runs one step on batches[i] -> GPU i and calls `release` as soon as every batch is on its GPU
  // (the loaders may refill those buffers while the GPUs compute). Throws std::runtime_error
  // naming the failed call.
  virtual DeviceStepTimes run_step(const std::vector<HostBatch>& batches, const std::function<void()>& release) = 0;
};

class EmulatedDevice final : public StepDevice {
 public:
  EmulatedDevice(double compute_s, double comm_exposed_s) : compute_s_(compute_s), comm_exposed_s_(comm_exposed_s) {}
  int batches_per_step() const override { return 1; }
  std::string pin(const std::vector<iovec>&) override { return "emulated compute: nothing is copied"; }
  void unpin() override {}
  DeviceStepTimes run_step(const std::vector<HostBatch>& batches, const std::function<void()>& release) override;

 private:
  double compute_s_, comm_exposed_s_;
};

}  // namespace nodeaudit::pipeline
