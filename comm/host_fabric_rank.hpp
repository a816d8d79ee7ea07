// The measuring side of comm.host-fabric, run by every MPI rank.
#pragma once

#include <cstdint>

#include "comm/rank_merge.hpp"
#include "harness/core/context.hpp"
#include "harness/core/probe.hpp"

namespace nodeaudit::comm {

struct HostFabricPlan {
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 4u << 20;
  double rank_timeout_s = 60;
  double target_rep_s = 0.005;  // one timed repetition lasts about this long
  int fixed_iterations = 0;     // > 0: round trips (all-reduces) per repetition, as NetPIPE's -n
  bool pairs = false;           // every pair of hosts instead of the rank-0 sweep (host_pairs.hpp)
  double slow_host_factor = 2;  // --pairs: a host this many times below the others is named
};

// Runs as one rank of the job; rank 0 records the figures in `ctx`. `mine` is this rank's
// identity (a test may present a different build to check the refusal).
Outcome measure_host_fabric_as_rank(ProbeContext& ctx, const HostFabricPlan& plan, const RankIdentity* mine = nullptr);

}  // namespace nodeaudit::comm
