// Host-side decisions of the multi-node NCCL path (one MPI rank per GPU, NCCL bootstrapped by
// broadcasting rank 0's ncclUniqueId over MPI, as nccl-tests does). Pure and unit-tested:
//  - which GPU a rank drives (its local rank on the host, through --gpus when given);
//  - whether the job may bootstrap at all, decided identically on every rank from every rank's
//    GPU state, so all ranks take the same branch and none waits in ncclCommInitRank alone;
//  - the `multinode` block rank 0 writes: hosts, ranks, the GPU of every rank.
// No MPI, CUDA or NCCL header here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "comm/mpi_launch.hpp"
#include "harness/core/probe.hpp"

namespace nodeaudit::comm {

// The rank's index among the ranks of its host, from the launcher's environment: Open MPI
// (OMPI_COMM_WORLD_LOCAL_RANK), Slurm srun (SLURM_LOCALID), PMIx, MPICH/Hydra. nullopt: ask MPI
// (MPI_Comm_split_type SHARED). SLURM_LOCALID counts only when srun started this process as an
// MPI rank (a batch script has it too).
std::optional<int> local_rank_from_env(const EnvLookup& env);

// The GPU a rank drives: its local rank, or the local rank-th entry of --gpus. -1: none left.
int local_device(int local_rank, const std::optional<std::vector<int>>& gpus);

// One rank's view of its GPUs, exchanged among all ranks before NCCL starts.
struct RankGpuState {
  int rank = 0;
  std::string host;
  int local_rank = 0;
  int device = -1;          // the GPU it would drive (-1: none left in --gpus)
  int device_count = 0;     // CUDA devices it sees
  std::string device_error; // why it sees none ("cudaGetDeviceCount: no CUDA-capable device ...")
};
inline constexpr std::size_t gpu_state_wire_bytes = 512;
std::string encode_gpu_state(const RankGpuState& state);  // exactly gpu_state_wire_bytes
RankGpuState decode_gpu_state(const char* wire, int rank);

// Proceed (nullopt), or the Outcome every rank returns: skipped when a rank has no CUDA device
// (naming it and its host), bad input when a host has fewer GPUs than ranks (or --gpus entries),
// or two ranks of a host would share a GPU.
std::optional<Outcome> bootstrap_refusal(const std::vector<RankGpuState>& ranks);

// {"ranks": N, "hosts": [...], "placement": [{"rank", "host", "local_rank", "gpu"}...]}.
nlohmann::json multinode_block(const std::vector<RankGpuState>& ranks);

}  // namespace nodeaudit::comm
