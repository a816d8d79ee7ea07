// The NCCL collective engine: one process with one communicator per selected GPU (ncclCommInitAll),
// or one MPI process per GPU (ncclCommInitRank, nccl_mpi.cpp); every iteration one grouped launch
// (ncclGroupStart/End) over this process's GPUs. The plug-ins differ only
// in how they launch (launch_on_rank) and what they expect; sizes, bus factors and expected values
// come from collective_math / expected_values.
//
// Formula (nccl-tests): time = max over the process's GPUs of the CUDA-event time of `iterations`
// back-to-back collectives on that GPU's stream / iterations, then (MPI) the mean over processes
// as nccl-tests' default -a 1; algbw = size / time (1e9 B/s), busbw = algbw x
// bus factor (2(n-1)/n all-reduce; (n-1)/n all-gather, reduce-scatter, all-to-all; 1 broadcast);
// size as nccl-tests counts it (all-gather: the gathered buffer; reduce-scatter: its input).
//
// Pitfalls: the first collective of a communicator sets up connections (warm-up per size); a
// receive buffer left over from a previous size could pass the check, so it is poisoned with NaN
// before each size; a GPU that hangs would block a synchronous wait forever, so waits poll and a
// watchdog aborts the communicators (status timeout). With one GPU busbw is 0 by definition and
// is not recorded.
#include <algorithm>
#include <cstdlib>
#include <span>

#include <fmt/format.h>

#include "comm/nccl_engine.hpp"
#include "comm/mpi_launch.hpp"
#include "comm/nccl_support.hpp"
#include "comm/p2p_math.hpp"
#include "comm/verify.hpp"
#include "comm/watchdog.hpp"

namespace nodeaudit::comm {
namespace {

constexpr int kElementBytes = sizeof(float);
constexpr int kMaxIterations = 1000;

ExpectKind expect_kind(Collective kind) {
  switch (kind) {
    case Collective::allreduce: return ExpectKind::allreduce;
    case Collective::allgather: return ExpectKind::allgather;
    case Collective::reducescatter: return ExpectKind::reducescatter;
    case Collective::broadcast: return ExpectKind::broadcast;
    case Collective::alltoall: return ExpectKind::alltoall;
  }
  return ExpectKind::allreduce;
}

// The plug-in table: one NCCL launch of `kind` for rank `rank` (inside a group).
ncclResult_t launch_on_rank(Collective kind, const CollectiveLayout& l, const float* send, float* recv, int ranks,
                            ncclComm_t comm, cudaStream_t stream) {
  switch (kind) {
    case Collective::allreduce: return ncclAllReduce(send, recv, l.send_elements, ncclFloat, ncclSum, comm, stream);
    case Collective::allgather: return ncclAllGather(send, recv, l.chunk_elements, ncclFloat, comm, stream);
    case Collective::reducescatter:
      return ncclReduceScatter(send, recv, l.chunk_elements, ncclFloat, ncclSum, comm, stream);
    case Collective::broadcast: return ncclBroadcast(send, recv, l.send_elements, ncclFloat, 0, comm, stream);
    case Collective::alltoall:  // as nccl-tests: one send and one receive per peer
      for (int peer = 0; peer < ranks; ++peer) {
        const std::uint64_t offset = static_cast<std::uint64_t>(peer) * l.chunk_elements;
        if (ncclResult_t r = ncclSend(send + offset, l.chunk_elements, ncclFloat, peer, comm, stream); r != ncclSuccess) return r;
        if (ncclResult_t r = ncclRecv(recv + offset, l.chunk_elements, ncclFloat, peer, comm, stream); r != ncclSuccess) return r;
      }
      return ncclSuccess;
  }
  return ncclInvalidArgument;
}

struct SizePlan {
  RepeatPolicy policy;
  double target_rep_s = 0;
};

SizePlan size_plan(const ProbeContext& ctx) {
  // The level's budget, split over the rounds where the level shares its work between them.
  const double budget_s = ctx.round_share_s(ctx.level() == Level::quick ? 0.25 : ctx.level() == Level::standard ? 1.0 : 5.0);
  SizePlan plan{ctx.policy(), 0};
  plan.policy.warmup = 0;  // the engine warms each size up itself
  plan.policy.budget_s = budget_s;
  plan.target_rep_s = budget_s / std::max(1, plan.policy.min_repetitions);
  return plan;
}

struct Engine {
  ProbeContext& ctx;
  Collective kind;
  Communicators& comms;
  Watchdog& watchdog;
  const RankGroup& group;
  SizePlan plan;
  std::vector<DeviceBuffer> send, recv;
};

// One grouped launch over this process's GPUs; Communicators::grouped holds the abort off for its
// duration, refuses to start once aborted, and closes the group if a launch throws.
void launch(const Engine& e, const CollectiveLayout& layout) {
  e.comms.grouped(fmt::format("{} of {} B", collective_name(e.kind), layout.size_bytes), [&](const Communicators::Locked& locked) {
    for (int r = 0; r < e.comms.local_count(); ++r)
      check_nccl(launch_on_rank(e.kind, layout, e.send[r].floats(), e.recv[r].floats(), e.comms.world_size(), locked.comm(r),
                                e.comms.stream(r)),
                 fmt::format("nccl {} of {} B on GPU {}", collective_name(e.kind), layout.size_bytes, e.comms.device(r)));
  });
}

void wait_for_gpus(const Engine& e) {
  e.comms.wait([&] { return e.watchdog.fired(); });
  e.watchdog.kick();
}

double timed_run(const Engine& e, const CollectiveLayout& layout, int iterations) {
  e.comms.record_start();
  for (int i = 0; i < iterations; ++i) launch(e, layout);
  e.comms.record_stop();
  wait_for_gpus(e);
  return e.group.merge_time_s(e.comms.elapsed_max_s());
}

void poison_receive_buffers(const Engine& e, const CollectiveLayout& layout) {
  for (int r = 0; r < e.comms.local_count(); ++r) {  // 0xFF bytes are NaN floats: never an expected value
    // The stream belongs to GPU r: an async call on it must be issued with that GPU current.
    check_cuda(cudaSetDevice(e.comms.device(r)), fmt::format("cudaSetDevice({})", e.comms.device(r)));
    check_cuda(cudaMemsetAsync(e.recv[r].get(), 0xFF, layout.recv_elements * kElementBytes, e.comms.stream(r)),
               fmt::format("cudaMemsetAsync(receive buffer, GPU {})", e.comms.device(r)));
  }
}

void fill_send_buffers(const Engine& e, std::uint64_t elements) {
  std::vector<float> host(elements);
  for (int r = 0; r < e.comms.local_count(); ++r) {
    fill_inputs(std::span<float>(host), e.comms.global_rank(r));
    check_cuda(cudaSetDevice(e.comms.device(r)), fmt::format("cudaSetDevice({})", e.comms.device(r)));
    check_cuda(cudaMemcpy(e.send[r].get(), host.data(), elements * kElementBytes, cudaMemcpyHostToDevice),
               fmt::format("cudaMemcpy(send buffer, {} B to GPU {})", elements * kElementBytes, e.comms.device(r)));
  }
}

void verify_size(const Engine& e, const CollectiveLayout& layout) {
  std::vector<float> host(layout.recv_elements);
  std::vector<std::uint64_t> wrong_local;
  for (int r = 0; r < e.comms.local_count(); ++r) {
    check_cuda(cudaSetDevice(e.comms.device(r)), fmt::format("cudaSetDevice({})", e.comms.device(r)));
    check_cuda(cudaMemcpy(host.data(), e.recv[r].get(), host.size() * kElementBytes, cudaMemcpyDeviceToHost),
               fmt::format("cudaMemcpy(receive buffer from GPU {})", e.comms.device(r)));
    wrong_local.push_back(count_wrong(std::span<const float>(host), expect_kind(e.kind), e.comms.global_rank(r),
                                      e.comms.world_size(), layout.chunk_elements));
  }
  const std::vector<std::uint64_t> wrong = e.group.gather_wrong(wrong_local);
  if (!e.group.records) return;
  for (std::size_t rank = 0; rank < wrong.size(); ++rank)
    if (wrong[rank] > 0)
      e.ctx.add_finding(Severity::fail, "comm.mismatch",
                        fmt::format("{} of {} B: {} of {} received elements wrong on rank {} of {} ({})",
                                    collective_name(e.kind), layout.size_bytes, wrong[rank], host.size(), rank,
                                    e.comms.world_size(), e.group.describe_rank(static_cast<int>(rank))));
}

Labels size_labels(std::uint64_t size_bytes, int gpus) {
  return {{"size", std::to_string(size_bytes)}, {"gpus", std::to_string(gpus)}};
}

// Records time_us, algbw and (n > 1) busbw for one size; returns the curve point (medians).
CurvePoint record_size(const Engine& e, const CollectiveLayout& layout, const Measurement& m, int iterations) {
  const int n = e.comms.world_size();
  Metric time{"time_us", unit::us, Better::lower, size_labels(layout.size_bytes, n), {}};
  Metric algbw{"algbw", unit::gbps, Better::higher, time.labels, {}};
  Metric busbw{"busbw", unit::gbps, Better::higher, time.labels, {}};
  for (double rep_s : m.seconds) {
    const RateFigures f = rate_figures(e.kind, layout.size_bytes, n, rep_s / iterations);
    time.samples.push_back(f.time_us), algbw.samples.push_back(f.algbw_gbps), busbw.samples.push_back(f.busbw_gbps);
  }
  CurvePoint point{layout.size_bytes, median_of(busbw.samples), median_of(time.samples)};
  if (!e.group.records) return point;
  e.ctx.add_metric(time), e.ctx.add_metric(algbw);
  if (n > 1) e.ctx.add_metric(busbw);
  return point;
}

Measurement timed_repetitions(const Engine& e, const CollectiveLayout& layout, int iterations) {
  const auto body = [&] {
    const double seconds = timed_run(e, layout, iterations);
    return Work{.bytes = static_cast<double>(layout.size_bytes) * iterations, .elapsed_s = seconds};
  };
  if (!e.group.fixed_repetitions) return e.ctx.repeat(e.plan.policy, body);
  Measurement m;  // every rank runs the same count; stopping early is agreed first
  for (int rep = 0; rep < std::max(1, e.plan.policy.min_repetitions); ++rep) {
    if (!e.group.all_true(!e.ctx.should_stop())) break;
    const Work w = body();
    m.seconds.push_back(*w.elapsed_s), m.work.push_back(w);
  }
  return m;
}

std::optional<CurvePoint> measure_size(Engine& e, std::uint64_t size) {
  const CollectiveLayout layout = collective_layout(e.kind, size, e.comms.world_size(), kElementBytes);
  poison_receive_buffers(e, layout);
  launch(e, layout);  // warm-up: connections, first-touch
  wait_for_gpus(e);
  const int iterations = e.group.from_root(iterations_for(timed_run(e, layout, 1), e.plan.target_rep_s, kMaxIterations));
  const Measurement m = timed_repetitions(e, layout, iterations);
  if (!e.group.all_true(!m.seconds.empty())) return std::nullopt;
  const CurvePoint point = record_size(e, layout, m, iterations);
  verify_size(e, layout);
  e.group.progress();
  return point;
}

void record_summary(ProbeContext& ctx, int gpus, const std::vector<CurvePoint>& curve) {
  const Labels labels{{"gpus", std::to_string(gpus)}};
  ctx.add_value("latency_small", unit::us, Better::lower, curve.front().time_us, labels);
  ctx.info()["latency_small_size_bytes"] = curve.front().size_bytes;
  if (gpus > 1) {
    ctx.add_value("busbw_peak", unit::gbps, Better::higher, curve_peak_gbps(curve), labels);
    ctx.add_value("size_at_90pct", unit::bytes, Better::lower,
                  static_cast<double>(size_at_fraction_of_peak(curve, 0.9)), labels);
  } else {
    ctx.add_finding(Severity::info, "comm.single_gpu",
                    "one GPU: the bus factor is 0 for n = 1, so busbw, busbw_peak and size_at_90pct are not recorded "
                    "(algbw and time are)");
  }
}

std::uint64_t smallest_free_bytes(const Communicators& comms) {
  std::uint64_t smallest = UINT64_MAX;
  for (int r = 0; r < comms.local_count(); ++r) smallest = std::min(smallest, free_device_bytes(comms.device(r)));
  return smallest;
}

Outcome run_sweep(ProbeContext& ctx, Collective kind, Communicators& comms, Watchdog& watchdog, const RankGroup& group) {
  const int n = comms.world_size();
  const std::uint64_t free_bytes = group.min_over_ranks(smallest_free_bytes(comms));  // one schedule on every rank
  std::vector<std::uint64_t> sizes =
      size_schedule(8, ctx.params().size_bytes("max-size"), free_bytes, 0.8, kind, n, kElementBytes);
  if (group.largest_size_only && !sizes.empty()) sizes = {sizes.back()};
  if (sizes.empty())
    return Outcome::failed(fmt::format("no message size fits: {} B free on the fullest GPU", free_bytes));
  Engine e{ctx, kind, comms, watchdog, group, size_plan(ctx), {}, {}};
  const CollectiveLayout largest = collective_layout(kind, sizes.back(), n, kElementBytes);
  for (int r = 0; r < comms.local_count(); ++r) {
    e.send.emplace_back(comms.device(r), largest.send_elements * kElementBytes);
    e.recv.emplace_back(comms.device(r), largest.recv_elements * kElementBytes);
  }
  fill_send_buffers(e, largest.send_elements);  // every size reads a prefix of the largest input
  ctx.info()["gpus"] = nlohmann::json::array();
  for (int r = 0; r < comms.local_count(); ++r) ctx.info()["gpus"].push_back(comms.device(r));
  ctx.info()["max_size_bytes"] = sizes.back();
  ctx.info()["time_rule"] = group.time_rule;
  std::vector<CurvePoint> curve;
  for (std::uint64_t size : sizes) {
    if (!group.all_true(!ctx.should_stop())) break;
    if (std::optional<CurvePoint> point = measure_size(e, size)) {
      if (group.on_point) group.on_point(*point);
      curve.push_back(*point);
    }
  }
  if (ctx.cancelled()) return Outcome::interrupted();
  if (curve.size() < sizes.size() && group.records)
    ctx.add_finding(Severity::warn, "comm.truncated",
                    fmt::format("stopped after {} of {} sizes: the probe deadline was near", curve.size(), sizes.size()));
  if (curve.empty()) return Outcome::failed("no size was measured before the deadline");
  if (group.records) record_summary(ctx, n, curve);
  return Outcome::ok();
}

}  // namespace

Outcome run_collective(ProbeContext& ctx, Collective kind, Communicators& comms, const RankGroup& group,
                       const std::function<void()>& init) {
  // Fires past the probe's own deadline (leaving a second to report) or after --watchdog without
  // a completed collective; declared after `comms` (the caller's) so it is joined before they are
  // destroyed.
  const auto hard_deadline = Watchdog::Clock::now() + std::chrono::duration_cast<Watchdog::Clock::duration>(
                                                          std::chrono::duration<double>(ctx.seconds_left() - 1.0));
  const auto idle_limit = std::chrono::duration_cast<Watchdog::Clock::duration>(
      std::chrono::duration<double>(ctx.params().duration_s("watchdog")));
  Watchdog watchdog(hard_deadline, idle_limit, [&comms] { comms.abort_all(); });
  Outcome outcome;
  try {
    init();
    outcome = run_sweep(ctx, kind, comms, watchdog, group);
  } catch (const CommFailure& error) {
    outcome = Outcome::failed(error.what());
  }
  if (watchdog.fired())
    return Outcome{Status::timeout, fmt::format("the watchdog ({}) aborted the NCCL communicators ({}); last error: {}",
                                                watchdog.reason(), collective_name(kind), outcome.reason)};
  return outcome;
}

Outcome measure_collective(ProbeContext& ctx, Collective kind) {
  if (detect_mpi_job([](const char* name) { return std::getenv(name); })) {
#if NODEAUDIT_COMM_HAVE_MPI
    return measure_collective_over_mpi(ctx, kind);
#else
    return Outcome::bad_input(
        "started by an MPI launcher, but this build has no MPI (multi-node NCCL is not built); rebuild with MPI "
        "(libopenmpi-dev) or run without mpirun to measure this node's GPUs");
#endif
  }
  if (ctx.params().boolean("pairs"))
    return Outcome::bad_input("--pairs: it pairs hosts, so start one rank per GPU on 2 or more hosts under an MPI launcher "
                              "(mpirun --hostfile F -np N nodeaudit probe " + fmt::format("comm.{} --pairs)", collective_name(kind)));
  GpuChoice choice = choose_gpus(ctx);
  if (choice.stop) return *choice.stop;
  Communicators comms;
  RankGroup group;
  group.describe_rank = [&comms](int rank) { return fmt::format("GPU {}", comms.device(rank)); };
  return run_collective(ctx, kind, comms, group, [&] { comms.init(choice.devices); });
}

}  // namespace nodeaudit::comm
