// Host fill and check of memtest-style patterns (the device kernels apply the same formulas).
#include "kernels/gpu/memory_patterns.hpp"

namespace nodeaudit::gpu {

std::string to_string(Pattern pattern) {
  switch (pattern) {
    case Pattern::own_address: return "own_address";
    case Pattern::walking_ones: return "walking_ones";
    case Pattern::random: return "random";
  }
  return "unknown";
}

void fill_pattern(std::uint64_t* words, std::size_t count, std::uint64_t base_address, std::uint64_t first_index,
                  Pattern pattern, std::uint64_t pass_seed) {
  for (std::size_t i = 0; i < count; ++i)
    words[i] = pattern_word(pattern, base_address + 8 * i, first_index + i, pass_seed);
}

PatternErrors check_pattern(const std::uint64_t* words, std::size_t count, std::uint64_t base_address,
                            std::uint64_t first_index, Pattern pattern, std::uint64_t pass_seed,
                            std::size_t max_addresses) {
  PatternErrors found;
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t address = base_address + 8 * i;
    if (words[i] == pattern_word(pattern, address, first_index + i, pass_seed)) continue;
    ++found.errors;
    if (found.first_addresses.size() < max_addresses) found.first_addresses.push_back(address);
  }
  return found;
}

void merge_errors(PatternErrors& into, const PatternErrors& more, std::size_t max_addresses) {
  into.errors += more.errors;
  for (std::uint64_t address : more.first_addresses)
    if (into.first_addresses.size() < max_addresses) into.first_addresses.push_back(address);
}

}  // namespace nodeaudit::gpu
