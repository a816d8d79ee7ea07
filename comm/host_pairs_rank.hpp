// comm.host-fabric --pairs, rank side: the first rank of each host ping-pongs with the first rank
// of every other host, round by round (host_pairs.hpp); rank 0 records each pair's figures and
// names the slow hosts.
#pragma once

#include <vector>

#include "context.hpp"
#include "host_fabric_rank.hpp"
#include "mpi_session.hpp"
#include "rank_stream.hpp"

namespace nodeaudit::comm {

Outcome measure_host_pairs(ProbeContext& ctx, MpiSession& mpi, const HostFabricPlan& plan, const std::vector<RankIdentity>& ids,
                           RankCheckpoint& checkpoint);

}  // namespace nodeaudit::comm
