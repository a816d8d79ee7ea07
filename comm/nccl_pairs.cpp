// Schedule (host_pairs.hpp): a round-robin tournament, N-1 rounds for N hosts (N when odd), the
// pairs of a round at once. In each round MPI_Comm_split gives the ranks of each pair's two hosts
// a communicator of their own (pair_colors); the pair bootstraps NCCL on it as nccl_mpi.cpp does
// on the world (its first rank's ncclUniqueId, MPI_Bcast, ncclCommInitRank) and runs the engine at
// the largest size that fits, with the same formula: a rank's time = CUDA-event time of the
// iterations / iterations, the pair's time = mean over its ranks, busbw = size / time x bus factor
// of the pair's GPU count. Ranks of resting hosts wait at the round's gather.
//
// Judgement (host_pairs.hpp): per host, the median busbw of its pairs against the median of the
// pairs without it; `--slow-host-factor` or more below is named, as comm.host-fabric --pairs does.
//
// Pitfalls: every rank must take the same branch, so a pair that fails still reaches the gather
// and its reason is recorded, not thrown; each pair's communicators are destroyed before the next
// round, so a round never holds more than one communicator per GPU.
#include "comm/nccl_pairs.hpp"

#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "comm/host_pairs.hpp"
#include "comm/host_pairs_rank.hpp"
#include "comm/nccl_engine.hpp"
#include "comm/nccl_support.hpp"
#include "harness/core/units.hpp"

namespace nodeaudit::comm {
namespace {

// The ranks of one pair's two hosts (MPI_Comm_split by the pair's color) and the agreement a
// RankGroup needs, over them; a rank whose host rests this round joins none.
class PairComm {
 public:
  PairComm(int color, int world_rank) {
    MPI_Comm_split(MPI_COMM_WORLD, color < 0 ? MPI_UNDEFINED : color, world_rank, &comm_);
    if (comm_ == MPI_COMM_NULL) return;
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~PairComm() {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }
  PairComm(const PairComm&) = delete;
  PairComm& operator=(const PairComm&) = delete;

  bool joined() const { return comm_ != MPI_COMM_NULL; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  double mean(double value) const {
    double sum = 0;
    MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, comm_);
    return sum / size_;
  }
  std::uint64_t min(std::uint64_t value) const {
    std::uint64_t smallest = 0;
    MPI_Allreduce(&value, &smallest, 1, MPI_UINT64_T, MPI_MIN, comm_);
    return smallest;
  }
  int from_first(int value) const {
    MPI_Bcast(&value, 1, MPI_INT, 0, comm_);
    return value;
  }
  bool all_true(bool value) const {
    int mine = value ? 1 : 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, comm_);
    return all != 0;
  }
  void from_first(void* data, std::size_t bytes) const { MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, 0, comm_); }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 0;
};

struct PairIdMessage {
  ncclUniqueId id;
  int ok;
  char error[244];
};

struct PairBusbw {
  double busbw_gbps = -1;
  std::uint64_t size_bytes = 0;
  std::string error;  // empty when the pair completed
};

PairBusbw run_pair(ProbeContext& ctx, Collective kind, MpiSession& mpi, const PairComm& pair, int device) {
  PairIdMessage message{};
  if (pair.rank() == 0) {
    const ncclResult_t code = ncclGetUniqueId(&message.id);
    message.ok = code == ncclSuccess;
    if (!message.ok) std::snprintf(message.error, sizeof message.error, "ncclGetUniqueId: %s", ncclGetErrorString(code));
  }
  pair.from_first(&message, sizeof message);
  PairBusbw result;
  if (!message.ok) {
    result.error = message.error;
    return result;
  }
  RankGroup group;
  group.records = false;
  group.fixed_repetitions = true;
  group.largest_size_only = true;
  group.merge_time_s = [&pair](double s) { return pair.mean(s); };
  group.min_over_ranks = [&pair](std::uint64_t v) { return pair.min(v); };
  group.from_root = [&pair](int v) { return pair.from_first(v); };
  group.all_true = [&pair](bool v) { return pair.all_true(v); };
  group.describe_rank = [](int rank) { return fmt::format("rank {} of the pair", rank); };
  group.progress = [&mpi] { mpi.progress(); };
  group.on_point = [&result](const CurvePoint& point) {
    result.busbw_gbps = point.busbw_gbps;
    result.size_bytes = point.size_bytes;
  };
  group.time_rule = "mean over the pair's ranks of each rank's CUDA-event time";
  Communicators comms;
  const Outcome outcome =
      run_collective(ctx, kind, comms, group, [&] { comms.init_rank(device, pair.size(), message.id, pair.rank()); });
  if (outcome.status != Status::ok) result.error = outcome.reason;
  return result;
}

struct Hosts {
  std::vector<std::string> names;  // in rank order of first appearance
  std::vector<int> of_rank;        // host index of each rank
};

Hosts hosts_of(const std::vector<RankGpuState>& states) {
  Hosts h;
  for (const RankGpuState& s : states) {
    auto it = std::find(h.names.begin(), h.names.end(), s.host);
    if (it == h.names.end()) it = h.names.insert(h.names.end(), s.host);
    h.of_rank.push_back(static_cast<int>(it - h.names.begin()));
  }
  return h;
}

// Rank 0: each pair's figure from the first of its ranks ("pair busbw error" per rank).
void record_round(ProbeContext& ctx, Collective kind, const std::vector<std::pair<int, int>>& round, const Hosts& hosts,
                  const std::vector<int>& colors, const std::vector<std::string>& wires, std::vector<PairFigure>& figures) {
  for (std::size_t pair = 0; pair < round.size(); ++pair) {
    const auto first = std::find(colors.begin(), colors.end(), static_cast<int>(pair));
    if (first == colors.end()) continue;
    const std::string text(wires[static_cast<std::size_t>(first - colors.begin())].c_str());
    double busbw = -1;
    unsigned long long size = 0;
    int error_at = 0;
    std::sscanf(text.c_str(), "%lf %llu %n", &busbw, &size, &error_at);
    const auto [a, b] = round[pair];
    const std::string& host_a = hosts.names[static_cast<std::size_t>(a)];
    const std::string& host_b = hosts.names[static_cast<std::size_t>(b)];
    if (busbw < 0) {
      ctx.add_finding(Severity::fail, "comm.pair_failed",
                      fmt::format("{} between {} and {} did not complete: {}", collective_name(kind), host_a, host_b,
                                  text.substr(static_cast<std::size_t>(error_at))));
      continue;
    }
    ctx.add_value("pair_busbw", unit::gbps, Better::higher, busbw, {{"a", host_a}, {"b", host_b}, {"size", std::to_string(size)}});
    figures.push_back({a, b, busbw});
  }
}

}  // namespace

Outcome measure_collective_pairs(ProbeContext& ctx, Collective kind, MpiSession& mpi, const std::vector<RankGpuState>& states,
                                 int device) {
  const Hosts hosts = hosts_of(states);
  if (hosts.names.size() < 2)
    return Outcome::bad_input(fmt::format("--pairs needs ranks on 2 or more hosts; all {} ranks are on {}", states.size(),
                                          hosts.names.front()));
  const auto rounds = round_robin_rounds(static_cast<int>(hosts.names.size()));
  if (mpi.rank() == 0) {
    ctx.info()["pairs_schedule"] = fmt::format(
        "round robin: {} pairs of {} hosts in {} rounds, each round's pairs at once, every GPU of both hosts in the pair's "
        "communicator", hosts.names.size() * (hosts.names.size() - 1) / 2, hosts.names.size(), rounds.size());
  }
  std::vector<PairFigure> figures;
  std::uint64_t size = 0;
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    if (!mpi.all_agree(!ctx.should_stop())) return Outcome::interrupted();
    const std::vector<int> colors = pair_colors(rounds[r], hosts.of_rank);
    const int color = colors[static_cast<std::size_t>(mpi.rank())];
    mpi.set_phase(color < 0 ? fmt::format("NCCL pairs round {} of {} (this host rests)", r + 1, rounds.size())
                            : fmt::format("NCCL {} pairs round {} of {} between {} and {}", collective_name(kind), r + 1,
                                          rounds.size(), hosts.names[static_cast<std::size_t>(rounds[r][color].first)],
                                          hosts.names[static_cast<std::size_t>(rounds[r][color].second)]));
    PairBusbw result;
    {
      const PairComm pair(color, mpi.rank());
      if (pair.joined()) result = run_pair(ctx, kind, mpi, pair, device);
    }
    const auto wires = mpi.allgather_fixed(fmt::format("{} {} {}", result.busbw_gbps, result.size_bytes, result.error.substr(0, 200)), 256);
    if (mpi.rank() == 0) record_round(ctx, kind, rounds[r], hosts, colors, wires, figures);
    size = std::max(size, result.size_bytes);
    mpi.progress();
  }
  if (mpi.rank() == 0)
    record_host_judgement(ctx, hosts.names, figures, {"host_pair_busbw", "comm.slow_host", ctx.params().real("slow-host-factor"), size});
  return Outcome::ok();
}

}  // namespace nodeaudit::comm
