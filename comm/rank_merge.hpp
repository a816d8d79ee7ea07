// Combining what the ranks of one multi-rank run measured, host-side and unit-tested: who took
// part (hosts, versions), whether they may be compared at all, and one figure per size.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nodeaudit::comm {

struct RankIdentity {
  int rank = 0;
  std::string host;
  std::string version;     // nodeaudit version
  std::string git_commit;  // the commit it was built from
};

// Fixed-size wire form, so identities travel in one MPI_Gather of bytes.
inline constexpr std::size_t identity_wire_bytes = 256;
std::string encode_identity(const RankIdentity& id);  // exactly identity_wire_bytes
RankIdentity decode_identity(const char* wire, int rank);

// The refusal when ranks run different builds, naming both; empty when all agree with rank 0.
std::optional<std::string> version_mismatch(const std::vector<RankIdentity>& ranks);

// Distinct host names in rank order, and "host:rank,rank" groups for the result.
std::vector<std::string> distinct_hosts(const std::vector<RankIdentity>& ranks);

// Rank 0's ping-pong partner: the first rank on another host (the network path, whatever the
// placement), else rank 1 (one host: shared memory). Needs at least 2 ranks.
int pingpong_partner(const std::vector<RankIdentity>& ranks);

// nccl-tests' default (-a 1): the time of an operation is the mean of the ranks' times.
// per_rank[r][k] is rank r's k-th sample; ranks must agree on the sample count.
std::vector<double> mean_across_ranks(const std::vector<std::vector<double>>& per_rank);

// Wrong elements over all ranks.
std::uint64_t total_wrong(const std::vector<std::uint64_t>& per_rank);

}  // namespace nodeaudit::comm
