// Checked CUDA calls, device discovery and small RAII wrappers.
#include "kernels/gpu/cuda_common.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include <fmt/format.h>

#include "harness/node/gpu_absence.hpp"
#include "harness/node/nvml.hpp"
#include "kernels/gpu/gpu_select.hpp"

namespace nodeaudit::gpu {

std::string describe_cuda_error(const std::string& call, cudaError_t code) {
  return fmt::format("{} failed: {} ({} = {})", call, cudaGetErrorString(code), cudaGetErrorName(code), static_cast<int>(code));
}

void check_cuda(cudaError_t code, const std::string& call) {
  if (code != cudaSuccess) throw CudaFailure(describe_cuda_error(call, code));
}

DeviceChoice choose_devices(const ProbeContext& ctx) {
  int count = 0;
  const cudaError_t code = cudaGetDeviceCount(&count);
  if (code != cudaSuccess)
    return {{}, Outcome::skipped(no_cuda_device_reason(fmt::format("cudaGetDeviceCount: {}", cudaGetErrorString(code))))};
  if (count == 0) return {{}, Outcome::skipped(no_cuda_device_reason("cudaGetDeviceCount: 0 devices"))};
  GpuSelection selection = select_gpus(ctx.settings().gpus, count);
  if (!selection.error.empty()) return {{}, Outcome::bad_input(selection.error)};
  return {selection.devices, std::nullopt};
}

Outcome guarded(const std::function<Outcome()>& body) {
  try {
    return body();
  } catch (const CudaFailure& e) {
    return Outcome::failed(e.what());
  }
}

DeviceProperties device_properties(int device) {
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, device), fmt::format("cudaGetDeviceProperties(device {})", device));
  char bus_id[32] = {};
  check_cuda(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device), fmt::format("cudaDeviceGetPCIBusId(device {})", device));
  return {prop.name, prop.major * 10 + prop.minor, prop.totalGlobalMem, static_cast<std::uint64_t>(prop.l2CacheSize), bus_id};
}

std::uint64_t device_free_bytes(int device) {
  check_cuda(cudaSetDevice(device), fmt::format("cudaSetDevice({})", device));
  std::size_t free_bytes = 0, total_bytes = 0;
  check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), fmt::format("cudaMemGetInfo(device {})", device));
  return free_bytes;
}

namespace {
// "00000000:1B:00.0" and "0000:1b:00.0" name the same function: compare bus:device.function.
std::string bus_suffix(std::string id) {
  std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto colon = id.find(':');
  return colon == std::string::npos ? id : id.substr(colon + 1);
}
}  // namespace

std::optional<int> nvml_index_for(const Nvml& nvml, int device) {
  if (!nvml.available()) return std::nullopt;
  const std::string want = bus_suffix(device_properties(device).pci_bus_id);
  for (int i = 0; i < nvml.device_count(); ++i)
    if (bus_suffix(nvml.device_info(i).pci_bus_id) == want) return i;
  return std::nullopt;
}

DeviceBuffer::DeviceBuffer(int device, std::uint64_t bytes) : bytes_(bytes), device_(device) {
  check_cuda(cudaSetDevice(device), fmt::format("cudaSetDevice({})", device));
  check_cuda(cudaMalloc(&data_, bytes), fmt::format("cudaMalloc({} bytes on GPU {})", bytes, device));
}

DeviceBuffer::~DeviceBuffer() {
  if (!data_) return;
  cudaSetDevice(device_);
  cudaFree(data_);  // nothing useful to do with a failure in a destructor
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(bytes_, other.bytes_);
  std::swap(device_, other.device_);
  return *this;
}

TimedStream::TimedStream(int device) : device_(device) {
  try {
    check_cuda(cudaSetDevice(device), fmt::format("cudaSetDevice({})", device));
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), fmt::format("cudaStreamCreateWithFlags(GPU {})", device));
    check_cuda(cudaEventCreate(&begin_), fmt::format("cudaEventCreate(GPU {})", device));
    check_cuda(cudaEventCreate(&end_), fmt::format("cudaEventCreate(GPU {})", device));
  } catch (...) {
    release();  // a throwing constructor runs no destructor
    throw;
  }
}

TimedStream::~TimedStream() { release(); }

void TimedStream::release() {
  cudaSetDevice(device_);
  if (begin_) cudaEventDestroy(std::exchange(begin_, nullptr));
  if (end_) cudaEventDestroy(std::exchange(end_, nullptr));
  if (stream_) cudaStreamDestroy(std::exchange(stream_, nullptr));
}

void TimedStream::start() { check_cuda(cudaEventRecord(begin_, stream_), fmt::format("cudaEventRecord(GPU {})", device_)); }
void TimedStream::stop() { check_cuda(cudaEventRecord(end_, stream_), fmt::format("cudaEventRecord(GPU {})", device_)); }

double TimedStream::elapsed_s() {
  check_cuda(cudaEventSynchronize(end_), fmt::format("cudaEventSynchronize(GPU {})", device_));
  float ms = 0;
  check_cuda(cudaEventElapsedTime(&ms, begin_, end_), fmt::format("cudaEventElapsedTime(GPU {})", device_));
  return ms / 1e3;
}

void* CudaAllocator::allocate(std::uint64_t bytes) {
  // The allocator's device, not whichever one a multi-GPU loop left current.
  if (const cudaError_t set = cudaSetDevice(device_); set != cudaSuccess) {
    error_ = describe_cuda_error(fmt::format("cudaSetDevice({})", device_), set);
    return nullptr;
  }
  void* p = nullptr;
  const cudaError_t code = cudaMalloc(&p, bytes);
  if (code == cudaSuccess) return p;
  if (code == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // clear the non-sticky out-of-memory error
    return nullptr;
  }
  error_ = describe_cuda_error(fmt::format("cudaMalloc({} bytes on GPU {})", bytes, device_), code);
  return nullptr;
}

void CudaAllocator::release(void* pointer) {
  cudaSetDevice(device_);  // a failure here shows in cudaFree's result
  const cudaError_t code = cudaFree(pointer);
  if (code != cudaSuccess && error_.empty()) error_ = describe_cuda_error("cudaFree", code);
}

}  // namespace nodeaudit::gpu
