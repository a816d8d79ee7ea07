// Unit sources for the checkpoint probe: writes of pattern blocks round-robin over the shards (so
// every shard progresses at once, as ranks saving in parallel do), and O_DIRECT block reads of
// the shards for the restore, optionally checking each block against the pattern.
#pragma once

#include <cstdint>
#include <optional>

#include "io/uring_engine.hpp"

namespace nodeaudit::io {

struct ShardLayout {
  int shards = 1;
  std::uint64_t shard_bytes = 0;  // a multiple of block_bytes
  std::uint32_t block_bytes = 0;
  std::uint64_t seed = 0;
  std::uint64_t blocks_per_shard() const { return shard_bytes / block_bytes; }
  std::uint64_t shard_seed(int shard) const { return seed + (static_cast<std::uint64_t>(shard) << 40); }
};

struct ShardOffset {
  int shard = 0;
  std::uint64_t offset = 0;
};

class ShardBlockSource : public UnitSource {
 public:
  ShardBlockSource(const ShardLayout& layout, UnitKind kind, bool verify, std::uint64_t max_blocks_per_shard);
  bool next(IoUnit& unit) override;
  void fill(const IoUnit& unit, std::byte* buffer) override;
  void completed(const IoUnit& unit, const std::byte* data, std::uint32_t bytes) override;
  std::uint64_t mismatched_bytes() const { return mismatched_; }
  // The lowest (shard, offset) of a byte that differs, when one does.
  std::optional<ShardOffset> first_mismatch() const { return first_mismatch_; }

 private:
  ShardLayout layout_;
  UnitKind kind_;
  bool verify_;
  std::uint64_t blocks_per_shard_;
  std::uint64_t cursor_ = 0;
  std::uint64_t mismatched_ = 0;
  std::optional<ShardOffset> first_mismatch_;
};

}  // namespace nodeaudit::io
