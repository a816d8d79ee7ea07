// Host arithmetic of comm.p2p: which GPU pairs copy far slower than the others.
#pragma once

#include <cstddef>
#include <vector>

namespace nodeaudit::comm {

// Median of `values` (mean of the two middle ones for an even count); 0 when empty.
double median_of(std::vector<double> values);

// Indices of the pairs whose bandwidth is below `fraction` of the median of all the other pairs.
// With fewer than two pairs nothing can be compared and nothing is returned.
std::vector<std::size_t> slow_pairs(const std::vector<double>& bandwidth_gbps, double fraction);

}  // namespace nodeaudit::comm
