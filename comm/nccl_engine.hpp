// Probe bodies of the NCCL collective plug-ins and comm.p2p (built only where NCCL was found),
// and the engine they share with the multi-node path (nccl_mpi.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "comm/collective_math.hpp"
#include "harness/core/context.hpp"
#include "harness/core/probe.hpp"

namespace nodeaudit::comm {

class Communicators;

// How the processes of one collective agree. One process driving every GPU: every function is
// the identity. One MPI process per GPU: rank 0's choices reach every rank, times are merged
// over ranks, and only rank 0 records; every rank runs exactly the same steps, so none waits in
// a collective the others skipped.
struct RankGroup {
  bool records = true;             // this process writes the figures and findings
  bool fixed_repetitions = false;  // run exactly policy.min_repetitions (a local stopping rule would diverge)
  std::function<double(double)> merge_time_s = [](double s) { return s; };
  std::function<std::uint64_t(std::uint64_t)> min_over_ranks = [](std::uint64_t v) { return v; };
  std::function<int(int)> from_root = [](int v) { return v; };
  std::function<bool(bool)> all_true = [](bool v) { return v; };
  // Wrong-element counts of this process's GPUs -> counts of every global rank, on the recorder.
  std::function<std::vector<std::uint64_t>(const std::vector<std::uint64_t>&)> gather_wrong =
      [](const std::vector<std::uint64_t>& v) { return v; };
  std::function<std::string(int)> describe_rank;  // "GPU 3" / "rank 5 on node7 (GPU 1)"
  std::function<void()> progress = [] {};         // a size completed
  // --pairs: only the largest size that fits, and each size's median figures handed here (on
  // every process alike) instead of recorded; `records` is then false.
  bool largest_size_only = false;
  std::function<void(const CurvePoint&)> on_point;
  std::string time_rule = "slowest GPU of the process (CUDA events)";
};

// Runs the size sweep of `kind` over `comms` with a watchdog that aborts the communicators; `init`
// creates them (inside the watchdog's reach). Returns timeout when the watchdog fired.
Outcome run_collective(ProbeContext& ctx, Collective kind, Communicators& comms, const RankGroup& group,
                       const std::function<void()>& init);

Outcome measure_collective(ProbeContext& ctx, Collective kind);
Outcome measure_p2p(ProbeContext& ctx);

#if NODEAUDIT_COMM_HAVE_MPI
// One rank of `mpirun -np N nodeaudit probe comm.<collective>` (nccl_mpi.cpp).
Outcome measure_collective_over_mpi(ProbeContext& ctx, Collective kind);
#endif

}  // namespace nodeaudit::comm
