// comm.host-fabric --pairs: ping-pong between every pair of hosts, to find the slow one among many
// (as pairwise scans of a cluster do). Host-only and unit-tested: the schedule and the judgement.
//
// Schedule: a round-robin tournament (circle method). Every pair of N hosts meets exactly once in
// N-1 rounds (N rounds when N is odd: each round one host rests); in a round each host is in at
// most one pair and the round's pairs run at once. So the cost is N(N-1)/2 pair measurements but
// only N-1 rounds of wall time: 8 hosts take 7 rounds, 64 take 63, 1,000 take 999 (about 0.2 s a
// round at --level quick with the default sizes, i.e. minutes; no switch to a ring is needed at
// that size). Concurrent pairs share the fabric's core: on an oversubscribed fabric a round
// measures the fabric under N/2 flows, which is the load a training job puts on it too.
//
// Judgement, per host h: the median bandwidth of its pairs, against the median of the pairs
// without h. A host `factor` or more below is named; when every pair with h is below the others'
// median / factor the cause is h's own link or NIC ("every pair with h3 is slow"), otherwise only
// some paths are slow and they are listed.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace nodeaudit::comm {

// rounds[r] = the pairs (a, b), a < b, host indices, that ping-pong at once in round r.
std::vector<std::vector<std::pair<int, int>>> round_robin_rounds(int hosts);

// The index in `round` of the pair that `host` is in, or -1 when it rests this round.
int pair_in_round(const std::vector<std::pair<int, int>>& round, int host);

// The NCCL collectives' --pairs: every rank (GPU) of both hosts of a pair joins that pair's
// communicator. colors[rank] = the pair index of the rank's host this round (MPI_Comm_split's
// color), or -1 when its host rests; host_of_rank[rank] = the host index of each rank.
std::vector<int> pair_colors(const std::vector<std::pair<int, int>>& round, const std::vector<int>& host_of_rank);

struct PairFigure {
  int a = 0, b = 0;  // host indices
  double gbps = 0;   // median bandwidth of the pair
};

struct HostJudgement {
  int host = 0;
  double median_gbps = 0;         // median over the host's pairs
  double others_median_gbps = 0;  // median over the pairs without it
  double times_below = 0;         // others_median / median
  bool slow = false;              // times_below >= factor
  bool every_pair_slow = false;   // each of its pairs below others_median / factor
  std::string sentence;           // for a slow host: "h3: 0.31 GB/s, 4.8x below ..."
};

// One judgement per host (hosts with no pair figure are left out). Needs 3 or more hosts to tell
// a host from its partner: with 2 there is one pair and no "others".
std::vector<HostJudgement> judge_hosts(const std::vector<std::string>& names, const std::vector<PairFigure>& pairs,
                                       double factor);

}  // namespace nodeaudit::comm
