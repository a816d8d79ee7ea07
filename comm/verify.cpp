#include "comm/verify.hpp"

namespace nodeaudit::comm {

void fill_inputs(std::span<float> buffer, int rank) {
  for (std::uint64_t i = 0; i < buffer.size(); ++i) buffer[i] = input_value(rank, i);
}

std::uint64_t count_wrong(std::span<const float> received, ExpectKind kind, int rank, int ranks, std::uint64_t chunk) {
  std::uint64_t wrong = 0;
  for (std::uint64_t i = 0; i < received.size(); ++i) wrong += received[i] != expected_value(kind, rank, ranks, chunk, i);
  return wrong;
}

void fill_inputs(std::span<double> buffer, int rank) {
  for (std::uint64_t i = 0; i < buffer.size(); ++i) buffer[i] = input_value(rank, i);
}

std::uint64_t count_wrong_sums(std::span<const double> received, int ranks) {
  std::uint64_t wrong = 0;
  for (std::uint64_t i = 0; i < received.size(); ++i) wrong += received[i] != static_cast<double>(sum_of_inputs(ranks, i));
  return wrong;
}

}  // namespace nodeaudit::comm
