// Bisection for the largest single allocation and chunked allocation of the rest.
#include "kernels/gpu/capacity_search.hpp"

#include <algorithm>

namespace nodeaudit::gpu {

std::uint64_t largest_single_allocation(DeviceAllocator& allocator, std::uint64_t upper_bytes,
                                        std::uint64_t granularity_bytes) {
  if (granularity_bytes == 0) granularity_bytes = 1;
  std::uint64_t lo = 0;                                  // known to fit (in granules)
  std::uint64_t hi = upper_bytes / granularity_bytes + 1;  // known not to fit
  while (hi - lo > 1 && allocator.error().empty()) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (void* p = allocator.allocate(mid * granularity_bytes)) {
      allocator.release(p);
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo * granularity_bytes;
}

ChunkedAllocation allocate_in_chunks(DeviceAllocator& allocator, std::uint64_t chunk_bytes, std::uint64_t min_chunk_bytes,
                                     std::uint64_t limit_bytes) {
  ChunkedAllocation held;
  min_chunk_bytes = std::max<std::uint64_t>(min_chunk_bytes, 1);
  while (chunk_bytes >= min_chunk_bytes && allocator.error().empty()) {
    if (chunk_bytes > limit_bytes - held.total_bytes) {
      chunk_bytes /= 2;
      continue;
    }
    void* p = allocator.allocate(chunk_bytes);
    if (!p) {
      chunk_bytes /= 2;
      continue;
    }
    held.pointers.push_back(p);
    held.sizes.push_back(chunk_bytes);
    held.total_bytes += chunk_bytes;
  }
  return held;
}

std::uint64_t integrity_allocation_limit(std::uint64_t free_bytes, std::uint64_t margin_bytes) {
  return free_bytes > margin_bytes ? free_bytes - margin_bytes : 0;
}

void release_all(DeviceAllocator& allocator, ChunkedAllocation& held) {
  for (void* p : held.pointers) allocator.release(p);
  held = {};
}

HeldChunks::HeldChunks(HeldChunks&& other) noexcept
    : allocator_(std::exchange(other.allocator_, nullptr)), held_(std::exchange(other.held_, {})) {}

HeldChunks& HeldChunks::operator=(HeldChunks&& other) noexcept {
  if (this != &other) {
    release();
    allocator_ = std::exchange(other.allocator_, nullptr);
    held_ = std::exchange(other.held_, {});
  }
  return *this;
}

void HeldChunks::release() {
  if (allocator_) release_all(*allocator_, held_);
}

CapacityReport measure_capacity(DeviceAllocator& allocator, std::uint64_t total_bytes, std::uint64_t granularity_bytes,
                                std::uint64_t chunk_bytes) {
  CapacityReport report;
  report.total_bytes = total_bytes;
  report.free_before_bytes = allocator.free_bytes();
  report.largest_alloc_bytes = largest_single_allocation(allocator, report.free_before_bytes, granularity_bytes);
  ChunkedAllocation held = allocate_in_chunks(allocator, chunk_bytes, granularity_bytes);
  report.chunked_total_bytes = held.total_bytes;
  release_all(allocator, held);
  report.free_after_bytes = allocator.free_bytes();
  report.error = allocator.error();
  return report;
}

bool memory_returned(const CapacityReport& report, std::uint64_t slack_bytes) {
  return report.free_after_bytes + slack_bytes >= report.free_before_bytes;
}

}  // namespace nodeaudit::gpu
