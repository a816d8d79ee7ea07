// Launchers of the few device kernels the GPU probes need; all device code is in device_kernels.cu.
// Each launcher checks the launch and throws CudaFailure naming the kernel.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/gpu/memory_patterns.hpp"

namespace nodeaudit::gpu {

enum class Storage { f64, f32, f16, bf16, e4m3 };

// Uniform values in [-1, 1), never all zero, from a counter-based hash of (seed, index).
void launch_fill_random(void* data, std::uint64_t count, Storage storage, std::uint64_t seed, cudaStream_t stream);
// dst[i] = (double) src[offset + i*stride] for i < count.
void launch_to_double(const void* src, Storage storage, std::uint64_t offset, std::uint64_t stride, std::uint64_t count,
                      double* dst, cudaStream_t stream);
// Adds to *mismatches the elements where |a-b| > threshold * max(|a|, |b|, 1).
void launch_count_mismatches(const void* a, const void* b, Storage storage, std::uint64_t count, double threshold,
                             unsigned long long* mismatches, cudaStream_t stream);

// Bandwidth kernels over 16-byte vectors: copy dst = src; triad a = b + scalar*c on floats.
void launch_copy(const void* src, void* dst, std::uint64_t bytes, cudaStream_t stream);
void launch_triad(float* a, const float* b, const float* c, float scalar, std::uint64_t count, cudaStream_t stream);
void launch_fill_float(float* data, std::uint64_t count, float value, cudaStream_t stream);
// Counts floats not equal to `expected` into *wrong.
void launch_count_not_equal(const float* data, std::uint64_t count, float expected, unsigned long long* wrong,
                            cudaStream_t stream);

// memtest patterns: `first_index` is the word index of words[0] in the tested region.
void launch_write_pattern(std::uint64_t* words, std::uint64_t count, std::uint64_t first_index, Pattern pattern,
                          std::uint64_t pass_seed, cudaStream_t stream);
// counters[0] += bad words; counters[1..16] receive the first bad byte addresses (slot = order found).
void launch_check_pattern(const std::uint64_t* words, std::uint64_t count, std::uint64_t first_index, Pattern pattern,
                          std::uint64_t pass_seed, unsigned long long* counters, cudaStream_t stream);
inline constexpr int max_reported_addresses = 16;

// Loads every kernel of device_kernels.cu into the current device's context now. With lazy loading
// (the default since CUDA 12.2) a kernel is loaded at its first launch and loading needs device
// memory: a probe that first allocates all free memory (memory integrity) would otherwise see its
// first launch fail with out-of-memory. Call with the device current, before the big allocation.
void load_kernels_on_current_device();

}  // namespace nodeaudit::gpu
