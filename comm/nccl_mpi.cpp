// comm.<collective> across MPI ranks, one rank per GPU, across nodes:
//   mpirun -np N nodeaudit probe comm.allreduce   (or srun, or mpirun ... nodeaudit run --only 'comm.*')
// NCCL is bootstrapped as nccl-tests does: rank 0 calls ncclGetUniqueId, MPI_Bcast hands the id
// to every rank, and each rank calls ncclCommInitRank on the GPU of its local rank (launcher
// variables, else MPI_Comm_split_type SHARED; through --gpus when given). The sweep is the
// single-process engine's (run_collective) with a RankGroup that agrees through MPI.
//
// Formula: a rank's time = CUDA-event time of `iterations` launches / iterations on its GPU; the
// collective's time = mean over ranks (nccl-tests' default `-a 1`); algbw and busbw as the engine.
//
// Pitfalls: every rank must take the same branch, or one waits forever in a collective the others
// skipped; so GPU states are exchanged first and bootstrap_refusal() decides the same thing on
// every rank (no device anywhere: every rank skipped, naming the rank and host; fewer GPUs than
// ranks on a host: bad input). A dead or hung peer blocks MPI or NCCL: the NCCL watchdog aborts
// the communicators when the stall is inside a collective, and the MPI session's watchdog (no
// progress for --watchdog + 10 s) ends the rank with exit 124, so mpirun ends the job.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "comm/mpi_session.hpp"
#include "comm/multinode.hpp"
#include "comm/nccl_engine.hpp"
#include "comm/nccl_pairs.hpp"
#include "comm/nccl_support.hpp"
#include "harness/node/env.hpp"

namespace nodeaudit::comm {
namespace {

const char* env_lookup(const char* name) { return std::getenv(name); }

RankGpuState this_rank_gpu_state(const ProbeContext& ctx, const MpiSession& mpi) {
  RankGpuState state;
  state.rank = mpi.rank();
  state.host = host_name();
  const int shared_local_rank = mpi.shared_memory_local_rank();  // collective: every rank calls it
  state.local_rank = local_rank_from_env(env_lookup).value_or(shared_local_rank);
  state.device = local_device(state.local_rank, ctx.settings().gpus);
  const cudaError_t code = cudaGetDeviceCount(&state.device_count);
  if (code != cudaSuccess) {
    state.device_count = 0;
    state.device_error = fmt::format("cudaGetDeviceCount: {}", cudaGetErrorString(code));
  }
  return state;
}

std::vector<RankGpuState> exchange_gpu_states(const MpiSession& mpi, const RankGpuState& mine) {
  const auto wires = mpi.allgather_fixed(encode_gpu_state(mine), gpu_state_wire_bytes);
  std::vector<RankGpuState> states;
  for (int r = 0; r < mpi.size(); ++r) states.push_back(decode_gpu_state(wires[static_cast<std::size_t>(r)].data(), r));
  return states;
}

// Rank 0's ncclUniqueId on every rank, or the reason rank 0 could not make one (on every rank).
struct UniqueIdMessage {
  ncclUniqueId id;
  int ok;
  char error[244];
};

std::optional<std::string> share_unique_id(const MpiSession& mpi, ncclUniqueId& id) {
  UniqueIdMessage message{};
  if (mpi.rank() == 0) {
    const ncclResult_t code = ncclGetUniqueId(&message.id);
    message.ok = code == ncclSuccess;
    if (!message.ok) std::snprintf(message.error, sizeof message.error, "ncclGetUniqueId on rank 0: %s", ncclGetErrorString(code));
  }
  mpi.broadcast_bytes(&message, sizeof message);
  if (!message.ok) return std::string(message.error);
  id = message.id;
  return std::nullopt;
}

RankGroup mpi_rank_group(MpiSession& mpi, const std::vector<RankGpuState>& states) {
  RankGroup group;
  group.records = mpi.rank() == 0;
  group.fixed_repetitions = true;
  group.merge_time_s = [&mpi](double s) { return mpi.mean_over_ranks(s); };
  group.min_over_ranks = [&mpi](std::uint64_t v) { return mpi.min_over_ranks(v); };
  group.from_root = [&mpi](int v) { return mpi.broadcast_from_root(v); };
  group.all_true = [&mpi](bool v) { return mpi.all_agree(v); };
  group.gather_wrong = [&mpi](const std::vector<std::uint64_t>& mine) { return mpi.gather_counts(mine); };
  group.describe_rank = [states](int rank) {
    const RankGpuState& s = states[static_cast<std::size_t>(rank)];
    return fmt::format("{}, GPU {}", s.host, s.device);
  };
  group.progress = [&mpi, done = 0]() mutable {
    mpi.progress();
    mpi.set_phase(fmt::format("NCCL sweep, after {} sizes", ++done));
  };
  group.time_rule = "mean over MPI ranks (nccl-tests -a 1) of each rank's CUDA-event time";
  return group;
}

// Every rank's outcome becomes rank 0's: the first rank that did not finish ok names itself.
Outcome agree_outcome(const MpiSession& mpi, const std::vector<RankGpuState>& states, const Outcome& mine) {
  const std::string wire = fmt::format("{}\n{}", to_string(mine.status), mine.reason.substr(0, 400));
  const auto all = mpi.allgather_fixed(wire, 512);
  for (int r = 0; r < mpi.size(); ++r) {
    const std::string text(all[static_cast<std::size_t>(r)].c_str());
    const auto eol = text.find('\n');
    const Status status = parse_status(text.substr(0, eol));
    if (status == Status::ok || r == mpi.rank()) continue;
    if (mine.status != Status::ok) return mine;
    return Outcome{status, fmt::format("rank {} on {}: {}", r, states[static_cast<std::size_t>(r)].host, text.substr(eol + 1))};
  }
  return mine;
}

Outcome bootstrap_and_sweep(ProbeContext& ctx, Collective kind, MpiSession& mpi) {
  const auto ids = mpi.exchange_identities(this_rank_identity(mpi.rank()));
  if (const auto mismatch = version_mismatch(ids)) return Outcome::failed(*mismatch);
  mpi.set_phase("GPU state exchange");
  const RankGpuState mine = this_rank_gpu_state(ctx, mpi);
  const std::vector<RankGpuState> states = exchange_gpu_states(mpi, mine);
  if (mpi.rank() == 0) ctx.info()["multinode"] = multinode_block(states);
  else ctx.info()["role"] = fmt::format("rank {} of {}: rank 0 records the figures", mpi.rank(), mpi.size());
  if (auto refusal = bootstrap_refusal(states)) return *refusal;
  if (ctx.params().boolean("pairs")) return agree_outcome(mpi, states, measure_collective_pairs(ctx, kind, mpi, states, mine.device));
  mpi.set_phase("NCCL bootstrap (ncclGetUniqueId, MPI_Bcast, ncclCommInitRank)");
  ncclUniqueId id{};
  if (auto error = share_unique_id(mpi, id)) return Outcome::failed(*error);
  Communicators comms;
  const RankGroup group = mpi_rank_group(mpi, states);
  const Outcome outcome =
      run_collective(ctx, kind, comms, group, [&] { comms.init_rank(mine.device, mpi.size(), id, mpi.rank()); });
  mpi.set_phase("outcome exchange");
  return agree_outcome(mpi, states, outcome);
}

}  // namespace

Outcome measure_collective_over_mpi(ProbeContext& ctx, Collective kind) {
  // Longer than the NCCL watchdog's idle limit, so a stall inside a collective is aborted (and
  // reported as timeout) before the rank is ended.
  MpiSession mpi(fmt::format("comm.{}", collective_name(kind)), ctx.params().duration_s("watchdog") + 10);
  return bootstrap_and_sweep(ctx, kind, mpi);
}

}  // namespace nodeaudit::comm
