// The OOM edge, searched against a small allocator interface so the search is tested on a CPU with
// a fake. The device implementation wraps cudaMalloc/cudaFree/cudaMemGetInfo (never managed memory).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nodeaudit::gpu {

class DeviceAllocator {
 public:
  virtual ~DeviceAllocator() = default;
  // Returns nullptr when the allocation does not fit; any other failure is reported by `error()`.
  virtual void* allocate(std::uint64_t bytes) = 0;
  virtual void release(void* pointer) = 0;
  virtual std::uint64_t free_bytes() = 0;
  // Set after a failure that is not out-of-memory (sticky error, driver fault); the search stops.
  virtual std::string error() const { return {}; }
};

// Largest single allocation, in multiples of `granularity_bytes`, found by bisection between 0 and
// `upper_bytes` (the free memory). Each successful trial is released at once.
std::uint64_t largest_single_allocation(DeviceAllocator& allocator, std::uint64_t upper_bytes,
                                        std::uint64_t granularity_bytes);

// Allocates chunks of `chunk_bytes` until one fails, then halves the chunk down to `min_chunk_bytes`
// to pick up the remainder. The pointers are kept in `held` so the caller can use the memory
// (memory integrity) before releasing it with `release_all`.
struct ChunkedAllocation {
  std::vector<void*> pointers;
  std::vector<std::uint64_t> sizes;
  std::uint64_t total_bytes = 0;
};
// `limit_bytes` caps the total held: a chunk that would pass it is halved like one that does not fit.
ChunkedAllocation allocate_in_chunks(DeviceAllocator& allocator, std::uint64_t chunk_bytes,
                                     std::uint64_t min_chunk_bytes, std::uint64_t limit_bytes = UINT64_MAX);

// What gpu.memory-integrity leaves free. Taking the last few MiB makes the driver's own later
// allocations (a kernel's first launch, cuBLAS handles, other processes' contexts) fail in ways
// that read as memory faults; memtest-style GPU tools keep 64-256 MiB, and 256 MiB is the safe end.
constexpr std::uint64_t integrity_margin_bytes = 256ull << 20;
// The most the integrity test takes when `free_bytes` are free: free minus the margin, 0 when the
// margin is all there is.
std::uint64_t integrity_allocation_limit(std::uint64_t free_bytes, std::uint64_t margin_bytes);
void release_all(DeviceAllocator& allocator, ChunkedAllocation& held);

// Owns a chunked allocation and releases it when it goes out of scope, so a CUDA failure (an
// exception) or an early return inside a probe never leaves the device's memory held.
class HeldChunks {
 public:
  HeldChunks() = default;
  HeldChunks(DeviceAllocator& allocator, ChunkedAllocation held) : allocator_(&allocator), held_(std::move(held)) {}
  ~HeldChunks() { release(); }
  HeldChunks(HeldChunks&& other) noexcept;
  HeldChunks& operator=(HeldChunks&& other) noexcept;
  HeldChunks(const HeldChunks&) = delete;
  HeldChunks& operator=(const HeldChunks&) = delete;

  const ChunkedAllocation& chunks() const { return held_; }
  // Releases everything now (idempotent).
  void release();

 private:
  DeviceAllocator* allocator_ = nullptr;
  ChunkedAllocation held_;
};

struct CapacityReport {
  std::uint64_t total_bytes = 0;          // the device's total memory
  std::uint64_t free_before_bytes = 0;    // free when the probe started
  std::uint64_t free_after_bytes = 0;     // free after everything was released
  std::uint64_t largest_alloc_bytes = 0;  // largest single allocation
  std::uint64_t chunked_total_bytes = 0;  // sum of chunks: what a framework can actually hold
  std::string error;                      // allocator failure other than out-of-memory
};
// usable_bytes = chunked_total_bytes (what the scorer compares the workload's footprint with);
// fragmentation = chunked_total_bytes - largest_alloc_bytes.
CapacityReport measure_capacity(DeviceAllocator& allocator, std::uint64_t total_bytes, std::uint64_t granularity_bytes,
                                std::uint64_t chunk_bytes);
// True when free memory came back to within `slack_bytes` of where it started.
bool memory_returned(const CapacityReport& report, std::uint64_t slack_bytes);

}  // namespace nodeaudit::gpu
