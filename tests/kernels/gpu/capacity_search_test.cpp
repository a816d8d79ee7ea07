// The OOM-edge search against FakeAllocator, a fake device with a fixed pool and fragmentation.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "kernels/gpu/capacity_search.hpp"

namespace nodeaudit::gpu {
namespace {

// A device with `capacity` bytes whose largest contiguous block is `largest_block`: an allocation
// succeeds when it fits in what is free and is no larger than the largest block still free.
class FakeAllocator final : public DeviceAllocator {
 public:
  FakeAllocator(std::uint64_t capacity, std::uint64_t largest_block) : free_(capacity), largest_(largest_block) {}
  void* allocate(std::uint64_t bytes) override {
    if (bytes == 0 || bytes > free_ || bytes > largest_) return nullptr;
    free_ -= bytes;
    sizes_.push_back(bytes);
    return reinterpret_cast<void*>(sizes_.size());
  }
  void release(void* p) override {
    free_ += sizes_.at(reinterpret_cast<std::uintptr_t>(p) - 1);
    if (leak_on_release_) free_ -= 1 << 20, leak_on_release_ = false;
  }
  std::uint64_t free_bytes() override { return free_; }
  bool leak_on_release_ = false;

 private:
  std::uint64_t free_, largest_;
  std::vector<std::uint64_t> sizes_;
};

constexpr std::uint64_t MiB = 1 << 20, GiB = 1ull << 30;

TEST(CapacitySearch, FindsLargestSingleAllocationToTheGranule) {
  FakeAllocator fake(10 * GiB, 7 * GiB + 6 * MiB + 1);
  EXPECT_EQ(largest_single_allocation(fake, 10 * GiB, 2 * MiB), 7 * GiB + 6 * MiB);
  EXPECT_EQ(fake.free_bytes(), 10 * GiB);  // every trial released
}

TEST(CapacitySearch, ChunksCollectTheRemainderDownToTheMinimum) {
  FakeAllocator fake(5 * GiB + 7 * MiB, 5 * GiB);
  ChunkedAllocation held = allocate_in_chunks(fake, GiB, 2 * MiB);
  EXPECT_EQ(held.total_bytes, 5 * GiB + 6 * MiB);  // 5 x 1 GiB, then 4 MiB + 2 MiB
  EXPECT_EQ(held.pointers.size(), 7u);
  release_all(fake, held);
  EXPECT_EQ(fake.free_bytes(), 5 * GiB + 7 * MiB);
}

TEST(CapacitySearch, ALimitStopsTheChunksShortOfIt) {
  FakeAllocator fake(5 * GiB + 7 * MiB, 5 * GiB);
  ChunkedAllocation held = allocate_in_chunks(fake, GiB, 2 * MiB, 3 * GiB + 5 * MiB);
  EXPECT_EQ(held.total_bytes, 3 * GiB + 4 * MiB);  // 3 x 1 GiB, then 4 MiB; 2 more MiB would pass the limit
  EXPECT_EQ(fake.free_bytes(), 2 * GiB + 3 * MiB);
  release_all(fake, held);
}

TEST(CapacitySearch, TheIntegrityTestLeavesItsMarginFree) {
  EXPECT_EQ(integrity_margin_bytes, 256 * MiB);
  EXPECT_EQ(integrity_allocation_limit(80 * GiB, integrity_margin_bytes), 80 * GiB - 256 * MiB);
  EXPECT_EQ(integrity_allocation_limit(200 * MiB, integrity_margin_bytes), 0u);
  EXPECT_EQ(integrity_allocation_limit(256 * MiB, integrity_margin_bytes), 0u);
  // On a device with 8 GiB + 7 MiB free the test holds 7.75 GiB, not everything down to 2 MiB.
  FakeAllocator fake(8 * GiB + 7 * MiB, 8 * GiB);
  ChunkedAllocation held =
      allocate_in_chunks(fake, GiB, 2 * MiB, integrity_allocation_limit(fake.free_bytes(), integrity_margin_bytes));
  EXPECT_EQ(held.total_bytes, 8 * GiB - 256 * MiB + 6 * MiB);  // down to the 2 MiB granule under the limit
  EXPECT_GE(fake.free_bytes(), integrity_margin_bytes);
  release_all(fake, held);
}

TEST(CapacitySearch, FragmentationShowsAsDifference) {
  FakeAllocator fake(8 * GiB, 3 * GiB);
  const CapacityReport r = measure_capacity(fake, 8 * GiB, 2 * MiB, GiB);
  EXPECT_EQ(r.largest_alloc_bytes, 3 * GiB);
  EXPECT_EQ(r.chunked_total_bytes, 8 * GiB);
  EXPECT_TRUE(memory_returned(r, 0));
}

TEST(CapacitySearch, DetectsMemoryNotReturned) {
  FakeAllocator fake(4 * GiB, 4 * GiB);
  fake.leak_on_release_ = true;
  const CapacityReport r = measure_capacity(fake, 4 * GiB, 2 * MiB, GiB);
  EXPECT_FALSE(memory_returned(r, 0));
  EXPECT_TRUE(memory_returned(r, 2 * MiB));
}

TEST(CapacitySearch, HeldChunksReleaseOnScopeExitEvenWhenAnExceptionLeavesIt) {
  FakeAllocator fake(3 * GiB + 4 * MiB, 3 * GiB);
  try {
    HeldChunks held(fake, allocate_in_chunks(fake, GiB, 2 * MiB));
    EXPECT_EQ(held.chunks().total_bytes, 3 * GiB + 4 * MiB);
    EXPECT_EQ(fake.free_bytes(), 0u);
    throw std::runtime_error("a CUDA call failed half-way through the patterns");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(fake.free_bytes(), 3 * GiB + 4 * MiB);
}

TEST(CapacitySearch, HeldChunksReleaseOnceWhenMovedOrReleasedEarly) {
  FakeAllocator fake(2 * GiB, 2 * GiB);
  std::vector<HeldChunks> all;
  all.emplace_back(fake, allocate_in_chunks(fake, GiB, 2 * MiB));
  HeldChunks moved = std::move(all.back());
  all.clear();  // the moved-from holder owns nothing
  EXPECT_EQ(fake.free_bytes(), 0u);
  moved.release();
  EXPECT_EQ(fake.free_bytes(), 2 * GiB);
  EXPECT_EQ(moved.chunks().total_bytes, 0u);
  moved.release();  // idempotent: nothing is released twice
  EXPECT_EQ(fake.free_bytes(), 2 * GiB);
}

}  // namespace
}  // namespace nodeaudit::gpu
