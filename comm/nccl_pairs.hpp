// comm.<collective> --pairs under an MPI launcher (nccl_pairs.cpp): the collective between every
// pair of hosts, every GPU of both hosts in one communicator, to find the slow host among many.
#pragma once

#include <vector>

#include "comm/collective_math.hpp"
#include "comm/mpi_session.hpp"
#include "comm/multinode.hpp"
#include "harness/core/context.hpp"

namespace nodeaudit::comm {

// Every rank calls it with every rank's GPU state; rank 0 records the pairs and names slow hosts.
Outcome measure_collective_pairs(ProbeContext& ctx, Collective kind, MpiSession& mpi, const std::vector<RankGpuState>& states,
                                 int device);

}  // namespace nodeaudit::comm
