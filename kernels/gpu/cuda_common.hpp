// CUDA plumbing shared by the GPU probe bodies: checked calls, device discovery with the runtime's
// skip reason, device buffers and the CUDA-index -> NVML-index mapping. CUDA-using sources only.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "harness/core/context.hpp"
#include "harness/core/probe.hpp"
#include "harness/node/nvml.hpp"
#include "kernels/gpu/capacity_search.hpp"
#include "kernels/gpu/cuda_check.hpp"

namespace nodeaudit::gpu {

// Devices the probe may use, or the Outcome to return: skipped with the runtime's reason when there
// is no device, failed when --gpus names a GPU the runtime does not see.
struct DeviceChoice {
  std::vector<int> devices;
  std::optional<Outcome> stop;
};
DeviceChoice choose_devices(const ProbeContext& ctx);

// Runs a probe body, turning CudaFailure into Outcome::failed with the call and code.
Outcome guarded(const std::function<Outcome()>& body);

struct DeviceProperties {
  std::string name;
  int compute_capability = 0;  // major*10 + minor
  std::uint64_t total_bytes = 0;
  std::uint64_t l2_bytes = 0;
  std::string pci_bus_id;
};
DeviceProperties device_properties(int device);
std::uint64_t device_free_bytes(int device);

// NVML index of a CUDA device (matched by PCI bus id), or std::nullopt.
std::optional<int> nvml_index_for(const Nvml& nvml, int device);

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(int device, std::uint64_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  void* get() const { return data_; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::uint64_t bytes_ = 0;
  int device_ = 0;
};

// One stream and a pair of events on a device, for timing device work.
class TimedStream {
 public:
  explicit TimedStream(int device);
  ~TimedStream();
  TimedStream(const TimedStream&) = delete;
  TimedStream& operator=(const TimedStream&) = delete;
  cudaStream_t stream() const { return stream_; }
  int device() const { return device_; }
  void start();
  void stop();
  double elapsed_s();  // synchronizes on the stop event

 private:
  void release();
  int device_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t begin_ = nullptr, end_ = nullptr;
};

// cudaMalloc / cudaFree behind the allocator interface (never managed memory); out-of-memory is
// "does not fit", any other error stops the search and is reported by error().
class CudaAllocator final : public DeviceAllocator {
 public:
  explicit CudaAllocator(int device) : device_(device) {}
  void* allocate(std::uint64_t bytes) override;
  void release(void* pointer) override;
  std::uint64_t free_bytes() override { return device_free_bytes(device_); }
  std::string error() const override { return error_; }

 private:
  int device_;
  std::string error_;
};

}  // namespace nodeaudit::gpu
