#include "checkpoint_sources.hpp"

#include <algorithm>

#include "pattern.hpp"

namespace nodeaudit::io {

ShardBlockSource::ShardBlockSource(const ShardLayout& layout, UnitKind kind, bool verify, std::uint64_t max_blocks_per_shard)
    : layout_(layout), kind_(kind), verify_(verify), blocks_per_shard_(std::min(layout.blocks_per_shard(), max_blocks_per_shard)) {}

bool ShardBlockSource::next(IoUnit& unit) {
  const auto shards = static_cast<std::uint64_t>(layout_.shards);
  if (cursor_ >= blocks_per_shard_ * shards) return false;
  const std::uint64_t shard = cursor_ % shards, block = cursor_ / shards;
  ++cursor_;
  unit.kind = kind_;
  unit.file = static_cast<int>(shard);
  unit.offset = block * layout_.block_bytes;
  unit.length = layout_.block_bytes;
  unit.tag = shard;
  return true;
}

void ShardBlockSource::fill(const IoUnit& unit, std::byte* buffer) {
  fill_pattern(buffer, unit.length, layout_.shard_seed(static_cast<int>(unit.tag)), unit.offset);
}

void ShardBlockSource::completed(const IoUnit& unit, const std::byte* data, std::uint32_t bytes) {
  if (verify_) mismatched_ += count_pattern_mismatches(data, bytes, layout_.shard_seed(static_cast<int>(unit.tag)), unit.offset);
}

}  // namespace nodeaudit::io
