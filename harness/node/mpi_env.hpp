// Whether this process is one rank of a job an MPI launcher started (mpirun, srun --mpi, mpiexec),
// read from the launcher's environment before any MPI call. The harness needs only this to let
// rank 0 alone write and print; the MPI work itself lives in comm/.
#pragma once

#include <cstdlib>
#include <optional>

namespace nodeaudit {

// A launcher variable's value as a non-negative whole number; nullopt when unset, empty or not
// exactly such a number.
inline std::optional<int> env_whole_number(const char* text) {
  if (!text || !*text) return std::nullopt;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 0) return std::nullopt;
  return static_cast<int>(value);
}

// This rank's index in the job, or nullopt outside an MPI job, read through `env` (std::getenv or
// a test's table). Slurm's SLURM_PROCID alone does not count: a batch script has it without being
// an MPI rank.
template <class EnvReader>
std::optional<int> mpi_world_rank_in(const EnvReader& env) {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const auto rank = env_whole_number(env(name))) return rank;
  return std::nullopt;
}

inline std::optional<int> mpi_world_rank_from_env() { return mpi_world_rank_in(std::getenv); }

}  // namespace nodeaudit
