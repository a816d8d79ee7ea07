#include "io/checkpoint_sources.hpp"

#include <algorithm>
#include <tuple>

#include "io/pattern.hpp"

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
  if (!verify_) return;
  const int shard = static_cast<int>(unit.tag);
  const std::size_t wrong = count_pattern_mismatches(data, bytes, layout_.shard_seed(shard), unit.offset);
  if (wrong == 0) return;
  mismatched_ += wrong;
  const ShardOffset at{shard, unit.offset + first_pattern_mismatch(data, bytes, layout_.shard_seed(shard), unit.offset)};
  if (!first_mismatch_ || std::tie(at.shard, at.offset) < std::tie(first_mismatch_->shard, first_mismatch_->offset)) first_mismatch_ = at;
}

}  // namespace nodeaudit::io
