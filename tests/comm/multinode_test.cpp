// Multi-node NCCL bootstrap decisions on the CPU: local rank from the launcher's variables, GPU per
// rank, the same refusal on every rank (no device, fewer GPUs than ranks), the multinode block.
#include <gtest/gtest.h>

#include <map>

#include "comm/multinode.hpp"

using namespace nodeaudit;
using namespace nodeaudit::comm;

namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

RankGpuState rank_state(int rank, const std::string& host, int local_rank, int device, int count, std::string error = "") {
  return RankGpuState{rank, host, local_rank, device, count, std::move(error)};
}

}  // namespace

TEST(LocalRank, OpenMpiVariableFirst) {
  EXPECT_EQ(local_rank_from_env(env_of({{"OMPI_COMM_WORLD_RANK", "5"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                        {"SLURM_LOCALID", "0"}, {"SLURM_PROCID", "5"}})),
            1);
}

TEST(LocalRank, SrunLocalIdWhenSlurmStartedTheRank) {
  EXPECT_EQ(local_rank_from_env(env_of({{"PMIX_RANK", "6"}, {"SLURM_PROCID", "6"}, {"SLURM_LOCALID", "2"}})), 2);
}

TEST(LocalRank, BatchScriptLocalIdIsNotTrustedUnderMpirun) {
  // mpirun inside sbatch: every rank inherits the script's SLURM_PROCID=0 / SLURM_LOCALID=0.
  EXPECT_EQ(local_rank_from_env(env_of({{"PMIX_RANK", "3"}, {"SLURM_PROCID", "0"}, {"SLURM_LOCALID", "0"}})), std::nullopt);
}

TEST(LocalRank, HydraVariableAndNothing) {
  EXPECT_EQ(local_rank_from_env(env_of({{"PMI_RANK", "4"}, {"MPI_LOCALRANKID", "3"}})), 3);
  EXPECT_EQ(local_rank_from_env(env_of({{"PMI_RANK", "4"}})), std::nullopt);  // ask MPI (split SHARED)
  EXPECT_EQ(local_rank_from_env(env_of({{"OMPI_COMM_WORLD_LOCAL_RANK", "x1"}})), std::nullopt);
}

TEST(LocalDevice, LocalRankOrGpusEntry) {
  EXPECT_EQ(local_device(2, std::nullopt), 2);
  EXPECT_EQ(local_device(1, std::vector<int>{4, 6}), 6);
  EXPECT_EQ(local_device(2, std::vector<int>{4, 6}), -1);
}

TEST(GpuStateWire, RoundTripsAndFlattensNewlines) {
  const RankGpuState s = rank_state(0, "node-a.cluster", 3, 3, 8, "cudaGetDeviceCount: no\nCUDA-capable device");
  const std::string wire = encode_gpu_state(s);
  ASSERT_EQ(wire.size(), gpu_state_wire_bytes);
  const RankGpuState back = decode_gpu_state(wire.data(), 7);
  EXPECT_EQ(back.rank, 7);
  EXPECT_EQ(back.host, "node-a.cluster");
  EXPECT_EQ(back.local_rank, 3);
  EXPECT_EQ(back.device, 3);
  EXPECT_EQ(back.device_count, 8);
  EXPECT_EQ(back.device_error, "cudaGetDeviceCount: no CUDA-capable device");
}

TEST(Bootstrap, ProceedsWithOneGpuPerRank) {
  EXPECT_EQ(bootstrap_refusal({rank_state(0, "a", 0, 0, 2), rank_state(1, "a", 1, 1, 2), rank_state(2, "b", 0, 0, 2),
                               rank_state(3, "b", 1, 1, 2)}),
            std::nullopt);
}

TEST(Bootstrap, NoDeviceAnywhereSkipsNamingRankAndHost) {
  const auto refusal = bootstrap_refusal({rank_state(0, "a", 0, 0, 0, "cudaGetDeviceCount: no CUDA-capable device is detected"),
                                          rank_state(1, "a", 1, 1, 0, "cudaGetDeviceCount: no CUDA-capable device is detected")});
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->status, Status::skipped);
  EXPECT_FALSE(refusal->input_error);
  EXPECT_EQ(refusal->reason,
            "no CUDA device on 2 of 2 ranks (rank 0 on a: cudaGetDeviceCount: no CUDA-capable device is detected)");
}

TEST(Bootstrap, OneHostWithoutDeviceSkipsEveryRank) {
  const auto refusal = bootstrap_refusal({rank_state(0, "a", 0, 0, 1), rank_state(1, "b", 0, 0, 0)});
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->status, Status::skipped);
  EXPECT_NE(refusal->reason.find("1 of 2 ranks (rank 1 on b: 0 devices)"), std::string::npos) << refusal->reason;
}

TEST(Bootstrap, FewerGpusThanRanksIsBadInput) {
  const auto refusal = bootstrap_refusal({rank_state(0, "a", 0, 0, 2), rank_state(1, "a", 1, 1, 2), rank_state(2, "a", 2, 2, 2)});
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->status, Status::failed);
  EXPECT_TRUE(refusal->input_error);
  EXPECT_NE(refusal->reason.find("a runs 3 ranks but rank 2 on a (local rank 2) has no GPU of its own: 2 CUDA devices"),
            std::string::npos)
      << refusal->reason;
  EXPECT_NE(refusal->reason.find("--map-by ppr:2:node"), std::string::npos) << refusal->reason;
}

TEST(Bootstrap, GpusListShorterThanLocalRanksIsBadInput) {
  const auto refusal = bootstrap_refusal({rank_state(0, "a", 0, 4, 8), rank_state(1, "a", 1, -1, 8)});
  ASSERT_TRUE(refusal);
  EXPECT_TRUE(refusal->input_error);
  EXPECT_NE(refusal->reason.find("--gpus lists fewer GPUs than ranks"), std::string::npos) << refusal->reason;
}

TEST(Bootstrap, TwoRanksOnOneGpuIsBadInput) {
  const auto refusal = bootstrap_refusal({rank_state(0, "a", 0, 0, 2), rank_state(1, "a", 0, 0, 2)});
  ASSERT_TRUE(refusal);
  EXPECT_TRUE(refusal->input_error);
  EXPECT_NE(refusal->reason.find("rank 0 on a and rank 1 on a would both drive GPU 0"), std::string::npos) << refusal->reason;
}

TEST(MultinodeBlock, HostsInRankOrderAndGpuPerRank) {
  const auto block = multinode_block({rank_state(0, "b", 0, 0, 2), rank_state(1, "a", 0, 1, 2), rank_state(2, "b", 1, 1, 2),
                                      rank_state(3, "c", 0, 0, 0)});
  EXPECT_EQ(block["ranks"], 4);
  EXPECT_EQ(block["hosts"], nlohmann::json({"b", "a", "c"}));
  ASSERT_EQ(block["placement"].size(), 4u);
  EXPECT_EQ(block["placement"][1], nlohmann::json({{"rank", 1}, {"host", "a"}, {"local_rank", 0}, {"gpu", 1}}));
  EXPECT_TRUE(block["placement"][3]["gpu"].is_null());  // no device on that rank
}
