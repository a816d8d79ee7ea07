// Why a probe found no CUDA device, in words a user can act on, shared by every path that asks
// the CUDA runtime for its devices (GPU probes, NCCL probes, pipeline.step's `auto`).
// On a host with no NVIDIA driver installed at all, the CUDA runtime answers "CUDA driver version
// is insufficient for CUDA runtime version", which reads as "upgrade the driver"; the real cause
// is that the driver's libraries are absent, so that is what is said.
#pragma once

#include <optional>
#include <string>

namespace nodeaudit {

// "no NVIDIA driver (libnvidia-ml.so.1 not found)" when the driver's library cannot be found by
// the dynamic loader; std::nullopt when it is there (then the runtime's own reason is the true one).
std::optional<std::string> nvidia_driver_missing();

// The skip reason for a failed or empty device count: the missing driver when that is the cause,
// else "no CUDA device (<call>: <runtime's message>)", e.g.
// no_cuda_device_reason("cudaGetDeviceCount: no CUDA-capable device is detected").
std::string no_cuda_device_reason(const std::string& call_and_error);

}  // namespace nodeaudit
