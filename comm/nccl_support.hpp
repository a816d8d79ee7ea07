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

#include "harness/core/context.hpp"
#include "harness/core/probe.hpp"

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
// below is local (0..local_count); global_rank(i) is its rank in the collective.
//
// abort_all() may be called from another thread (the watchdog). NCCL forbids concurrent calls on
// one blocking communicator, so the handles are reachable only through grouped() and
// check_async_errors(), which hold the lock for the whole NCCL call and check the aborted flag
// first: an abort waits for a call in progress and every call after it throws CommFailure (which
// the engine reports as a timeout), never reaching a freed communicator. The handles stay in
// place (nulled) until the destructor, so no index ever runs off an emptied vector. A blocking
// ncclGroupEnd that never returns holds the abort off; the harness's process deadline ends that
// case (status timeout).
class Communicators {
 public:
  // The communicators as seen inside grouped(): only valid while its lock is held.
  class Locked {
   public:
    ncclComm_t comm(int i) const { return owner_.comms_[static_cast<std::size_t>(i)]; }

   private:
    friend class Communicators;
    explicit Locked(const Communicators& owner) : owner_(owner) {}
    const Communicators& owner_;
  };

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
  cudaStream_t stream(int i) const { return streams_[i]; }

  // ncclGroupStart, `enqueue` (which makes its NCCL calls on locked.comm(i)), ncclGroupEnd, all
  // under the lock and only if not aborted. The group is closed on every path: an exception from
  // `enqueue` ends the group before it leaves (a thread left inside a group would run the next
  // abort or destroy inside it). `what` names the launch in errors.
  void grouped(const std::string& what, const std::function<void(const Locked&)>& enqueue);
  // ncclCommGetAsyncError on every local communicator under the lock; throws CommFailure on an
  // asynchronous error or when the communicators were aborted.
  void check_async_errors();

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
  // Throws when aborted; the caller holds mutex_.
  void throw_if_aborted_locked(const std::string& what) const;

  std::mutex mutex_;
  bool aborted_ = false;
  int world_ranks_ = 0, first_rank_ = 0;
  std::vector<int> devices_;
  std::vector<ncclComm_t> comms_;  // guarded by mutex_; nulled (never erased) by abort_all
  std::vector<cudaStream_t> streams_;
  std::vector<cudaEvent_t> starts_, stops_;
};

}  // namespace nodeaudit::comm
