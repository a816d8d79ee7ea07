// Input and expected output values of every collective, exactly predictable: each element is a
// small integer, so sums over thousands of ranks stay exact in float32 (below 2^24) and a wrong,
// missing or misrouted chunk shows as a different value. Compiled for host and device (the fill
// and check kernels use the same functions the CPU unit tests check).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define NODEAUDIT_HD __host__ __device__
#else
#define NODEAUDIT_HD
#endif

namespace nodeaudit::comm {

// The value rank `rank` puts at element `index` of its send buffer.
NODEAUDIT_HD inline float input_value(int rank, std::uint64_t index) {
  return static_cast<float>(rank + 1 + static_cast<int>(index % 61));
}

// Sum over ranks 0..n-1 of input_value(r, index) = n(n+1)/2 + n*(index % 61).
NODEAUDIT_HD inline float sum_of_inputs(int ranks, std::uint64_t index) {
  const double n = ranks;
  return static_cast<float>(n * (n + 1) / 2 + n * static_cast<double>(index % 61));
}

enum class ExpectKind { allreduce = 0, allgather = 1, reducescatter = 2, broadcast = 3, alltoall = 4 };

// What rank `rank` of `ranks` must hold at element `index` of its receive buffer after the
// collective; `chunk` is the per-peer chunk in elements (all-gather, reduce-scatter, all-to-all).
// Broadcast uses root 0.
NODEAUDIT_HD inline float expected_value(ExpectKind kind, int rank, int ranks, std::uint64_t chunk, std::uint64_t index) {
  switch (kind) {
    case ExpectKind::allreduce: return sum_of_inputs(ranks, index);
    case ExpectKind::allgather: return input_value(static_cast<int>(index / chunk), index % chunk);
    case ExpectKind::reducescatter: return sum_of_inputs(ranks, static_cast<std::uint64_t>(rank) * chunk + index);
    case ExpectKind::broadcast: return input_value(0, index);
    case ExpectKind::alltoall:
      return input_value(static_cast<int>(index / chunk), static_cast<std::uint64_t>(rank) * chunk + index % chunk);
  }
  return -1.0f;
}

}  // namespace nodeaudit::comm
