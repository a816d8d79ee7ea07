// CUDA/NCCL plumbing of the collective engine and comm.p2p: checked calls that name the call and
// the code, the GPU choice with the runtime's skip reason, device buffers, and one NCCL
// communicator + stream per GPU that a watchdog thread may abort. CUDA/NCCL-using sources only.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "context.hpp"
#include "probe.hpp"

namespace nodeaudit::comm {

// A CUDA or NCCL call failed; the message names the call and the code.
class CommFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void check_cuda(cudaError_t code, const std::string& call);
void check_nccl(ncclResult_t code, const std::string& call);

// The GPUs to use, or the Outcome to return (skipped without a device, failed for a bad --gpus).
struct GpuChoice {
  std::vector<int> devices;
  std::optional<Outcome> stop;
};
GpuChoice choose_gpus(const ProbeContext& ctx);

std::uint64_t free_device_bytes(int device);

class DeviceBuffer {
 public:
  DeviceBuffer(int device, std::uint64_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  DeviceBuffer(const DeviceBuffer&) = delete;
  float* floats() const { return static_cast<float*>(data_); }
  void* get() const { return data_; }

 private:
  void* data_ = nullptr;
  int device_ = 0;
};

// The communicators this process drives, one non-blocking stream per GPU with a start and a stop
// event: every rank of the collective in one process (init: ncclCommInitAll), or this MPI
// process's single rank of a job-wide communicator (init_rank: ncclCommInitRank). Index `i`
// below is local (0..local_count); global_rank(i) is its rank in the collective. abort_all()
// may be called from another thread (the watchdog); afterwards the communicators are gone and
// every later call fails, which the engine reports as a timeout.
class Communicators {
 public:
  Communicators() = default;
  ~Communicators();
  Communicators(const Communicators&) = delete;
  Communicators& operator=(const Communicators&) = delete;

  void init(const std::vector<int>& devices);
  void init_rank(int device, int world_ranks, const ncclUniqueId& id, int rank);
  void abort_all();
  int local_count() const { return static_cast<int>(devices_.size()); }
  int world_size() const { return world_ranks_; }
  int global_rank(int i) const { return first_rank_ + i; }
  int device(int i) const { return devices_[i]; }
  ncclComm_t comm(int i) const { return comms_[i]; }
  cudaStream_t stream(int i) const { return streams_[i]; }

  void record_start();
  void record_stop();
  // Waits until every stream is idle, polling so that an abort or an asynchronous NCCL error ends
  // the wait; `stop_waiting` is polled too (the watchdog fired). Throws CommFailure.
  void wait(const std::function<bool()>& stop_waiting);
  // Max over this process's GPUs of stop - start (the slowest GPU sets the collective's time).
  double elapsed_max_s();

 private:
  void create_streams();
  // Keeps `comms` unless the watchdog fired while they were being created.
  void adopt(std::vector<ncclComm_t> comms, const std::string& call);

  std::mutex mutex_;
  bool aborted_ = false;
  int world_ranks_ = 0, first_rank_ = 0;
  std::vector<int> devices_;
  std::vector<ncclComm_t> comms_;
  std::vector<cudaStream_t> streams_;
  std::vector<cudaEvent_t> starts_, stops_;
};

}  // namespace nodeaudit::comm
