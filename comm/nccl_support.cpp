// Checked CUDA/NCCL calls, GPU choice, buffers, and the per-GPU communicators.
#include "comm/nccl_support.hpp"

#include <thread>

#include <fmt/format.h>

#include "harness/node/gpu_absence.hpp"
#include "kernels/gpu/gpu_select.hpp"

namespace nodeaudit::comm {

void check_cuda(cudaError_t code, const std::string& call) {
  if (code != cudaSuccess)
    throw CommFailure(fmt::format("{} failed: {} ({} = {})", call, cudaGetErrorString(code), cudaGetErrorName(code),
                                  static_cast<int>(code)));
}

void check_nccl(ncclResult_t code, const std::string& call) {
  if (code != ncclSuccess && code != ncclInProgress)
    throw CommFailure(fmt::format("{} failed: {} (ncclResult {})", call, ncclGetErrorString(code), static_cast<int>(code)));
}

GpuChoice choose_gpus(const ProbeContext& ctx) {
  int count = 0;
  const cudaError_t code = cudaGetDeviceCount(&count);
  if (code != cudaSuccess)
    return {{}, Outcome::skipped(no_cuda_device_reason(fmt::format("cudaGetDeviceCount: {}", cudaGetErrorString(code))))};
  if (count == 0) return {{}, Outcome::skipped(no_cuda_device_reason("cudaGetDeviceCount: 0 devices"))};
  gpu::GpuSelection selection = gpu::select_gpus(ctx.settings().gpus, count);
  if (!selection.error.empty()) return {{}, Outcome::failed(selection.error)};
  return {selection.devices, std::nullopt};
}

std::uint64_t free_device_bytes(int device) {
  check_cuda(cudaSetDevice(device), fmt::format("cudaSetDevice({})", device));
  std::size_t free_bytes = 0, total_bytes = 0;
  check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), fmt::format("cudaMemGetInfo(GPU {})", device));
  return free_bytes;
}

DeviceBuffer::DeviceBuffer(int device, std::uint64_t bytes) : device_(device) {
  check_cuda(cudaSetDevice(device), fmt::format("cudaSetDevice({})", device));
  check_cuda(cudaMalloc(&data_, bytes), fmt::format("cudaMalloc({} bytes on GPU {})", bytes, device));
}

DeviceBuffer::~DeviceBuffer() {
  if (!data_) return;
  cudaSetDevice(device_);
  cudaFree(data_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept : data_(other.data_), device_(other.device_) {
  other.data_ = nullptr;
}

void Communicators::create_streams() {
  const int n = local_count();
  streams_.assign(n, nullptr), starts_.assign(n, nullptr), stops_.assign(n, nullptr);
  for (int r = 0; r < n; ++r) {
    check_cuda(cudaSetDevice(devices_[r]), fmt::format("cudaSetDevice({})", devices_[r]));
    check_cuda(cudaStreamCreateWithFlags(&streams_[r], cudaStreamNonBlocking), fmt::format("cudaStreamCreate(GPU {})", devices_[r]));
    check_cuda(cudaEventCreate(&starts_[r]), fmt::format("cudaEventCreate(GPU {})", devices_[r]));
    check_cuda(cudaEventCreate(&stops_[r]), fmt::format("cudaEventCreate(GPU {})", devices_[r]));
  }
}

void Communicators::adopt(std::vector<ncclComm_t> comms, const std::string& call) {
  std::lock_guard lock(mutex_);
  if (aborted_) {  // the watchdog fired during initialisation
    for (ncclComm_t c : comms) ncclCommAbort(c);
    throw CommFailure(call + " finished after the watchdog fired");
  }
  comms_ = std::move(comms);
}

void Communicators::init(const std::vector<int>& devices) {
  devices_ = devices;
  world_ranks_ = local_count(), first_rank_ = 0;
  create_streams();
  std::vector<ncclComm_t> comms(devices_.size(), nullptr);
  const std::string call = fmt::format("ncclCommInitAll({} GPUs)", local_count());
  check_nccl(ncclCommInitAll(comms.data(), local_count(), devices_.data()), call);
  adopt(std::move(comms), call);
}

void Communicators::init_rank(int device, int world_ranks, const ncclUniqueId& id, int rank) {
  devices_ = {device};
  world_ranks_ = world_ranks, first_rank_ = rank;
  create_streams();
  std::vector<ncclComm_t> comms(1, nullptr);
  const std::string call = fmt::format("ncclCommInitRank(rank {} of {}, GPU {})", rank, world_ranks, device);
  check_cuda(cudaSetDevice(device), fmt::format("cudaSetDevice({})", device));
  check_nccl(ncclCommInitRank(&comms[0], world_ranks, id, rank), call);
  adopt(std::move(comms), call);
}

void Communicators::abort_all() {
  std::lock_guard lock(mutex_);  // waits for an NCCL call in progress on the main thread
  if (aborted_) return;
  aborted_ = true;
  for (ncclComm_t& c : comms_) {
    if (c) ncclCommAbort(c);  // its result is moot: the communicator is gone either way
    c = nullptr;
  }
}

void Communicators::throw_if_aborted_locked(const std::string& what) const {
  if (aborted_) throw CommFailure(fmt::format("{}: the communicators were aborted", what));
}

void Communicators::grouped(const std::string& what, const std::function<void(const Locked&)>& enqueue) {
  std::lock_guard lock(mutex_);
  throw_if_aborted_locked(what);
  check_nccl(ncclGroupStart(), fmt::format("ncclGroupStart ({})", what));
  // Closes the group if `enqueue` throws; its own result is moot then (the first error is reported).
  struct GroupCloser {
    bool open = true;
    ~GroupCloser() {
      if (open) ncclGroupEnd();
    }
  } closer;
  enqueue(Locked(*this));
  closer.open = false;
  check_nccl(ncclGroupEnd(), fmt::format("ncclGroupEnd ({})", what));
}

void Communicators::check_async_errors() {
  std::lock_guard lock(mutex_);
  throw_if_aborted_locked("checking for NCCL errors");
  for (int r = 0; r < local_count(); ++r) {
    ncclResult_t async = ncclSuccess;
    check_nccl(ncclCommGetAsyncError(comms_[static_cast<std::size_t>(r)], &async),
               fmt::format("ncclCommGetAsyncError(GPU {})", devices_[r]));
    check_nccl(async, fmt::format("NCCL on GPU {} (asynchronous error)", devices_[r]));
  }
}

Communicators::~Communicators() {
  {
    std::lock_guard lock(mutex_);
    if (!aborted_)
      for (ncclComm_t c : comms_)
        if (c) ncclCommDestroy(c);
  }
  for (int r = 0; r < local_count(); ++r) {
    cudaSetDevice(devices_[r]);
    if (starts_[r]) cudaEventDestroy(starts_[r]);
    if (stops_[r]) cudaEventDestroy(stops_[r]);
    if (streams_[r]) cudaStreamDestroy(streams_[r]);
  }
}

void Communicators::record_start() {
  for (int r = 0; r < local_count(); ++r)
    check_cuda(cudaEventRecord(starts_[r], streams_[r]), fmt::format("cudaEventRecord(start, GPU {})", devices_[r]));
}

void Communicators::record_stop() {
  for (int r = 0; r < local_count(); ++r)
    check_cuda(cudaEventRecord(stops_[r], streams_[r]), fmt::format("cudaEventRecord(stop, GPU {})", devices_[r]));
}

void Communicators::wait(const std::function<bool()>& stop_waiting) {
  for (int r = 0; r < local_count(); ++r) {
    for (;;) {
      const cudaError_t state = cudaStreamQuery(streams_[r]);
      if (state == cudaSuccess) break;
      if (state != cudaErrorNotReady) check_cuda(state, fmt::format("cudaStreamQuery(GPU {})", devices_[r]));
      if (stop_waiting()) throw CommFailure(fmt::format("waiting for GPU {} was stopped", devices_[r]));
      check_async_errors();
      std::this_thread::yield();
    }
  }
}

double Communicators::elapsed_max_s() {
  double slowest_ms = 0;
  for (int r = 0; r < local_count(); ++r) {
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, starts_[r], stops_[r]), fmt::format("cudaEventElapsedTime(GPU {})", devices_[r]));
    slowest_ms = std::max(slowest_ms, static_cast<double>(ms));
  }
  return slowest_ms / 1e3;
}

}  // namespace nodeaudit::comm
