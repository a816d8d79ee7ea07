// Test data that is not zeros (a device or file system may compress or skip zeros) and that can
// be checked after a read: the 8-byte word at file offset o is splitmix64(seed + o / 8), so any
// block can be generated or verified from its offset alone.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nodeaudit::io {

void fill_pattern(std::byte* buffer, std::size_t bytes, std::uint64_t seed, std::uint64_t file_offset);
// Bytes in `buffer` that differ from the pattern at `file_offset`.
std::size_t count_pattern_mismatches(const std::byte* buffer, std::size_t bytes, std::uint64_t seed,
                                     std::uint64_t file_offset);
// Index in `buffer` of the first byte that differs from the pattern at `file_offset`; `bytes` when
// none does.
std::size_t first_pattern_mismatch(const std::byte* buffer, std::size_t bytes, std::uint64_t seed,
                                   std::uint64_t file_offset);

}  // namespace nodeaudit::io
