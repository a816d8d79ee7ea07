#include "harness/node/slurm_step.hpp"

#include <fmt/format.h>

#include "harness/node/mpi_env.hpp"

namespace nodeaudit {

std::optional<SlurmStepTasks> slurm_tasks_without_mpi(const EnvReader& env) {
  if (mpi_world_rank_in(env)) return std::nullopt;
  const auto tasks = env_whole_number(env("SLURM_STEP_NUM_TASKS"));
  const auto task = env_whole_number(env("SLURM_PROCID"));
  if (!tasks || !task || *tasks < 2) return std::nullopt;
  return SlurmStepTasks{*task, *tasks, env_whole_number(env("SLURM_STEP_NUM_NODES")).value_or(0)};
}

std::optional<std::string> slurm_tasks_refusal(const SlurmStepTasks& step, bool plans_mpi_probe) {
  const std::string launch = fmt::format("srun started {} tasks without MPI rank variables", step.tasks);
  const std::string fix = fmt::format(
      "give them ranks with `srun --mpi=pmix -n {}` (`srun --mpi=list` shows what this Slurm offers), or run "
      "`mpirun nodeaudit ...` from the batch script (comm/README.md)", step.tasks);
  if (plans_mpi_probe)
    return fmt::format("{}: each task would start an MPI job of its own or measure alone; {}", launch, fix);
  if (step.nodes > 0 && step.tasks > step.nodes)
    return fmt::format("{} on {} node(s): tasks on one node would measure the same hardware at once; run one task per "
                       "node (`srun --ntasks-per-node=1`), or {}", launch, step.nodes, fix);
  return std::nullopt;
}

std::optional<LaunchedTask> launched_task(const EnvReader& env) {
  if (const auto rank = mpi_world_rank_in(env)) return LaunchedTask{*rank, "MPI rank"};
  if (const auto step = slurm_tasks_without_mpi(env)) return LaunchedTask{step->task, "Slurm task"};
  return std::nullopt;
}

}  // namespace nodeaudit
