// Pair ping-pong as comm.host-fabric's (one-way time = round trip / 2, bw = size / one-way time),
// between the pair's two host leaders; pairs of a round run at once, every rank meets the others
// at a gather after each size, so the rounds stay in step. The pair's first rank calibrates the
// iterations (or takes --iterations) and tells its partner.
#include "comm/host_pairs_rank.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "comm/collective_math.hpp"
#include "comm/host_pairs.hpp"
#include "harness/core/units.hpp"

namespace nodeaudit::comm {
namespace {

double round_trips(int me, int partner, std::vector<char>& buffer, int iterations) {
  const int count = static_cast<int>(buffer.size());
  const double start = MPI_Wtime();
  for (int i = 0; i < iterations; ++i) {
    if (me < partner) {
      MPI_Send(buffer.data(), count, MPI_BYTE, partner, 0, MPI_COMM_WORLD);
      MPI_Recv(buffer.data(), count, MPI_BYTE, partner, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buffer.data(), count, MPI_BYTE, partner, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buffer.data(), count, MPI_BYTE, partner, 0, MPI_COMM_WORLD);
    }
  }
  return MPI_Wtime() - start;
}

// One-way seconds per repetition for this rank's pair (empty when it has none this round).
std::vector<double> pair_one_way_s(MpiSession& mpi, const HostFabricPlan& plan, int partner, std::uint64_t size, int reps) {
  if (partner < 0) return {};
  std::vector<char> buffer(size, 1);
  round_trips(mpi.rank(), partner, buffer, 2);  // warm-up: connection, page faults
  mpi.progress();
  int iterations = plan.fixed_iterations;
  if (iterations <= 0) {
    if (mpi.rank() < partner) {
      iterations = iterations_for(round_trips(mpi.rank(), partner, buffer, 3) / 3, plan.target_rep_s, 100000);
      MPI_Send(&iterations, 1, MPI_INT, partner, 1, MPI_COMM_WORLD);
    } else {
      round_trips(mpi.rank(), partner, buffer, 3);
      MPI_Recv(&iterations, 1, MPI_INT, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    mpi.progress();
  }
  std::vector<double> one_way;
  for (int r = 0; r < reps; ++r) {
    one_way.push_back(round_trips(mpi.rank(), partner, buffer, iterations) / (2.0 * iterations));
    mpi.progress();
  }
  return one_way;
}

struct Leaders {
  std::vector<std::string> hosts;  // in rank order of first appearance
  std::vector<int> rank_of_host;   // the first rank on each host
};

Leaders leaders_of(const std::vector<RankIdentity>& ids) {
  Leaders l;
  l.hosts = distinct_hosts(ids);
  for (const auto& host : l.hosts)
    l.rank_of_host.push_back(std::find_if(ids.begin(), ids.end(), [&](const RankIdentity& id) { return id.host == host; })->rank);
  return l;
}

int partner_in(const std::vector<std::pair<int, int>>& round, const Leaders& l, int rank) {
  const auto leader = std::find(l.rank_of_host.begin(), l.rank_of_host.end(), rank);
  if (leader == l.rank_of_host.end()) return -1;  // not the first rank of its host: it waits
  const int host = static_cast<int>(leader - l.rank_of_host.begin());
  const int pair = pair_in_round(round, host);
  if (pair < 0) return -1;
  const auto [a, b] = round[static_cast<std::size_t>(pair)];
  return l.rank_of_host[static_cast<std::size_t>(a == host ? b : a)];
}

std::string host_of_rank(const std::vector<RankIdentity>& ids, int rank) { return ids[static_cast<std::size_t>(rank)].host; }

// Rank 0: the pair metrics of one size from every rank's [partner, one-way s x reps].
void record_pairs(ProbeContext& ctx, const std::vector<RankIdentity>& ids, const std::vector<std::vector<double>>& per_rank,
                  std::uint64_t size, std::vector<PairFigure>& bandwidths, const Leaders& l, bool keep_bandwidth) {
  for (std::size_t rank = 0; rank < per_rank.size(); ++rank) {
    const int partner = static_cast<int>(per_rank[rank][0]);
    if (partner < 0 || static_cast<int>(rank) > partner) continue;  // each pair once, from its first rank
    const std::string a = host_of_rank(ids, static_cast<int>(rank)), b = host_of_rank(ids, partner);
    const Labels labels = {{"a", a}, {"b", b}, {"size", std::to_string(size)}};
    Metric bw{"pair_bw", unit::gbps, Better::higher, labels, {}};
    Metric latency{"pair_latency", unit::us, Better::lower, labels, {}};
    for (std::size_t i = 1; i < per_rank[rank].size(); ++i) {
      bw.samples.push_back(static_cast<double>(size) / 1e9 / per_rank[rank][i]);
      latency.samples.push_back(per_rank[rank][i] * 1e6);
    }
    if (keep_bandwidth) {
      std::vector<double> sorted = bw.samples;
      std::sort(sorted.begin(), sorted.end());
      const auto index = [&](const std::string& h) {
        return static_cast<int>(std::find(l.hosts.begin(), l.hosts.end(), h) - l.hosts.begin());
      };
      bandwidths.push_back({index(a), index(b), sorted[sorted.size() / 2]});
    }
    ctx.add_metric(bw), ctx.add_metric(latency);
  }
}

// "h1-h2, h3-h4": a round's pairs by host name.
std::string round_pairs_text(const std::vector<std::pair<int, int>>& round, const std::vector<std::string>& hosts) {
  std::vector<std::string> pairs;
  for (const auto& [a, b] : round) pairs.push_back(hosts[static_cast<std::size_t>(a)] + "-" + hosts[static_cast<std::size_t>(b)]);
  return fmt::format("{}", fmt::join(pairs, ", "));
}

}  // namespace

void record_host_judgement(ProbeContext& ctx, const std::vector<std::string>& hosts, const std::vector<PairFigure>& pairs,
                           const HostJudgementNames& how) {
  if (hosts.size() < 3) {
    ctx.info()["pairs_judgement"] = "not judged: with 2 hosts there is one pair and nothing to compare it with";
    return;
  }
  for (const HostJudgement& j : judge_hosts(hosts, pairs, how.factor)) {
    ctx.add_value(how.metric, unit::gbps, Better::higher, j.median_gbps,
                  {{"host", hosts[static_cast<std::size_t>(j.host)]}, {"size", std::to_string(how.size_bytes)}});
    if (j.slow) ctx.add_finding(j.every_pair_slow ? Severity::fail : Severity::warn, how.finding_code, j.sentence);
  }
  ctx.info()["pairs_judgement"] = fmt::format(
      "per host: the median bandwidth of its pairs at {} against the median of the pairs without it; {:.1f}x or more below is slow",
      format_bytes(static_cast<double>(how.size_bytes)), how.factor);
}

Outcome measure_host_pairs(ProbeContext& ctx, MpiSession& mpi, const HostFabricPlan& plan, const std::vector<RankIdentity>& ids,
                           RankCheckpoint& checkpoint) {
  const Leaders l = leaders_of(ids);
  if (l.hosts.size() < 2)
    return Outcome::bad_input(fmt::format("--pairs needs ranks on 2 or more hosts; all {} ranks are on {}", ids.size(), l.hosts.front()));
  const auto rounds = round_robin_rounds(static_cast<int>(l.hosts.size()));
  const int reps = std::max(1, ctx.policy().min_repetitions);
  std::vector<std::uint64_t> sizes = {plan.min_bytes};
  if (plan.max_bytes != plan.min_bytes) sizes.push_back(plan.max_bytes);
  if (mpi.rank() == 0) {
    ctx.info()["pairs_schedule"] = fmt::format("round robin: {} pairs of {} hosts in {} rounds, each round's pairs at once",
                                               l.hosts.size() * (l.hosts.size() - 1) / 2, l.hosts.size(), rounds.size());
    ctx.info()["pair_formula"] = "one-way time = round trip / 2 between the first ranks of the two hosts; bw = size / one-way time";
  }
  std::vector<PairFigure> bandwidths;
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    if (!mpi.all_agree(!ctx.should_stop())) return Outcome::interrupted();
    if (mpi.rank() == 0 && checkpoint.active())
      checkpoint.save(ctx.entry_so_far(Outcome::failed(fmt::format(
          "the job ended during pair round {} of {} ({}), after {} rounds; rank 0 left no reason (killed by the launcher or "
          "by MPI on losing a peer, or its host was lost)",
          r + 1, rounds.size(), round_pairs_text(rounds[r], l.hosts), r))));
    const int partner = partner_in(rounds[r], l, mpi.rank());
    for (const std::uint64_t size : sizes) {
      mpi.set_phase(partner < 0 ? fmt::format("pair ping-pong round {} of {} at {} (this rank waits)", r + 1, rounds.size(),
                                              format_bytes(static_cast<double>(size)))
                                : fmt::format("pair ping-pong round {} of {} at {} between rank {} ({}) and rank {} ({})", r + 1,
                                              rounds.size(), format_bytes(static_cast<double>(size)), mpi.rank(),
                                              host_of_rank(ids, mpi.rank()), partner, host_of_rank(ids, partner)));
      std::vector<double> mine = {static_cast<double>(partner)};
      const auto one_way = pair_one_way_s(mpi, plan, partner, size, reps);
      mine.insert(mine.end(), one_way.begin(), one_way.end());
      mine.resize(1 + static_cast<std::size_t>(reps), 0.0);
      const auto per_rank = mpi.gather_to_root(mine);
      if (mpi.rank() == 0) record_pairs(ctx, ids, per_rank, size, bandwidths, l, size == sizes.back());
    }
    if (mpi.rank() == 0) ctx.info()["pairs_rounds_done"] = r + 1;
  }
  if (mpi.rank() == 0)
    record_host_judgement(ctx, l.hosts, bandwidths, {"host_pair_bw", "host_fabric.slow_host", plan.slow_host_factor, sizes.back()});
  return Outcome::ok();
}

}  // namespace nodeaudit::comm
