// Which srun steps nodeaudit refuses: tasks that got no MPI rank can agree on nothing, so MPI probes
// and two tasks on one node are refused; one task per node auditing its own node is not. The
// environment is a table here; tests/comm/slurm_check.sh runs the same refusal under a real srun.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "harness/node/slurm_step.hpp"

namespace nodeaudit {
namespace {

EnvReader table(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(SlurmStep, TwoTasksOfAStepWithoutMpiRanksAreFound) {
  const auto step = slurm_tasks_without_mpi(
      table({{"SLURM_PROCID", "1"}, {"SLURM_STEP_NUM_TASKS", "2"}, {"SLURM_STEP_NUM_NODES", "1"}}));
  ASSERT_TRUE(step.has_value());
  EXPECT_EQ(step->task, 1);
  EXPECT_EQ(step->tasks, 2);
  EXPECT_EQ(step->nodes, 1);
}

TEST(SlurmStep, BatchScriptsSingleTasksAndMpiRanksAreNotSuchSteps) {
  // A batch script: SLURM_PROCID and SLURM_NTASKS, no step variables.
  EXPECT_FALSE(slurm_tasks_without_mpi(table({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}})));
  EXPECT_FALSE(slurm_tasks_without_mpi(table({{"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", "1"}})));
  // srun --mpi=pmix: the tasks are MPI ranks.
  EXPECT_FALSE(slurm_tasks_without_mpi(
      table({{"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", "2"}, {"PMIX_RANK", "0"}})));
  EXPECT_FALSE(slurm_tasks_without_mpi(table({})));
}

TEST(SlurmStep, MpiProbesAndTwoTasksOnOneNodeAreRefusedNamingTheFix) {
  const auto mpi = slurm_tasks_refusal({0, 2, 2}, true);
  ASSERT_TRUE(mpi.has_value());
  EXPECT_NE(mpi->find("srun started 2 tasks without MPI rank variables"), std::string::npos) << *mpi;
  EXPECT_NE(mpi->find("srun --mpi=pmix -n 2"), std::string::npos) << *mpi;

  const auto crowded = slurm_tasks_refusal({0, 4, 2}, false);
  ASSERT_TRUE(crowded.has_value());
  EXPECT_NE(crowded->find("on 2 node(s)"), std::string::npos) << *crowded;
  EXPECT_NE(crowded->find("--ntasks-per-node=1"), std::string::npos) << *crowded;
}

TEST(SlurmStep, OneTaskPerNodeWithoutMpiProbesIsAPerNodeAudit) {
  EXPECT_FALSE(slurm_tasks_refusal({3, 4, 4}, false));
}

TEST(SlurmStep, TheSharedErrorIsSaidByRankOrTaskZero) {
  const auto rank = launched_task(table({{"OMPI_COMM_WORLD_RANK", "2"}}));
  ASSERT_TRUE(rank.has_value());
  EXPECT_EQ(rank->index, 2);
  EXPECT_STREQ(rank->kind, "MPI rank");
  const auto task = launched_task(table({{"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", "3"}}));
  ASSERT_TRUE(task.has_value());
  EXPECT_EQ(task->index, 0);
  EXPECT_STREQ(task->kind, "Slurm task");
  EXPECT_FALSE(launched_task(table({{"SLURM_PROCID", "0"}})));
}

}  // namespace
}  // namespace nodeaudit
