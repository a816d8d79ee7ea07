// Checking a received buffer on the host against the expected values (host fabric, and the
// reference the device check kernel is tested against).
#pragma once

#include <cstdint>
#include <span>

#include "comm/expected_values.hpp"

namespace nodeaudit::comm {

void fill_inputs(std::span<float> buffer, int rank);
std::uint64_t count_wrong(std::span<const float> received, ExpectKind kind, int rank, int ranks, std::uint64_t chunk);

// Host-fabric all-reduce over doubles: same values, summed in double.
void fill_inputs(std::span<double> buffer, int rank);
std::uint64_t count_wrong_sums(std::span<const double> received, int ranks);

}  // namespace nodeaudit::comm
