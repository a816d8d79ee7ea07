// The real-GPU step device (see gpu_step_device.hpp). One host thread drives every GPU: per step it
// enqueues, GPU by GPU, the batch copy, the GEMMs and the all-reduce buckets, waits for the copies
// (then the batch buffers go back to the loaders) and for the step's end, and reads the CUDA events.
#include "pipeline/step/gpu_step_device.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <type_traits>

#include <fmt/format.h>

#include "comm/nccl_support.hpp"
#include "kernels/gpu/cuda_common.hpp"
#include "kernels/gpu/gemm_runner.hpp"

namespace nodeaudit::pipeline {
namespace {

using gpu::check_cuda;

class DeviceEvent {
 public:
  explicit DeviceEvent(int device) : device_(device) {
    check_cuda(cudaSetDevice(device), fmt::format("cudaSetDevice({})", device));
    check_cuda(cudaEventCreate(&event_), fmt::format("cudaEventCreate(GPU {})", device));
  }
  ~DeviceEvent() {
    if (!event_) return;
    cudaSetDevice(device_);
    cudaEventDestroy(event_);
  }
  DeviceEvent(DeviceEvent&& other) noexcept : device_(other.device_), event_(other.event_) { other.event_ = nullptr; }
  DeviceEvent(const DeviceEvent&) = delete;
  DeviceEvent& operator=(const DeviceEvent&) = delete;
  DeviceEvent& operator=(DeviceEvent&&) = delete;
  cudaEvent_t get() const { return event_; }
  void record(cudaStream_t stream) const {
    check_cuda(cudaEventRecord(event_, stream), fmt::format("cudaEventRecord(GPU {})", device_));
  }

 private:
  int device_;
  cudaEvent_t event_ = nullptr;
};

double elapsed_s(const DeviceEvent& from, const DeviceEvent& to) {
  float ms = 0;
  check_cuda(cudaEventElapsedTime(&ms, from.get(), to.get()), "cudaEventElapsedTime");
  return ms / 1e3;
}

// One GPU's streams, buffers and the events of one step.
struct Lane {
  int device;
  std::unique_ptr<gpu::LtGemm> gemm;  // its stream is the compute stream
  cudaStream_t copy = nullptr;
  gpu::DeviceBuffer batch, gradients;
  DeviceEvent begin, copied, compute_start, compute_end, comm_end, step_end;
  std::vector<DeviceEvent> bucket_ready;
  std::size_t copied_bytes = 0;  // this step's batch, as copied between `begin` and `copied`

  Lane(int dev, const GpuStepConfig& config, int buckets)
      : device(dev), begin(dev), copied(dev), compute_start(dev), compute_end(dev), comm_end(dev), step_end(dev) {
    gemm = std::make_unique<gpu::LtGemm>(dev, config.gemms.dtype,
                                         gpu::GemmShape{config.gemms.side, config.gemms.side, config.gemms.side}, 2,
                                         0x57e9 + static_cast<std::uint64_t>(dev));
    batch = gpu::DeviceBuffer(dev, std::max<std::size_t>(config.batch_bytes, 256));  // the samples, packed
    if (config.devices.size() > 1 && config.allreduce.buffer_bytes > 0) {
      gradients = gpu::DeviceBuffer(dev, config.allreduce.buffer_bytes);
      check_cuda(cudaMemset(gradients.get(), 0, config.allreduce.buffer_bytes), "cudaMemset(gradients)");
    }
    for (int b = 0; b < buckets; ++b) bucket_ready.emplace_back(dev);
    check_cuda(cudaSetDevice(dev), fmt::format("cudaSetDevice({})", dev));
    check_cuda(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking), fmt::format("cudaStreamCreate(GPU {})", dev));
  }
  ~Lane() {
    cudaSetDevice(device);
    if (copy) cudaStreamDestroy(copy);
  }
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;
  cudaStream_t compute() const { return gemm->stream().stream(); }
};

class CudaStepDevice final : public StepDevice {
 public:
  CudaStepDevice(const GpuStepConfig& config, std::function<bool()> should_stop)
      : config_(config), should_stop_(std::move(should_stop)) {
    communicating_ = config.devices.size() > 1 && config.allreduce.bytes > 0;
    const int buckets = communicating_ ? config.allreduce.buckets : 1;
    for (const int device : config.devices) lanes_.push_back(std::make_unique<Lane>(device, config, buckets));
    if (communicating_) {
      comms_ = std::make_unique<comm::Communicators>();
      comms_->init(config.devices);
    }
    synchronize_all();
  }

  ~CudaStepDevice() override { unpin(); }

  int batches_per_step() const override { return static_cast<int>(lanes_.size()); }

  std::string pin(const std::vector<iovec>& areas) override {
    for (const iovec& area : areas) {
      const cudaError_t code = cudaHostRegister(area.iov_base, area.iov_len, cudaHostRegisterPortable);
      if (code != cudaSuccess) {
        cudaGetLastError();  // a failed call leaves its error for cudaGetLastError; clear it here
        unpin();
        return gpu::describe_cuda_error(fmt::format("cudaHostRegister({} bytes)", area.iov_len), code);
      }
      pinned_.push_back(area.iov_base);
    }
    return "";
  }

  // A copy may still be reading the buffers when a step failed: the copy streams finish first
  // (they never wait for NCCL, so this cannot hang on a stuck all-reduce).
  void unpin() override {
    if (pinned_.empty()) return;
    for (const auto& lane : lanes_) {
      cudaSetDevice(lane->device);
      cudaStreamSynchronize(lane->copy);
    }
    for (void* p : pinned_) cudaHostUnregister(p);
    pinned_.clear();
  }

  DeviceStepTimes run_step(const std::vector<HostBatch>& batches, const std::function<void()>& release) override {
    return aborting_on_failure([&] {
      for (std::size_t i = 0; i < lanes_.size(); ++i) enqueue_copy(*lanes_[i], batches[i]);
      enqueue_compute_and_comm();
      for (const auto& lane : lanes_) wait_for(lane->copied, lane->device);
      release();
      for (const auto& lane : lanes_) wait_for(lane->step_end, lane->device);
      return slowest_lane_times();
    });
  }

  GpuCalibration calibrate() {
    return aborting_on_failure([&] { return calibrate_parts(); });
  }

 private:
  // After a failure the communicators are aborted: destroying them would wait for the collectives
  // in flight, which a stuck all-reduce never finishes.
  template <typename Body>
  std::invoke_result_t<Body> aborting_on_failure(Body body) {
    try {
      return body();
    } catch (...) {
      if (comms_) comms_->abort_all();
      throw;
    }
  }

  GpuCalibration calibrate_parts() {
    GpuCalibration c;
    c.gpu_name = gpu::device_properties(config_.devices.front()).name;
    for (int attempt = 0; attempt < 2; ++attempt) {
      c.compute_s = 0;
      for (const auto& lane : lanes_) {
        check_cuda(cudaSetDevice(lane->device), fmt::format("cudaSetDevice({})", lane->device));
        lane->gemm->stream().start();
        lane->gemm->enqueue(config_.gemms.products);
        lane->gemm->stream().stop();
      }
      for (const auto& lane : lanes_) c.compute_s = std::max(c.compute_s, lane->gemm->stream().elapsed_s());
      if (!communicating_) continue;
      comms_->record_start();
      for (int b = 0; b < config_.allreduce.buckets; ++b) enqueue_bucket();
      comms_->record_stop();
      comms_->wait(should_stop_);
      c.allreduce_s = comms_->elapsed_max_s();
    }
    return c;
  }

  // The samples only, packed on the GPU (one 2D copy: a row per sample slot).
  void enqueue_copy(Lane& lane, const HostBatch& batch) {
    if (batch.bytes() > lane.batch.bytes())
      throw gpu::CudaFailure(fmt::format("a batch of {} bytes does not fit the {} bytes reserved on GPU {}",
                                         batch.bytes(), lane.batch.bytes(), lane.device));
    check_cuda(cudaSetDevice(lane.device), fmt::format("cudaSetDevice({})", lane.device));
    lane.begin.record(lane.copy);
    check_cuda(cudaMemcpy2DAsync(lane.batch.get(), batch.row_bytes, batch.data, batch.pitch, batch.row_bytes,
                                 batch.rows, cudaMemcpyHostToDevice, lane.copy),
               fmt::format("cudaMemcpy2DAsync({} bytes to GPU {})", batch.bytes(), lane.device));
    lane.copied.record(lane.copy);
    lane.copied_bytes = batch.bytes();
    check_cuda(cudaStreamWaitEvent(lane.compute(), lane.copied.get(), 0), "cudaStreamWaitEvent(copied)");
  }

  // Every GPU's GEMMs are queued first, one product per GPU in turn so all GPUs start together (one
  // host thread launches for all of them, where DDP has a process per GPU), with an event where each
  // gradient bucket is complete; then each bucket's all-reduce waits for its event on every GPU.
  // Queuing buckets GPU by GPU instead would let a GPU idle while the host queues the others (and
  // count that idle time as compute).
  void enqueue_compute_and_comm() {
    const int buckets = communicating_ ? config_.allreduce.buckets : 1;
    for (const auto& lane : lanes_) {
      check_cuda(cudaSetDevice(lane->device), fmt::format("cudaSetDevice({})", lane->device));
      // Reached when the copy is in and the host has queued this GPU's first GEMM, whichever is
      // later: a GPU waiting for the host to get to it is not computing.
      lane->compute_start.record(lane->compute());
    }
    int done = 0;
    for (int b = 0; b < buckets; ++b) {
      const int target = communicating_ ? products_before_bucket(config_.gemms, buckets, b) : config_.gemms.products;
      for (; done < target; ++done)
        for (const auto& lane : lanes_) lane->gemm->enqueue(1);
      for (const auto& lane : lanes_) {
        check_cuda(cudaSetDevice(lane->device), fmt::format("cudaSetDevice({})", lane->device));
        if (communicating_) lane->bucket_ready[b].record(lane->compute());
      }
    }
    for (const auto& lane : lanes_) {
      check_cuda(cudaSetDevice(lane->device), fmt::format("cudaSetDevice({})", lane->device));
      lane->compute_end.record(lane->compute());
    }
    for (int b = 0; communicating_ && b < buckets; ++b) {
      for (std::size_t i = 0; i < lanes_.size(); ++i)
        check_cuda(cudaStreamWaitEvent(comms_->stream(static_cast<int>(i)), lanes_[i]->bucket_ready[b].get(), 0),
                   "cudaStreamWaitEvent(gradients ready)");
      enqueue_bucket();
    }
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
      Lane& lane = *lanes_[i];
      check_cuda(cudaSetDevice(lane.device), fmt::format("cudaSetDevice({})", lane.device));
      if (communicating_) {
        // The step ends when both the GEMMs and the last all-reduce have.
        lane.comm_end.record(comms_->stream(static_cast<int>(i)));
        check_cuda(cudaStreamWaitEvent(lane.compute(), lane.comm_end.get(), 0), "cudaStreamWaitEvent(all-reduce)");
      }
      lane.step_end.record(lane.compute());
    }
  }

  // One bucket's all-reduce on every GPU, in buffer-sized pieces (one NCCL group each).
  void enqueue_bucket() {
    const StepAllReduce& a = config_.allreduce;
    const ncclDataType_t type = a.element_bytes == 2 ? ncclBfloat16 : ncclFloat;
    for (std::uint64_t offset = 0; offset < a.bucket_bytes(); offset += a.buffer_bytes) {
      const std::uint64_t bytes = std::min(a.buffer_bytes, a.bucket_bytes() - offset);
      comms_->grouped(fmt::format("all-reduce of {} bytes", bytes), [&](const comm::Communicators::Locked& locked) {
        for (std::size_t i = 0; i < lanes_.size(); ++i) {
          void* data = lanes_[i]->gradients.get();
          comm::check_nccl(ncclAllReduce(data, data, bytes / a.element_bytes, type, ncclSum, locked.comm(static_cast<int>(i)),
                                         comms_->stream(static_cast<int>(i))),
                           fmt::format("ncclAllReduce({} bytes, GPU {})", bytes, lanes_[i]->device));
        }
      });
    }
  }

  // Polls with short sleeps rather than blocking in the driver: a hung all-reduce or a stop request
  // must end the wait, and a spinning wait would take a core from the loaders.
  void wait_for(const DeviceEvent& event, int device) {
    for (;;) {
      const cudaError_t state = cudaEventQuery(event.get());
      if (state == cudaSuccess) return;
      if (state != cudaErrorNotReady) check_cuda(state, fmt::format("cudaEventQuery(GPU {})", device));
      if (communicating_) comms_->check_async_errors();
      if (should_stop_()) {
        if (comms_) comms_->abort_all();
        throw gpu::CudaFailure(fmt::format("stopped while waiting for GPU {}", device));
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  // The GPU whose step took longest from its copy's start. Its exposed communication includes
  // waiting in the all-reduce for GPUs that started later: a GPU waits there in training too.
  DeviceStepTimes slowest_lane_times() const {
    DeviceStepTimes slowest;
    double longest = -1;
    for (const auto& lane : lanes_) {
      const double total = elapsed_s(lane->begin, lane->step_end);
      if (total <= longest) continue;
      longest = total;
      slowest.copy_s = elapsed_s(lane->begin, lane->copied);
      slowest.copy_bytes = static_cast<double>(lane->copied_bytes);
      slowest.compute_s = elapsed_s(lane->compute_start, lane->compute_end);  // the launch gap before it is "other"
      slowest.comm_s = elapsed_s(lane->compute_end, lane->step_end);
    }
    return slowest;
  }

  void synchronize_all() {
    for (const auto& lane : lanes_) {
      check_cuda(cudaSetDevice(lane->device), fmt::format("cudaSetDevice({})", lane->device));
      check_cuda(cudaDeviceSynchronize(), fmt::format("cudaDeviceSynchronize(GPU {})", lane->device));
    }
  }

  GpuStepConfig config_;
  std::function<bool()> should_stop_;
  bool communicating_ = false;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::unique_ptr<comm::Communicators> comms_;  // declared after the lanes: destroyed first
  std::vector<void*> pinned_;
};

}  // namespace

GpuAvailability find_step_gpus(const ProbeContext& ctx) {
  const gpu::DeviceChoice choice = gpu::choose_devices(ctx);
  if (!choice.stop) return {choice.devices, "", std::nullopt};
  if (choice.stop->status == Status::skipped) return {{}, choice.stop->reason, std::nullopt};
  return {{}, choice.stop->reason, choice.stop};
}

OpenedGpuDevice open_gpu_step_device(const GpuStepConfig& requested, std::function<bool()> should_stop) {
  OpenedGpuDevice opened;
  GpuStepConfig config = requested;
  try {
    std::unique_ptr<CudaStepDevice> device;
    try {
      device = std::make_unique<CudaStepDevice>(config, should_stop);
    } catch (const gpu::NoAlgorithm& e) {
      if (config.gemms.dtype == gpu::Dtype::bf16) throw;
      // The step's FLOPs still run, in the dtype every tensor-core GPU has (fp8 before sm_89).
      opened.dtype_fallback = fmt::format("{}: the step's GEMMs run in bf16 instead", e.what());
      config.gemms.dtype = gpu::Dtype::bf16;
      device = std::make_unique<CudaStepDevice>(config, should_stop);
    }
    opened.gemm_dtype = config.gemms.dtype;
    opened.calibration = device->calibrate();
    opened.device = std::move(device);
  } catch (const std::runtime_error& e) {
    opened.error = e.what();
  }
  return opened;
}

}  // namespace nodeaudit::pipeline
