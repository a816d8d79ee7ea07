// Checked CUDA calls: the one header device code (.cu) shares with the probe bodies. It includes no
// harness header, so .cu files compile in the CUDA dialect alone (C++17) without C++20 headers.
#pragma once

#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

namespace nodeaudit::gpu {

// Thrown inside a probe body when a CUDA/cuBLAS call fails; `guarded` turns it into Outcome::failed.
class CudaFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "cudaMalloc(4294967296 bytes) failed: out of memory (cudaErrorMemoryAllocation = 2)"
std::string describe_cuda_error(const std::string& call, cudaError_t code);
void check_cuda(cudaError_t code, const std::string& call);

}  // namespace nodeaudit::gpu
