// comm.host-fabric --pairs, rank side: the first rank of each host ping-pongs with the first rank
// of every other host, round by round (host_pairs.hpp); rank 0 records each pair's figures and
// names the slow hosts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm/host_fabric_rank.hpp"
#include "comm/host_pairs.hpp"
#include "comm/mpi_session.hpp"
#include "comm/rank_stream.hpp"
#include "harness/core/context.hpp"

namespace nodeaudit::comm {

// Rank 0, after the last round: one figure per host (`metric`, GB/s: the median of its pairs) and a
// finding (`finding_code`) for each slow host; with 2 hosts only the note that nothing was compared.
// Shared with the NCCL collectives' --pairs (nccl_pairs.cpp).
struct HostJudgementNames {
  std::string metric;
  std::string finding_code;
  double factor = 2;
  std::uint64_t size_bytes = 0;
};
void record_host_judgement(ProbeContext& ctx, const std::vector<std::string>& hosts, const std::vector<PairFigure>& pairs,
                           const HostJudgementNames& how);

Outcome measure_host_pairs(ProbeContext& ctx, MpiSession& mpi, const HostFabricPlan& plan, const std::vector<RankIdentity>& ids,
                           RankCheckpoint& checkpoint);

}  // namespace nodeaudit::comm
