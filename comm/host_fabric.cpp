// comm.host-fabric — MPI all-reduce and ping-pong on host memory between ranks (see
// host_fabric_rank.cpp for the formulas). This file decides where the ranks come from:
//  - inside an MPI job (`mpirun -np N nodeaudit probe comm.host-fabric`): this process is a rank;
//  - otherwise (`nodeaudit run`, `nodeaudit probe` alone) it starts the job itself with mpirun
//    (--ranks, --hostfile) and takes rank 0's report; the ranks' deadline is --rank-timeout and
//    past it the launcher kills them, so a dead or hung rank never hangs the run.
// A `nodeaudit run` child inside an outer MPI job is refused: each probe of a run is its own
// process and Open MPI allows one MPI_Init per rank, so a second MPI probe could not join.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "context.hpp"
#include "mpi_launch.hpp"
#include "rank_report.hpp"
#include "registry.hpp"
#include "units.hpp"

#if NODEAUDIT_COMM_HAVE_MPI
#include "host_fabric_rank.hpp"
#endif

namespace nodeaudit::comm {
namespace {

#if NODEAUDIT_COMM_HAVE_MPI
HostFabricPlan plan_from(const ProbeContext& ctx) {
  HostFabricPlan plan;
  plan.min_bytes = ctx.params().size_bytes("min-size");
  plan.max_bytes = ctx.params().size_bytes("max-size");
  plan.rank_timeout_s = ctx.params().duration_s("rank-timeout");
  plan.target_rep_s = ctx.level() == Level::quick ? 0.005 : ctx.level() == Level::standard ? 0.02 : 0.1;
  plan.fixed_iterations = static_cast<int>(ctx.params().integer("iterations"));
  return plan;
}

std::string self_exe() {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/exe", ec).string();
}

LaunchPlan launch_plan_from(const ProbeContext& ctx, const std::string& rank_out) {
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
  plan.rank_out_path = rank_out;
  plan.params = {{"min-size", std::to_string(p.size_bytes("min-size"))},
                 {"max-size", std::to_string(p.size_bytes("max-size"))},
                 {"rank-timeout", fmt::format("{}s", p.duration_s("rank-timeout"))},
                 {"iterations", std::to_string(p.integer("iterations"))}};
  if (ctx.settings().repetitions) plan.params.emplace_back("repetitions", std::to_string(*ctx.settings().repetitions));
  return plan;
}

void adopt_report(ProbeContext& ctx, const RankReport& report) {
  for (const Metric& m : report.metrics) ctx.add_metric(m);
  for (const Finding& f : report.findings) ctx.add_finding(f.severity, f.code, f.message);
  for (const auto& [key, value] : report.info.items()) ctx.info()[key] = value;
}

Outcome self_launch(ProbeContext& ctx) {
  const std::string dir = std::filesystem::temp_directory_path() / fmt::format("nodeaudit-hostfabric-{}", getpid());
  std::filesystem::create_directories(dir);
  const std::string rank_out = dir + "/rank0.json";
  const LaunchPlan plan = launch_plan_from(ctx, rank_out);
  const auto args = launch_command(plan);
  std::string command;
  for (const auto& a : args) command += (command.empty() ? "" : " ") + a;
  ctx.info()["launch_command"] = command;
  const double timeout_s = ctx.params().duration_s("rank-timeout") + 10;
  const LaunchEnd end = run_launcher(args, dir + "/launcher.log", timeout_s, [&] { return ctx.cancelled(); });
  const auto report = read_report_file(rank_out);
  std::filesystem::remove_all(dir);
  if (end.interrupted) return Outcome::interrupted();
  if (!report) return Outcome::failed(describe_failed_launch(end, timeout_s));
  adopt_report(ctx, *report);
  return report->outcome;
}

Outcome measure_host_fabric(ProbeContext& ctx) {
  const std::uint64_t min_bytes = ctx.params().size_bytes("min-size"), max_bytes = ctx.params().size_bytes("max-size");
  if (min_bytes > max_bytes)
    return Outcome::bad_input(fmt::format("--min-size {} is larger than --max-size {}: the sweep needs min <= max",
                                          format_bytes(static_cast<double>(min_bytes)), format_bytes(static_cast<double>(max_bytes))));
  const auto job = detect_mpi_job([](const char* name) { return std::getenv(name); });
  if (!job) return self_launch(ctx);
  if (is_isolated_run_child(read_own_argv()))  // `run` under mpirun runs MPI probes in-process, never as a child
    return Outcome::failed(
        "a probe child process of `nodeaudit run` cannot join an MPI job (Open MPI allows one MPI_Init per rank); "
        "use `mpirun -np N nodeaudit run --only 'comm.*'` or `mpirun -np N nodeaudit probe comm.host-fabric`");
  return measure_host_fabric_as_rank(ctx, plan_from(ctx));
}
#endif

double host_fabric_deadline_s(const ParamValues& params, Level) { return params.duration_s("rank-timeout") + 30; }

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
      ParamSpec{.name = "rank-timeout", .type = ParamType::duration, .default_by_level = {"60s", "300s", "1800s"},
                .help = "The ranks must finish within this; past it each rank ends itself and the launcher kills the job (a peer died or hangs)", .min = 1, .max = 86400},
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

const ProbeRegistrar registrar{make_host_fabric_spec()};

}  // namespace
}  // namespace nodeaudit::comm
