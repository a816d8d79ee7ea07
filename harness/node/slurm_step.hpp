// srun started this process as one of several tasks of a job step, but gave it no MPI rank (no
// `--mpi=pmix`, or a Slurm without the plug-in). The tasks cannot then agree on anything: each
// MPI probe would start a job of its own (comm.host-fabric self-launches mpirun in every task) or
// measure its node alone, and two tasks on one node would measure the same hardware at once. A
// batch script is not such a task: it has SLURM_PROCID but no SLURM_STEP_NUM_TASKS.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace nodeaudit {

struct SlurmStepTasks {
  int task = 0;   // SLURM_PROCID
  int tasks = 0;  // SLURM_STEP_NUM_TASKS
  int nodes = 0;  // SLURM_STEP_NUM_NODES (0 when not given)
};

using EnvReader = std::function<const char*(const char*)>;

// The step's tasks when there are 2 or more and none has an MPI rank variable; else nullopt.
std::optional<SlurmStepTasks> slurm_tasks_without_mpi(const EnvReader& env);

// Why `command` cannot run as these tasks, or nullopt when it can: one task per node that plans
// no MPI probe is a per-node audit (`srun -N 4 --ntasks-per-node=1 nodeaudit run --skip 'comm.*'`).
std::optional<std::string> slurm_tasks_refusal(const SlurmStepTasks& step, bool plans_mpi_probe);

// Which of the processes that got the same command line says a shared error: its MPI rank, or its
// Slurm task in such a step ("MPI rank 0" / "Slurm task 0"); nullopt when it runs alone.
struct LaunchedTask {
  int index = 0;
  const char* kind = "MPI rank";
};
std::optional<LaunchedTask> launched_task(const EnvReader& env);

}  // namespace nodeaudit
