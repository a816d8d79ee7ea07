#include "io/read_sources.hpp"

#include <algorithm>
#include <numeric>
#include <random>

#include "io/pattern.hpp"

namespace nodeaudit::io {

Slice slice_for_worker(std::uint64_t region_bytes, std::uint32_t block_bytes, int workers, int index) {
  const std::uint64_t total_blocks = region_bytes / block_bytes;
  const std::uint64_t per = total_blocks / static_cast<std::uint64_t>(workers);
  const auto i = static_cast<std::uint64_t>(index);
  const std::uint64_t blocks = index == workers - 1 ? total_blocks - per * i : per;
  return {per * i * block_bytes, blocks};
}

BlockReadSource::BlockReadSource(Slice slice, std::uint32_t block_bytes, bool random_order, std::uint64_t seed)
    : slice_(slice), block_bytes_(block_bytes) {
  if (!random_order) return;
  order_.resize(slice.blocks);
  std::iota(order_.begin(), order_.end(), 0);
  std::shuffle(order_.begin(), order_.end(), std::mt19937_64(seed));
}

bool BlockReadSource::next(IoUnit& unit) {
  if (remaining_ == 0 || slice_.blocks == 0) return false;
  --remaining_;
  const std::uint64_t block = order_.empty() ? cursor_ : order_[cursor_];
  cursor_ = cursor_ + 1 == slice_.blocks ? 0 : cursor_ + 1;
  unit.kind = UnitKind::read;
  unit.file = 0;
  unit.offset = slice_.first_byte + block * block_bytes_;
  unit.length = block_bytes_;
  return true;
}

bool VerifyingSource::next(IoUnit& unit) {
  if (cursor_ == blocks_) return false;
  unit.kind = UnitKind::read;
  unit.file = 0;
  unit.offset = cursor_++ * block_bytes_;
  unit.length = block_bytes_;
  return true;
}

void VerifyingSource::completed(const IoUnit& unit, const std::byte* data, std::uint32_t bytes) {
  const std::size_t wrong = count_pattern_mismatches(data, bytes, seed_, unit.offset);
  checked_ += bytes;
  if (wrong == 0) return;
  mismatched_ += wrong;
  const std::uint64_t at = unit.offset + first_pattern_mismatch(data, bytes, seed_, unit.offset);
  if (!first_mismatch_ || at < *first_mismatch_) first_mismatch_ = at;
}

}  // namespace nodeaudit::io
