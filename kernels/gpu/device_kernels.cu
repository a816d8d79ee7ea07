// All device code of the GPU probes: random fills, conversion to double for the reference check,
// burn-in comparison, bandwidth kernels and memtest patterns. Grid-stride loops; launches checked.
#include "kernels/gpu/device_kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <string>
#include <type_traits>

#include "kernels/gpu/cuda_check.hpp"

namespace nodeaudit::gpu {
namespace {

constexpr int block_size = 256;

unsigned grid_for(std::uint64_t count) {
  const std::uint64_t blocks = (count + block_size - 1) / block_size;
  return static_cast<unsigned>(blocks < 65536 ? (blocks ? blocks : 1) : 65536);
}

void check_launch(const char* kernel) { check_cuda(cudaGetLastError(), kernel); }

template <typename T>
__device__ T from_float(float v) { return T(v); }
template <>
__device__ __half from_float<__half>(float v) { return __float2half(v); }
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16(v); }

template <typename T>
__device__ double to_double(T v) { return static_cast<double>(static_cast<float>(v)); }
template <>
__device__ double to_double<double>(double v) { return v; }

// The seed is hashed before it meets the index: with splitmix64(seed ^ i), seeds s and s+1 (A and
// B of one buffer set) filled the same values in another order (for an even s, neighbours swapped).
template <typename T>
__global__ void fill_random_kernel(T* data, std::uint64_t count, std::uint64_t seed) {
  const std::uint64_t key = splitmix64(seed);
  for (std::uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += std::uint64_t(gridDim.x) * blockDim.x) {
    const std::uint64_t bits = splitmix64(key ^ i);
    const double unit = static_cast<double>(bits >> 11) * 0x1p-53;  // [0, 1)
    if constexpr (sizeof(T) == 8) data[i] = 2.0 * unit - 1.0;
    else data[i] = from_float<T>(static_cast<float>(2.0 * unit - 1.0));
  }
}

template <typename T>
__global__ void to_double_kernel(const T* src, std::uint64_t offset, std::uint64_t stride, std::uint64_t count, double* dst) {
  for (std::uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += std::uint64_t(gridDim.x) * blockDim.x)
    dst[i] = to_double(src[offset + i * stride]);
}

template <typename T>
__global__ void mismatch_kernel(const T* a, const T* b, std::uint64_t count, double threshold, unsigned long long* out) {
  unsigned long long local = 0;
  for (std::uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += std::uint64_t(gridDim.x) * blockDim.x) {
    const double x = to_double(a[i]), y = to_double(b[i]);
    const double scale = fmax(fmax(fabs(x), fabs(y)), 1.0);
    local += !(fabs(x - y) <= threshold * scale);  // NaN counts as a mismatch
  }
  if (local) atomicAdd(out, local);
}

// Calls `launch` with a pointer of the element type of `storage`.
template <typename Launch>
void dispatch(Storage storage, Launch&& launch) {
  switch (storage) {
    case Storage::f64: launch(static_cast<double*>(nullptr)); break;
    case Storage::f32: launch(static_cast<float*>(nullptr)); break;
    case Storage::f16: launch(static_cast<__half*>(nullptr)); break;
    case Storage::bf16: launch(static_cast<__nv_bfloat16*>(nullptr)); break;
    case Storage::e4m3: launch(static_cast<__nv_fp8_e4m3*>(nullptr)); break;
  }
}

__global__ void copy_kernel(const uint4* src, uint4* dst, std::uint64_t count) {
  for (std::uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += std::uint64_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

__global__ void triad_kernel(float4* a, const float4* b, const float4* c, float s, std::uint64_t count) {
  for (std::uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += std::uint64_t(gridDim.x) * blockDim.x) {
    const float4 x = b[i], y = c[i];
    a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
}

__global__ void fill_float_kernel(float* data, std::uint64_t count, float value) {
  for (std::uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += std::uint64_t(gridDim.x) * blockDim.x)
    data[i] = value;
}

__global__ void not_equal_kernel(const float* data, std::uint64_t count, float expected, unsigned long long* wrong) {
  unsigned long long local = 0;
  for (std::uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += std::uint64_t(gridDim.x) * blockDim.x)
    local += data[i] != expected;
  if (local) atomicAdd(wrong, local);
}

__global__ void write_pattern_kernel(std::uint64_t* words, std::uint64_t count, std::uint64_t first, Pattern pattern,
                                     std::uint64_t seed) {
  for (std::uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += std::uint64_t(gridDim.x) * blockDim.x)
    words[i] = pattern_word(pattern, reinterpret_cast<std::uint64_t>(words + i), first + i, seed);
}

__global__ void check_pattern_kernel(const std::uint64_t* words, std::uint64_t count, std::uint64_t first, Pattern pattern,
                                     std::uint64_t seed, unsigned long long* counters) {
  for (std::uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += std::uint64_t(gridDim.x) * blockDim.x) {
    const auto address = reinterpret_cast<std::uint64_t>(words + i);
    if (words[i] == pattern_word(pattern, address, first + i, seed)) continue;
    const unsigned long long slot = atomicAdd(&counters[0], 1ull);
    if (slot < max_reported_addresses) counters[1 + slot] = address;
  }
}

}  // namespace

void launch_fill_random(void* data, std::uint64_t count, Storage storage, std::uint64_t seed, cudaStream_t stream) {
  dispatch(storage, [&](auto* typed) {
    using T = std::remove_pointer_t<decltype(typed)>;
    fill_random_kernel<T><<<grid_for(count), block_size, 0, stream>>>(static_cast<T*>(data), count, seed);
  });
  check_launch("fill_random_kernel launch");
}

void launch_to_double(const void* src, Storage storage, std::uint64_t offset, std::uint64_t stride, std::uint64_t count,
                      double* dst, cudaStream_t stream) {
  dispatch(storage, [&](auto* typed) {
    using T = std::remove_pointer_t<decltype(typed)>;
    to_double_kernel<T><<<grid_for(count), block_size, 0, stream>>>(static_cast<const T*>(src), offset, stride, count, dst);
  });
  check_launch("to_double_kernel launch");
}

void launch_count_mismatches(const void* a, const void* b, Storage storage, std::uint64_t count, double threshold,
                             unsigned long long* mismatches, cudaStream_t stream) {
  dispatch(storage, [&](auto* typed) {
    using T = std::remove_pointer_t<decltype(typed)>;
    mismatch_kernel<T><<<grid_for(count), block_size, 0, stream>>>(static_cast<const T*>(a), static_cast<const T*>(b), count,
                                                                   threshold, mismatches);
  });
  check_launch("mismatch_kernel launch");
}

void launch_copy(const void* src, void* dst, std::uint64_t bytes, cudaStream_t stream) {
  const std::uint64_t count = bytes / sizeof(uint4);
  copy_kernel<<<grid_for(count), block_size, 0, stream>>>(static_cast<const uint4*>(src), static_cast<uint4*>(dst), count);
  check_launch("copy_kernel launch");
}

void launch_triad(float* a, const float* b, const float* c, float scalar, std::uint64_t count, cudaStream_t stream) {
  const std::uint64_t vectors = count / 4;
  triad_kernel<<<grid_for(vectors), block_size, 0, stream>>>(reinterpret_cast<float4*>(a), reinterpret_cast<const float4*>(b),
                                                             reinterpret_cast<const float4*>(c), scalar, vectors);
  check_launch("triad_kernel launch");
}

void launch_fill_float(float* data, std::uint64_t count, float value, cudaStream_t stream) {
  fill_float_kernel<<<grid_for(count), block_size, 0, stream>>>(data, count, value);
  check_launch("fill_float_kernel launch");
}

void launch_count_not_equal(const float* data, std::uint64_t count, float expected, unsigned long long* wrong,
                            cudaStream_t stream) {
  not_equal_kernel<<<grid_for(count), block_size, 0, stream>>>(data, count, expected, wrong);
  check_launch("not_equal_kernel launch");
}

void launch_write_pattern(std::uint64_t* words, std::uint64_t count, std::uint64_t first_index, Pattern pattern,
                          std::uint64_t pass_seed, cudaStream_t stream) {
  write_pattern_kernel<<<grid_for(count), block_size, 0, stream>>>(words, count, first_index, pattern, pass_seed);
  check_launch("write_pattern_kernel launch");
}

void launch_check_pattern(const std::uint64_t* words, std::uint64_t count, std::uint64_t first_index, Pattern pattern,
                          std::uint64_t pass_seed, unsigned long long* counters, cudaStream_t stream) {
  check_pattern_kernel<<<grid_for(count), block_size, 0, stream>>>(words, count, first_index, pattern, pass_seed, counters);
  check_launch("check_pattern_kernel launch");
}

void load_kernels_on_current_device() {
  cudaFuncAttributes attributes{};
  auto load = [&](const void* kernel, const char* name) {
    check_cuda(cudaFuncGetAttributes(&attributes, kernel), std::string("cudaFuncGetAttributes(") + name + ")");
  };
  for (Storage storage : {Storage::f64, Storage::f32, Storage::f16, Storage::bf16, Storage::e4m3})
    dispatch(storage, [&](auto* typed) {
      using T = std::remove_pointer_t<decltype(typed)>;
      load(reinterpret_cast<const void*>(&fill_random_kernel<T>), "fill_random_kernel");
      load(reinterpret_cast<const void*>(&to_double_kernel<T>), "to_double_kernel");
      load(reinterpret_cast<const void*>(&mismatch_kernel<T>), "mismatch_kernel");
    });
  load(reinterpret_cast<const void*>(&copy_kernel), "copy_kernel");
  load(reinterpret_cast<const void*>(&triad_kernel), "triad_kernel");
  load(reinterpret_cast<const void*>(&fill_float_kernel), "fill_float_kernel");
  load(reinterpret_cast<const void*>(&not_equal_kernel), "not_equal_kernel");
  load(reinterpret_cast<const void*>(&write_pattern_kernel), "write_pattern_kernel");
  load(reinterpret_cast<const void*>(&check_pattern_kernel), "check_pattern_kernel");
}

}  // namespace nodeaudit::gpu
