// Unit sources for block reads: a worker's slice of a file read sequentially or in a random
// permutation, resuming where the previous repetition stopped; and a verifying source that checks
// every byte read against the generator's pattern.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "io/uring_engine.hpp"

namespace nodeaudit::io {

struct Slice {
  std::uint64_t first_byte = 0;
  std::uint64_t blocks = 0;
};
// Worker `index` of `workers` gets an equal, block-aligned share of `region_bytes`.
Slice slice_for_worker(std::uint64_t region_bytes, std::uint32_t block_bytes, int workers, int index);

class BlockReadSource : public UnitSource {
 public:
  BlockReadSource(Slice slice, std::uint32_t block_bytes, bool random_order, std::uint64_t seed);
  // The next `count` blocks (wrapping around the slice) make one repetition.
  void start_repetition(std::uint64_t count) { remaining_ = count; }
  bool next(IoUnit& unit) override;

 private:
  Slice slice_;
  std::uint32_t block_bytes_;
  std::vector<std::uint64_t> order_;  // empty for sequential
  std::uint64_t cursor_ = 0;
  std::uint64_t remaining_ = 0;
};

// Reads `blocks` blocks of a pattern file in order, counts the bytes that differ and keeps the file
// offset of the first of them.
class VerifyingSource : public UnitSource {
 public:
  VerifyingSource(std::uint64_t blocks, std::uint32_t block_bytes, std::uint64_t seed)
      : blocks_(blocks), block_bytes_(block_bytes), seed_(seed) {}
  bool next(IoUnit& unit) override;
  void completed(const IoUnit& unit, const std::byte* data, std::uint32_t bytes) override;
  std::uint64_t mismatched_bytes() const { return mismatched_; }
  std::uint64_t checked_bytes() const { return checked_; }
  std::optional<std::uint64_t> first_mismatch_offset() const { return first_mismatch_; }

 private:
  std::uint64_t blocks_, cursor_ = 0;
  std::uint32_t block_bytes_;
  std::uint64_t seed_;
  std::uint64_t mismatched_ = 0, checked_ = 0;
  std::optional<std::uint64_t> first_mismatch_;  // completions arrive in any order: the lowest
};

}  // namespace nodeaudit::io
