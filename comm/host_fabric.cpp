// comm.host-fabric — MPI all-reduce and ping-pong on host memory between ranks (see
// host_fabric_rank.cpp for the formulas). This file decides where the ranks come from:
//  - inside an MPI job (`mpirun -np N nodeaudit probe comm.host-fabric`): this process is a rank;
//  - otherwise (`nodeaudit run`, `nodeaudit probe` alone) it starts the job itself with mpirun
//    (--ranks, --hostfile) and takes rank 0's report as rank 0 streams it (job_watch.hpp): a dead
//    rank, a hung one or a lost host ends the probe within --rank-timeout + 10 s of the last
//    progress, with the figures completed before it kept.
// --rank-timeout is "no progress for this long": every completed timed step is progress, so a
// healthy sweep of any length never trips it. The probe's own deadline is only a backstop:
// (timed steps of the sweep) x --rank-timeout.
// A `nodeaudit run` child inside an outer MPI job is refused: each probe of a run is its own
// process and Open MPI allows one MPI_Init per rank, so a second MPI probe could not join.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "comm/job_watch.hpp"
#include "comm/mpi_launch.hpp"
#include "comm/rank_report.hpp"
#include "harness/core/context.hpp"
#include "harness/core/registry.hpp"
#include "harness/core/deadline.hpp"
#include "harness/core/units.hpp"
#include "harness/node/env.hpp"

#if NODEAUDIT_COMM_HAVE_MPI
#include "comm/host_fabric_rank.hpp"
#endif

namespace nodeaudit::comm {
namespace {

// A backstop only (see the top): a healthy sweep makes progress at least once per --rank-timeout
// in each timed step, (warm-up + calibration + repetitions) x 2 kinds x sizes of them.
double host_fabric_deadline_s(const ParamValues& params, Level level) {
  std::uint64_t sizes = 0;
  for (std::uint64_t b = params.size_bytes("min-size"); b <= params.size_bytes("max-size") && b > 0; b *= 2) ++sizes;
  const double steps_per_size = 2.0 * (2 + std::max(1, default_policy(level).min_repetitions));
  return 60 + static_cast<double>(std::max<std::uint64_t>(sizes, 1)) * steps_per_size * params.duration_s("rank-timeout");
}

#if NODEAUDIT_COMM_HAVE_MPI
HostFabricPlan plan_from(const ProbeContext& ctx) {
  HostFabricPlan plan;
  plan.min_bytes = ctx.params().size_bytes("min-size");
  plan.max_bytes = ctx.params().size_bytes("max-size");
  plan.rank_timeout_s = ctx.params().duration_s("rank-timeout");
  plan.target_rep_s = ctx.level() == Level::quick ? 0.005 : ctx.level() == Level::standard ? 0.02 : 0.1;
  plan.fixed_iterations = static_cast<int>(ctx.params().integer("iterations"));
  plan.pairs = ctx.params().boolean("pairs");
  plan.slow_host_factor = ctx.params().real("slow-host-factor");
  return plan;
}

std::string self_exe() {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/exe", ec).string();
}

LaunchPlan launch_plan_from(const ProbeContext& ctx) {
  const ParamValues& p = ctx.params();
  LaunchPlan plan;
  plan.mpirun = p.text("mpirun");
  plan.ranks = static_cast<int>(p.integer("ranks"));
  plan.hostfile = p.text("hostfile");
  plan.extra_args = p.text("mpirun-args");
  plan.as_root = geteuid() == 0;
  plan.self_exe = self_exe();
  plan.probe_id = "comm.host-fabric";
  plan.level = to_string(ctx.level());
  plan.params = {{"min-size", std::to_string(p.size_bytes("min-size"))},
                 {"max-size", std::to_string(p.size_bytes("max-size"))},
                 {"rank-timeout", fmt::format("{}s", p.duration_s("rank-timeout"))},
                 {"iterations", std::to_string(p.integer("iterations"))},
                 {"pairs", p.boolean("pairs") ? "true" : "false"},
                 {"slow-host-factor", fmt::format("{}", p.real("slow-host-factor"))}};
  if (p.boolean("pairs")) {  // one rank on each host of the hostfile, whatever its slots
    plan.ranks = static_cast<int>(hostfile_hosts(plan.hostfile).size());
    plan.extra_args = "--map-by node " + plan.extra_args;
  }
  if (ctx.settings().repetitions) plan.params.emplace_back("repetitions", std::to_string(*ctx.settings().repetitions));
  return plan;
}

void adopt_report(ProbeContext& ctx, const RankReport& report) {
  for (const Metric& m : report.metrics) ctx.add_metric(m);
  for (const Finding& f : report.findings) ctx.add_finding(f.severity, f.code, f.message);
  for (const auto& [key, value] : report.info.items()) ctx.info()[key] = value;
}

constexpr double launcher_grace_s = 10;

Outcome self_launch(ProbeContext& ctx, double backstop_s) {
  // Only the launcher's own log lives here, on the launching machine; rank 0's figures come back
  // through the launcher's forwarded stdout, so no file system is shared with the ranks' hosts.
  const std::string dir = std::filesystem::temp_directory_path() / fmt::format("nodeaudit-hostfabric-{}", getpid());
  std::filesystem::create_directories(dir);
  const auto args = launch_command(launch_plan_from(ctx));
  std::string command;
  for (const auto& a : args) command += (command.empty() ? "" : " ") + a;
  ctx.info()["launch_command"] = command;
  ctx.info()["launched_from"] = host_name();
  const std::string log = dir + "/launcher.log";
  JobWatch watch(log, ctx.params().duration_s("rank-timeout"), launcher_grace_s);
  const LaunchEnd end = run_launcher(args, log, backstop_s, [&] { return ctx.cancelled(); }, [&] { return watch.poll(); });
  watch.poll();  // the last lines written before the launcher ended
  std::filesystem::remove_all(dir);
  const LaunchVerdict verdict = judge_launch(end, watch.stream(), backstop_s);
  if (verdict.report) adopt_report(ctx, *verdict.report);
  if (verdict.report && ctx.info().contains("multinode")) ctx.info()["multinode"]["launched_from"] = host_name();
  return verdict.outcome;
}

Outcome measure_host_fabric(ProbeContext& ctx) {
  const std::uint64_t min_bytes = ctx.params().size_bytes("min-size"), max_bytes = ctx.params().size_bytes("max-size");
  if (min_bytes > max_bytes)
    return Outcome::bad_input(fmt::format("--min-size {} is larger than --max-size {}: the sweep needs min <= max",
                                          format_bytes(static_cast<double>(min_bytes)), format_bytes(static_cast<double>(max_bytes))));
  const auto job = detect_mpi_job([](const char* name) { return std::getenv(name); });
  if (!job) {
    if (ctx.params().integer("ranks") == 1)
      return Outcome::bad_input("--ranks 1: host-fabric needs at least 2 ranks (2 or more, or 0 for one per slot of the hostfile or allocation)");
    const std::string hostfile = ctx.params().text("hostfile");
    if (!hostfile.empty())
      if (auto problem = hostfile_problem(hostfile)) return Outcome::bad_input(*problem);
    if (ctx.params().boolean("pairs") && (hostfile.empty() || hostfile_hosts(hostfile).size() < 2))
      return Outcome::bad_input(fmt::format("--pairs: needs 2 or more hosts to pair; {}",
                                            hostfile.empty() ? "give them with --hostfile (one host per line)"
                                                             : "--hostfile " + hostfile + " names 1"));
    return self_launch(ctx, deadline_for_repetitions(host_fabric_deadline_s(ctx.params(), ctx.level()), ctx.settings()));
  }
  if (is_isolated_run_child(read_own_argv()))  // `run` under mpirun runs MPI probes in-process, never as a child
    return Outcome::failed(
        "a probe child process of `nodeaudit run` cannot join an MPI job (Open MPI allows one MPI_Init per rank); "
        "use `mpirun -np N nodeaudit run --only 'comm.*'` or `mpirun -np N nodeaudit probe comm.host-fabric`");
  return measure_host_fabric_as_rank(ctx, plan_from(ctx));
}
#endif

ProbeSpec make_host_fabric_spec() {
  ProbeSpec spec;
  spec.id = "comm.host-fabric";
  spec.description = "MPI ping-pong and all-reduce on host memory between ranks: the node's network path without GPUs";
  spec.needs = {Need::mpi};
  spec.params = {
      ParamSpec{.name = "min-size", .type = ParamType::size, .default_by_level = same_at_all_levels("8"),
                .help = "Smallest message; sizes run from here up to --max-size by factor 2", .min = 8, .max = 1ull << 31,
                .power_of_two = true},
      ParamSpec{.name = "max-size", .type = ParamType::size, .default_by_level = {"4MiB", "64MiB", "1GiB"},
                .help = "Largest message", .min = 8, .max = 1ull << 31, .power_of_two = true},
      ParamSpec{.name = "ranks", .type = ParamType::integer, .default_by_level = same_at_all_levels("2"),
                .help = "Ranks to start when not already inside an MPI job; 0 = one per slot of the hostfile or allocation",
                .min = 0, .max = 65536},
      ParamSpec{.name = "hostfile", .type = ParamType::text, .default_by_level = same_at_all_levels(""),
                .help = "mpirun --hostfile for a self-started job; empty = this host (or the Slurm allocation)"},
      ParamSpec{.name = "mpirun", .type = ParamType::text, .default_by_level = same_at_all_levels("mpirun"),
                .help = "Launcher for a self-started job"},
      ParamSpec{.name = "mpirun-args", .type = ParamType::text, .default_by_level = same_at_all_levels(""),
                .help = "Extra launcher arguments, split on spaces (e.g. '--mca btl tcp,self')"},
      ParamSpec{.name = "iterations", .type = ParamType::integer, .default_by_level = same_at_all_levels("0"),
                .help = "Round trips (and all-reduces) per timed repetition; 0 = as many as fill the level's repetition time. "
                        "A fixed count matches NetPIPE's -n", .min = 0, .max = 10000000},
      ParamSpec{.name = "pairs", .type = ParamType::boolean, .default_by_level = same_at_all_levels("false"),
                .help = "Ping-pong between every pair of hosts (the first rank of each) at --min-size and --max-size, in "
                        "N-1 rounds of concurrent pairs, and name the slow host; instead of the rank-0 sweep"},
      ParamSpec{.name = "slow-host-factor", .type = ParamType::real, .default_by_level = same_at_all_levels("2"),
                .help = "--pairs: a host whose pairs' median bandwidth is this many times below the median of the pairs "
                        "without it is named", .min = 1.1, .max = 1000},
      ParamSpec{.name = "rank-timeout", .type = ParamType::duration, .default_by_level = {"60s", "300s", "1800s"},
                .help = "No progress for this long ends the job: a rank that completes no timed step for it (a peer died "
                        "or hangs, a host was lost) ends itself, naming the phase; a self-started launcher that has not "
                        "ended 10 s later is killed. Figures completed before are kept", .min = 1, .max = 86400},
  };
#if NODEAUDIT_COMM_HAVE_MPI
  spec.body = measure_host_fabric;
#else
  spec.not_built_reason = NODEAUDIT_COMM_MPI_MISSING;
#endif
  spec.deadline_s = host_fabric_deadline_s;
  spec.across_mpi_ranks = true;
  return spec;
}

const ProbeRegistrar host_fabric_registrar{make_host_fabric_spec()};

}  // namespace
}  // namespace nodeaudit::comm
