#include "comm/multinode.hpp"

#include <cstdlib>
#include <cstring>
#include <map>

#include <fmt/format.h>

namespace nodeaudit::comm {
namespace {

std::string where(const RankGpuState& s) { return fmt::format("rank {} on {}", s.rank, s.host); }

}  // namespace

std::optional<int> local_rank_from_env(const EnvLookup& env) {
  if (auto v = env_int(env, "OMPI_COMM_WORLD_LOCAL_RANK")) return v;
  if (auto v = env_int(env, "MPI_LOCALRANKID")) return v;  // MPICH / Intel MPI (Hydra)
  // srun sets SLURM_LOCALID per task; mpirun inside a batch script inherits the script's
  // SLURM_LOCALID (0 on every rank), so it counts only when SLURM_PROCID is this MPI rank.
  const auto slurm_local = env_int(env, "SLURM_LOCALID");
  const auto slurm_rank = env_int(env, "SLURM_PROCID");
  const auto job = detect_mpi_job(env);
  if (slurm_local && slurm_rank && job && *slurm_rank == job->rank) return slurm_local;
  return std::nullopt;
}

int local_device(int local_rank, const std::optional<std::vector<int>>& gpus) {
  if (local_rank < 0) return -1;
  if (!gpus) return local_rank;
  return local_rank < static_cast<int>(gpus->size()) ? (*gpus)[static_cast<std::size_t>(local_rank)] : -1;
}

std::string encode_gpu_state(const RankGpuState& s) {
  std::string error = s.device_error.substr(0, 300);
  for (char& c : error)
    if (c == '\n') c = ' ';
  std::string wire = fmt::format("{}\n{}\n{}\n{}\n{}", s.host.substr(0, 180), s.local_rank, s.device, s.device_count, error);
  wire.resize(gpu_state_wire_bytes - 1, '\0');
  wire.push_back('\0');
  return wire;
}

RankGpuState decode_gpu_state(const char* wire, int rank) {
  const std::string text(wire, strnlen(wire, gpu_state_wire_bytes));
  std::vector<std::string> fields;
  std::size_t start = 0;
  for (int i = 0; i < 4; ++i) {
    const std::size_t eol = text.find('\n', start);
    fields.push_back(text.substr(start, eol == std::string::npos ? std::string::npos : eol - start));
    start = eol == std::string::npos ? text.size() : eol + 1;
  }
  fields.push_back(text.substr(std::min(start, text.size())));
  RankGpuState s;
  s.rank = rank;
  s.host = fields[0];
  s.local_rank = std::atoi(fields[1].c_str());
  s.device = std::atoi(fields[2].c_str());
  s.device_count = std::atoi(fields[3].c_str());
  s.device_error = fields[4];
  return s;
}

std::optional<Outcome> bootstrap_refusal(const std::vector<RankGpuState>& ranks) {
  std::vector<const RankGpuState*> without;
  for (const auto& s : ranks)
    if (s.device_count <= 0) without.push_back(&s);
  if (!without.empty()) {
    const RankGpuState& first = *without.front();
    const std::string why = first.device_error.empty() ? "0 devices" : first.device_error;
    return Outcome::skipped(fmt::format("no CUDA device on {} of {} ranks ({}: {})", without.size(), ranks.size(),
                                        where(first), why));
  }
  std::map<std::string, int> ranks_per_host;
  for (const auto& s : ranks) ++ranks_per_host[s.host];
  for (const auto& s : ranks) {
    if (s.device < 0 || s.device >= s.device_count)
      return Outcome::bad_input(fmt::format(
          "{} runs {} ranks but {} (local rank {}) has no GPU of its own: {} CUDA devices{}; start one rank per GPU "
          "(mpirun --map-by ppr:{}:node, srun --ntasks-per-node={}) or list more GPUs with --gpus",
          s.host, ranks_per_host[s.host], where(s), s.local_rank, s.device_count,
          s.device >= 0 ? fmt::format(", it was given GPU {}", s.device) : ", --gpus lists fewer GPUs than ranks",
          s.device_count, s.device_count));
    for (const auto& other : ranks)
      if (other.rank < s.rank && other.host == s.host && other.device == s.device)
        return Outcome::bad_input(fmt::format("{} and {} would both drive GPU {}: local ranks must be distinct "
                                              "(the launcher's local rank variables disagree with the hosts)",
                                              where(other), where(s), s.device));
  }
  return std::nullopt;
}

nlohmann::json multinode_block(const std::vector<RankGpuState>& ranks) {
  nlohmann::json hosts = nlohmann::json::array(), placement = nlohmann::json::array();
  for (const auto& s : ranks) {
    if (std::find(hosts.begin(), hosts.end(), s.host) == hosts.end()) hosts.push_back(s.host);
    placement.push_back({{"rank", s.rank}, {"host", s.host}, {"local_rank", s.local_rank},
                         {"gpu", s.device_count > 0 && s.device >= 0 ? nlohmann::json(s.device) : nlohmann::json(nullptr)}});
  }
  return {{"ranks", ranks.size()}, {"hosts", hosts}, {"placement", placement}};
}

}  // namespace nodeaudit::comm
