#include "io/pattern.hpp"

#include <cstring>

namespace nodeaudit::io {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Calls emit(word, byte_offset_in_buffer, byte_count) for every (partial) word of the range.
template <typename Emit>
void for_each_word(std::size_t bytes, std::uint64_t seed, std::uint64_t file_offset, Emit emit) {
  std::size_t done = 0;
  while (done < bytes) {
    const std::uint64_t at = file_offset + done;
    const std::size_t skew = at % 8;
    const std::size_t take = (bytes - done < 8 - skew) ? bytes - done : 8 - skew;
    emit(splitmix64(seed + at / 8), skew, done, take);
    done += take;
  }
}

}  // namespace

void fill_pattern(std::byte* buffer, std::size_t bytes, std::uint64_t seed, std::uint64_t file_offset) {
  if (file_offset % 8 == 0) {  // the common, aligned case: whole words
    const std::size_t words = bytes / 8;
    const std::uint64_t first = seed + file_offset / 8;
    for (std::size_t i = 0; i < words; ++i) {
      const std::uint64_t w = splitmix64(first + i);
      std::memcpy(buffer + 8 * i, &w, 8);
    }
    buffer += words * 8, file_offset += words * 8, bytes -= words * 8;
  }
  for_each_word(bytes, seed, file_offset, [&](std::uint64_t w, std::size_t skew, std::size_t at, std::size_t take) {
    std::memcpy(buffer + at, reinterpret_cast<const std::byte*>(&w) + skew, take);
  });
}

std::size_t count_pattern_mismatches(const std::byte* buffer, std::size_t bytes, std::uint64_t seed,
                                     std::uint64_t file_offset) {
  std::size_t wrong = 0;
  for_each_word(bytes, seed, file_offset, [&](std::uint64_t w, std::size_t skew, std::size_t at, std::size_t take) {
    const auto* expected = reinterpret_cast<const std::byte*>(&w) + skew;
    for (std::size_t i = 0; i < take; ++i) wrong += buffer[at + i] != expected[i];
  });
  return wrong;
}

std::size_t first_pattern_mismatch(const std::byte* buffer, std::size_t bytes, std::uint64_t seed,
                                   std::uint64_t file_offset) {
  std::size_t first = bytes;
  for_each_word(bytes, seed, file_offset, [&](std::uint64_t w, std::size_t skew, std::size_t at, std::size_t take) {
    if (first != bytes) return;
    const auto* expected = reinterpret_cast<const std::byte*>(&w) + skew;
    for (std::size_t i = 0; i < take && first == bytes; ++i)
      if (buffer[at + i] != expected[i]) first = at + i;
  });
  return first;
}

}  // namespace nodeaudit::io
