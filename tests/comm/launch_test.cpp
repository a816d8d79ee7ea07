// MPI job detection, the self-launch command, and the launcher's timeout.
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "comm/mpi_launch.hpp"

using namespace nodeaudit::comm;

namespace {
EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}
}  // namespace

TEST(Detect, OpenMpiPmixAndPmi) {
  EXPECT_FALSE(detect_mpi_job(env_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}})).has_value());
  auto job = detect_mpi_job(env_of({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "8"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}}));
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->rank, 3);
  EXPECT_EQ(job->size, 8);
  EXPECT_EQ(job->local_rank, 1);
  job = detect_mpi_job(env_of({{"PMI_RANK", "2"}, {"PMI_SIZE", "4"}}));
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->rank, 2);
  EXPECT_FALSE(detect_mpi_job(env_of({{"PMI_RANK", "x"}})).has_value());
}

TEST(Detect, RunChildByItsArgv) {
  EXPECT_TRUE(is_isolated_run_child({"nodeaudit", "probe", "comm.host-fabric", "--child-out", "/tmp/x"}));
  EXPECT_FALSE(is_isolated_run_child({"nodeaudit", "probe", "comm.host-fabric"}));
}

TEST(Command, SelfLaunch) {
  LaunchPlan p;
  p.ranks = 4;
  p.hostfile = "hosts.txt";
  p.extra_args = "--mca btl tcp,self";
  p.as_root = true;
  p.self_exe = "/bin/nodeaudit";
  p.probe_id = "comm.host-fabric";
  p.level = "quick";
  p.params = {{"max-size", "4096"}};
  const std::vector<std::string> expected = {"mpirun", "--allow-run-as-root", "--oversubscribe", "--hostfile", "hosts.txt",
                                             "-np", "4", "-x", "NODEAUDIT_COMM_REPORT=stdout", "--mca", "btl",
                                             "tcp,self", "/bin/nodeaudit", "probe", "comm.host-fabric", "--level", "quick",
                                             "--max-size", "4096"};
  EXPECT_EQ(launch_command(p), expected);
  p.ranks = 0;  // one rank per slot: no -np
  p.as_root = false;
  const auto args = launch_command(p);
  EXPECT_EQ(std::find(args.begin(), args.end(), "-np"), args.end());
  EXPECT_EQ(std::find(args.begin(), args.end(), "--allow-run-as-root"), args.end());
}

TEST(Launcher, KillsAHungJobAtTheTimeout) {
  const LaunchEnd end = run_launcher({"sh", "-c", "echo started; sleep 30"}, "/tmp/nodeaudit-launch-hung.log", 3, {});
  EXPECT_TRUE(end.started);
  EXPECT_TRUE(end.timed_out);
  EXPECT_EQ(end.log_tail, "started");
  EXPECT_NE(describe_failed_launch(end, 3).find("did not finish within"), std::string::npos);
}

TEST(Launcher, ReportsExitCodeAndMissingProgram) {
  LaunchEnd end = run_launcher({"sh", "-c", "echo boom >&2; exit 3"}, "/tmp/nodeaudit-launch-exit.log", 10, {});
  EXPECT_EQ(end.exit_code, 3);
  EXPECT_EQ(end.log_tail, "boom");
  end = run_launcher({"/nonexistent/mpirun"}, "/tmp/nodeaudit-launch-test.log", 10, {});
  EXPECT_FALSE(end.started);
  EXPECT_NE(end.start_error.find("/nonexistent/mpirun"), std::string::npos);
}
