// Registers the NCCL probes: one spec per collective plug-in, plus comm.p2p. The specs (ids,
// parameters, deadlines) exist in every build; the bodies only where NCCL was found, so a build
// without CUDA lists them as `not built (no CUDA toolkit)`; without NCCL, `not built (no NCCL ...)`.
// Under an MPI launcher the collectives run one rank per GPU across nodes (nccl_mpi.cpp).
#include <fmt/format.h>

#include "comm/collective_math.hpp"
#include "harness/core/registry.hpp"

#if NODEAUDIT_COMM_HAVE_NCCL
#include "comm/nccl_engine.hpp"
#endif

namespace nodeaudit::comm {
namespace {

const char* describe(Collective kind) {
  switch (kind) {
    case Collective::allreduce: return "NCCL all-reduce (sum, float32) over the selected GPUs: busbw curve 8 B..max, peak, latency";
    case Collective::allgather: return "NCCL all-gather (float32) over the selected GPUs: busbw curve, peak, latency";
    case Collective::reducescatter: return "NCCL reduce-scatter (sum, float32) over the selected GPUs: busbw curve, peak, latency";
    case Collective::broadcast: return "NCCL broadcast from GPU 0 (float32) over the selected GPUs: busbw curve, peak, latency";
    case Collective::alltoall: return "NCCL all-to-all (float32) over the selected GPUs: busbw curve, peak, latency";
  }
  return "";
}

double collective_deadline_s(const ParamValues& params, Level level) {
  const double per_size_s = level == Level::quick ? 2 : level == Level::standard ? 8 : 60;
  // --pairs: a backstop for up to 1,024 rounds (1,025 hosts), each a communicator set-up (~5 s)
  // and one size; a stalled pair is ended sooner by the watchdog (no progress).
  if (params.boolean("pairs")) return 60 + 1024 * (5 + per_size_s) + params.duration_s("watchdog");
  return 60 + 40 * per_size_s + params.duration_s("watchdog");  // ~30 sizes + set-up + slack
}

ProbeSpec make_collective_spec(Collective kind) {
  ProbeSpec spec;
  spec.id = fmt::format("comm.{}", collective_name(kind));
  spec.description = describe(kind);
  spec.needs = {Need::gpu};
  spec.params = {
      ParamSpec{.name = "max-size", .type = ParamType::size, .default_by_level = {"64MiB", "1GiB", "8GiB"},
                .help = "Largest message (nccl-tests size); also bounded by free GPU memory", .min = 8, .max = 1ull << 34,
                .power_of_two = true},
      ParamSpec{.name = "pairs", .type = ParamType::boolean, .default_by_level = same_at_all_levels("false"),
                .help = "Under an MPI launcher across hosts: the collective between every pair of hosts (every GPU of both) "
                        "at --max-size, in N-1 rounds of concurrent pairs, and name the slow host; instead of the sweep"},
      ParamSpec{.name = "slow-host-factor", .type = ParamType::real, .default_by_level = same_at_all_levels("2"),
                .help = "--pairs: a host whose pairs' median busbw is this many times below the median of the pairs "
                        "without it is named", .min = 1.1, .max = 1000},
      ParamSpec{.name = "watchdog", .type = ParamType::duration, .default_by_level = {"30s", "120s", "600s"},
                .help = "A collective that has not completed after this long aborts the communicators (timeout)",
                .min = 1, .max = 86400},
  };
#if NODEAUDIT_COMM_HAVE_NCCL
  spec.body = [kind](ProbeContext& ctx) { return measure_collective(ctx, kind); };
#else
  spec.not_built_reason = NODEAUDIT_COMM_NCCL_MISSING;
#endif
  spec.deadline_s = collective_deadline_s;
  spec.across_mpi_ranks = true;  // under mpirun: one rank per GPU, NCCL bootstrapped over MPI
  return spec;
}

ProbeSpec make_p2p_spec() {
  ProbeSpec spec;
  spec.id = "comm.p2p";
  spec.description = "GPU-to-GPU copy bandwidth matrix, unidirectional and bidirectional, with peer-access state per pair";
  spec.needs = {Need::multi_gpu};
  spec.params = {ParamSpec{.name = "copy-size", .type = ParamType::size, .default_by_level = {"64MiB", "256MiB", "1GiB"},
                           .help = "Bytes per copy", .min = 1 << 20, .max = 1ull << 34}};
#if NODEAUDIT_COMM_HAVE_NCCL
  spec.body = measure_p2p;
#else
  spec.not_built_reason = NODEAUDIT_COMM_NCCL_MISSING;
#endif
  return spec;
}

const ProbeRegistrar allreduce{make_collective_spec(Collective::allreduce)};
const ProbeRegistrar allgather{make_collective_spec(Collective::allgather)};
const ProbeRegistrar reducescatter{make_collective_spec(Collective::reducescatter)};
const ProbeRegistrar broadcast{make_collective_spec(Collective::broadcast)};
const ProbeRegistrar alltoall{make_collective_spec(Collective::alltoall)};
const ProbeRegistrar p2p{make_p2p_spec()};

}  // namespace
}  // namespace nodeaudit::comm
