// memtest-style patterns, one 64-bit word at a time. The formulas are in this header, marked
// host+device when compiled by nvcc, so the device kernels and the host checks use the same code.
//   own_address  word = its own device address (catches address-line faults and aliasing)
//   walking_ones word = 1 << ((index + pass) mod 64)
//   random       word = splitmix64(seed ^ index)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#if defined(__CUDACC__)
#define NODEAUDIT_HOST_DEVICE __host__ __device__
#else
#define NODEAUDIT_HOST_DEVICE
#endif

namespace nodeaudit::gpu {

enum class Pattern : int { own_address = 0, walking_ones = 1, random = 2 };
inline constexpr Pattern all_patterns[] = {Pattern::own_address, Pattern::walking_ones, Pattern::random};
std::string to_string(Pattern pattern);

NODEAUDIT_HOST_DEVICE inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The expected word at `word_address` (a byte address, multiple of 8) whose index in the tested
// region is `index`, for one pass of a pattern.
NODEAUDIT_HOST_DEVICE inline std::uint64_t pattern_word(Pattern pattern, std::uint64_t word_address, std::uint64_t index,
                                                        std::uint64_t pass_seed) {
  switch (pattern) {
    case Pattern::own_address: return word_address ^ pass_seed;
    case Pattern::walking_ones: return 1ull << ((index + pass_seed) & 63u);
    case Pattern::random: return splitmix64(pass_seed ^ index);
  }
  return 0;
}

// Host versions of what the device kernels do, for tests and for checking copies read back.
void fill_pattern(std::uint64_t* words, std::size_t count, std::uint64_t base_address, std::uint64_t first_index,
                  Pattern pattern, std::uint64_t pass_seed);

struct PatternErrors {
  std::uint64_t errors = 0;                  // words that differ from the pattern
  std::vector<std::uint64_t> first_addresses;  // up to `max_addresses` byte addresses of bad words
};
PatternErrors check_pattern(const std::uint64_t* words, std::size_t count, std::uint64_t base_address,
                            std::uint64_t first_index, Pattern pattern, std::uint64_t pass_seed,
                            std::size_t max_addresses = 16);

// Merges `more` into `into`, keeping at most `max_addresses` addresses.
void merge_errors(PatternErrors& into, const PatternErrors& more, std::size_t max_addresses = 16);

}  // namespace nodeaudit::gpu
