// comm.host-fabric, rank side — MPI ping-pong and all-reduce on host memory between ranks: the
// node's Ethernet/InfiniBand (or shared-memory, on one host) path without GPUs.
//
// Ping-pong (rank 0 and its partner, as NetPIPE's NPmpi): one-way time = round-trip time / 2;
//   the partner is the first rank on another host when there is one (so the figure is the network,
//   not shared memory, whatever the rank placement), else rank 1;
//   pingpong_bw = size / one-way time (decimal GB/s); pingpong_latency = one-way time (us).
// All-reduce (every rank, MPI_SUM over doubles): time = mean over ranks (nccl-tests -a 1);
//   allreduce_bw = size / time * 2(n-1)/n, i.e. nccl-tests' busbw, so it compares with comm.allreduce.
// Every rank runs the same number of repetitions and iterations (rank 0 decides and broadcasts);
// a local stopping rule would leave ranks waiting on each other. Sums are checked after timing.
// Faults: each completed timed step (warm-up, calibration, repetition) is progress for the
// watchdog, so --rank-timeout bounds a stall, never a healthy sweep; after each size rank 0 keeps
// its entry as it stands (RankCheckpoint), so a rank or host lost mid-sweep costs only the sizes
// not completed.
// Pitfalls: on one host the path is shared memory, not the NIC; buffers are reused, so small sizes
// stay in cache (as in NetPIPE); a loaded machine adds jitter to small-message latency.
#include "comm/host_fabric_rank.hpp"

#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include <fmt/format.h>

#include "comm/collective_math.hpp"
#include "comm/host_pairs_rank.hpp"
#include "comm/mpi_launch.hpp"
#include "comm/mpi_session.hpp"
#include "comm/rank_stream.hpp"
#include "comm/verify.hpp"
#include "harness/core/units.hpp"

namespace nodeaudit::comm {
namespace {

double now_s() { return MPI_Wtime(); }

// One page-aligned buffer for both directions, as NPmpi in its default (cache) mode: the data
// received is the data sent back, so on shared memory the cache lines move between the cores on
// every round trip. Separate send and receive buffers measured 2.4x faster at 256 KiB on this
// VM: a cache effect, not the fabric. (A malloc'ed large buffer starts 16 B past a page.)
class PingPongBuffer {
 public:
  explicit PingPongBuffer(std::uint64_t bytes) : bytes_(bytes), data_(page_aligned(bytes), &std::free) {
    if (!data_) throw std::bad_alloc();
    std::memset(data_.get(), 1, bytes);
  }
  char* data() const { return data_.get(); }
  int count() const { return static_cast<int>(bytes_); }

 private:
  static char* page_aligned(std::uint64_t bytes) {
    constexpr std::uint64_t page = 4096;
    return static_cast<char*>(std::aligned_alloc(page, (bytes + page - 1) / page * page));
  }
  std::uint64_t bytes_;
  std::unique_ptr<char, decltype(&std::free)> data_;
};

double pingpong_round_trips(const MpiSession& mpi, int partner, const PingPongBuffer& b, int iterations) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = now_s();
  for (int i = 0; i < iterations; ++i) {
    if (mpi.rank() == 0) {
      MPI_Send(b.data(), b.count(), MPI_BYTE, partner, 0, MPI_COMM_WORLD);
      MPI_Recv(b.data(), b.count(), MPI_BYTE, partner, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (mpi.rank() == partner) {
      MPI_Recv(b.data(), b.count(), MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(b.data(), b.count(), MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
  }
  return now_s() - start;
}

double allreduce_iterations(const std::vector<double>& send, std::vector<double>& recv, int iterations) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = now_s();
  for (int i = 0; i < iterations; ++i)
    MPI_Allreduce(send.data(), recv.data(), static_cast<int>(send.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return now_s() - start;
}

// Rank 0 times a few iterations and broadcasts how many make one repetition last target_s
// (or every rank takes --iterations, so a run can match NetPIPE's -n exactly).
template <typename Timed>
int agreed_iterations(MpiSession& mpi, const HostFabricPlan& plan, Timed timed) {
  timed(2);  // warm-up: connections, registration, page faults
  mpi.progress();
  if (plan.fixed_iterations > 0) return plan.fixed_iterations;
  const double probe_s = timed(3) / 3;
  const int iterations = mpi.broadcast_from_root(iterations_for(probe_s, plan.target_rep_s, 100000));
  mpi.progress();
  return iterations;
}

std::string rank_on_host(const std::vector<RankIdentity>& ids, int rank) {
  return fmt::format("rank {} ({})", rank, ids[static_cast<std::size_t>(rank)].host);
}

Labels size_labels(std::uint64_t size, int ranks) {
  return {{"size", std::to_string(size)}, {"ranks", std::to_string(ranks)}};
}

void measure_pingpong(ProbeContext& ctx, MpiSession& mpi, const HostFabricPlan& plan, const std::vector<RankIdentity>& ids,
                      int partner, std::uint64_t size, int reps) {
  mpi.set_phase(fmt::format("ping-pong at {} between {} and {}", format_bytes(static_cast<double>(size)),
                            rank_on_host(ids, 0), rank_on_host(ids, partner)));
  const PingPongBuffer buffers(size);
  const int iterations = agreed_iterations(mpi, plan, [&](int n) { return pingpong_round_trips(mpi, partner, buffers, n); });
  Metric bw{"pingpong_bw", unit::gbps, Better::higher, size_labels(size, mpi.size()), {}};
  Metric latency{"pingpong_latency", unit::us, Better::lower, size_labels(size, mpi.size()), {}};
  for (int r = 0; r < reps; ++r) {
    const double one_way_s = pingpong_round_trips(mpi, partner, buffers, iterations) / (2.0 * iterations);
    bw.samples.push_back(static_cast<double>(size) / 1e9 / one_way_s);
    latency.samples.push_back(one_way_s * 1e6);
    mpi.progress();
  }
  if (mpi.rank() == 0) ctx.add_metric(bw), ctx.add_metric(latency);
}

std::uint64_t measure_allreduce(ProbeContext& ctx, MpiSession& mpi, const HostFabricPlan& plan,
                                const std::vector<RankIdentity>& ids, std::uint64_t size, int reps) {
  mpi.set_phase(fmt::format("all-reduce at {} over {} ranks on {}", format_bytes(static_cast<double>(size)), mpi.size(),
                            fmt::join(distinct_hosts(ids), ", ")));
  std::vector<double> send(size / sizeof(double)), recv(send.size(), 0.0);
  fill_inputs(std::span<double>(send), mpi.rank());
  const int iterations = agreed_iterations(mpi, plan, [&](int n) { return allreduce_iterations(send, recv, n); });
  std::vector<double> seconds;
  for (int r = 0; r < reps; ++r) {
    seconds.push_back(allreduce_iterations(send, recv, iterations) / iterations);
    mpi.progress();
  }
  const auto per_rank = mpi.gather_to_root(seconds);
  const std::uint64_t wrong = mpi.sum_to_root(count_wrong_sums(recv, mpi.size()));
  if (mpi.rank() != 0) return 0;
  Metric bw{"allreduce_bw", unit::gbps, Better::higher, size_labels(size, mpi.size()), {}};
  for (double s : mean_across_ranks(per_rank))
    bw.samples.push_back(rate_figures(Collective::allreduce, size, mpi.size(), s).busbw_gbps);
  ctx.add_metric(bw);
  return wrong;
}

// The job's hosts and ranks; the CLI lifts it to the result's top-level `multinode` block.
nlohmann::json multinode_of(const std::vector<RankIdentity>& ids) {
  nlohmann::json placement = nlohmann::json::array();
  for (const auto& id : ids) placement.push_back({{"rank", id.rank}, {"host", id.host}});
  return {{"ranks", ids.size()}, {"hosts", distinct_hosts(ids)}, {"placement", placement}};
}

void describe_job(ProbeContext& ctx, const std::vector<RankIdentity>& ids, bool pairs) {
  ctx.info()["ranks"] = ids.size();
  ctx.info()["hosts"] = distinct_hosts(ids);
  ctx.info()["multinode"] = multinode_of(ids);
  ctx.info()["rank_hosts"] = ctx.info()["multinode"]["placement"];
  ctx.info()["mpi"] = mpi_library_version();
  if (pairs) return;  // the pairs say their own formula
  ctx.info()["allreduce_bw_formula"] = "size / time * 2(n-1)/n (nccl-tests busbw), time = mean over ranks";
  const int partner = pingpong_partner(ids);
  ctx.info()["pingpong_formula"] = "one-way time = round trip / 2 between rank 0 and its partner; bw = size / one-way time";
  ctx.info()["pingpong_ranks"] = {0, partner};
  ctx.info()["pingpong_path"] = ids[static_cast<std::size_t>(partner)].host == ids.front().host
                                    ? "within one host (shared memory or loopback)"
                                    : "between hosts " + ids.front().host + " and " + ids[static_cast<std::size_t>(partner)].host;
}

// What a reader of a checkpoint takes when nothing more came: the sizes done, the size under way
// and its peers, and that rank 0 was ended without a word. That happens when mpirun SIGKILLs it
// before its watchdog speaks, when Open MPI itself ends it on losing a peer, or when its host is
// lost. Saved as each size starts, so a silent end still names where it happened; last words,
// when there are any, replace it.
Outcome cut_short_during(const HostFabricPlan& plan, const std::vector<RankIdentity>& ids, int partner, std::uint64_t size,
                         std::uint64_t sizes_done) {
  const std::string done = sizes_done == 0 ? std::string("no size completed")
                                           : fmt::format("{} of the sizes completed ({} to {})", sizes_done,
                                                         format_bytes(static_cast<double>(plan.min_bytes)),
                                                         format_bytes(static_cast<double>(size / 2)));
  return Outcome::failed(fmt::format(
      "the job ended during the {} step (ping-pong between {} and {}, all-reduce over {} ranks on {}); {}; rank 0 left no "
      "reason (killed by the launcher or by MPI on losing a peer, or its host was lost)",
      format_bytes(static_cast<double>(size)), rank_on_host(ids, 0), rank_on_host(ids, partner), ids.size(),
      fmt::join(distinct_hosts(ids), ", "), done));
}

Outcome sweep_sizes(ProbeContext& ctx, MpiSession& mpi, const HostFabricPlan& plan, const std::vector<RankIdentity>& ids,
                    RankCheckpoint& checkpoint) {
  const int reps = std::max(1, ctx.policy().min_repetitions);
  const int partner = pingpong_partner(ids);
  std::uint64_t wrong_total = 0, checked_sizes = 0;
  for (std::uint64_t size = plan.min_bytes; size <= plan.max_bytes; size *= 2) {
    if (!mpi.all_agree(!ctx.should_stop())) return Outcome::interrupted();
    if (mpi.rank() == 0 && checkpoint.active()) checkpoint.save(ctx.entry_so_far(cut_short_during(plan, ids, partner, size, checked_sizes)));
    measure_pingpong(ctx, mpi, plan, ids, partner, size, reps);
    const std::uint64_t wrong = measure_allreduce(ctx, mpi, plan, ids, size, reps);
    ++checked_sizes;
    if (wrong > 0)
      ctx.add_finding(Severity::fail, "host_fabric.allreduce_wrong",
                      fmt::format("all-reduce of {} returned {} wrong sums over {} ranks", format_bytes(static_cast<double>(size)), wrong, mpi.size()));
    wrong_total += wrong;
    if (mpi.rank() == 0) ctx.info()["sizes_checked"] = checked_sizes;
  }
  if (mpi.rank() == 0 && wrong_total > 0) return Outcome::failed("all-reduce sums were wrong (see findings)");
  return Outcome::ok();
}

// Rank 0 keeps its figures where the finished entry would go (the caller's keeper: `run` and
// `probe` under a user's mpirun) and, in a self-launched job, on stdout for the launching probe.
void arm_checkpoint(ProbeContext& ctx, MpiSession& mpi, RankCheckpoint& checkpoint) {
  if (mpi.rank() != 0) return;
  if (ctx.keeper()) checkpoint.add_keeper(ctx.keeper());
  if (streaming_to_stdout()) {
    checkpoint.add_keeper(stdout_stream_keeper());
    mpi.set_progress_hook(stream_progress);
  }
  mpi.set_last_words([&checkpoint](Status status, const std::string& why) { checkpoint.last_words(status, why); });
}

}  // namespace

Outcome measure_host_fabric_as_rank(ProbeContext& ctx, const HostFabricPlan& plan, const RankIdentity* mine) {
  RankCheckpoint checkpoint;  // outlives the session: its watchdog may still say the last words
  MpiSession mpi("comm.host-fabric", plan.rank_timeout_s);
  mpi.set_stop_check([&ctx] { return ctx.cancelled(); });
  arm_checkpoint(ctx, mpi, checkpoint);
  const auto ids = mpi.exchange_identities(mine ? *mine : this_rank_identity(mpi.rank()));
  mpi.progress();
  Outcome outcome;
  if (const auto mismatch = version_mismatch(ids)) {
    outcome = Outcome::failed(*mismatch);
  } else if (mpi.size() < 2) {
    outcome = Outcome::failed(fmt::format("needs at least 2 MPI ranks, the job has {}", mpi.size()));
  } else {
    if (mpi.rank() == 0) describe_job(ctx, ids, plan.pairs);
    else ctx.info()["role"] = fmt::format("rank {} of {}: rank 0 records the figures", mpi.rank(), mpi.size());
    if (checkpoint.active())
      checkpoint.save(ctx.entry_so_far(Outcome::failed(
          "the job ended before the first step started, and rank 0 left no reason (it was killed, or its host was lost)")));
    outcome = plan.pairs ? measure_host_pairs(ctx, mpi, plan, ids, checkpoint) : sweep_sizes(ctx, mpi, plan, ids, checkpoint);
  }
  if (mpi.rank() == 0 && streaming_to_stdout()) stream_report(ctx.entry_so_far(outcome), true);
  return outcome;
}

}  // namespace nodeaudit::comm
