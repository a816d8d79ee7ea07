#include "comm/rank_merge.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace nodeaudit::comm {
namespace {

std::string describe(const RankIdentity& id) {
  return fmt::format("rank {} on {} runs nodeaudit {} (git {})", id.rank, id.host, id.version, id.git_commit);
}

}  // namespace

std::string encode_identity(const RankIdentity& id) {
  std::string wire = id.host + '\n' + id.version + '\n' + id.git_commit;
  wire.resize(identity_wire_bytes - 1, '\0');
  wire.push_back('\0');
  return wire;
}

RankIdentity decode_identity(const char* wire, int rank) {
  const std::string text(wire, strnlen(wire, identity_wire_bytes));
  RankIdentity id;
  id.rank = rank;
  const auto first = text.find('\n');
  const auto second = first == std::string::npos ? std::string::npos : text.find('\n', first + 1);
  id.host = text.substr(0, first);
  if (first != std::string::npos) id.version = text.substr(first + 1, second - first - 1);
  if (second != std::string::npos) id.git_commit = text.substr(second + 1);
  return id;
}

std::optional<std::string> version_mismatch(const std::vector<RankIdentity>& ranks) {
  if (ranks.empty()) return std::nullopt;
  const RankIdentity& reference = ranks.front();
  for (const RankIdentity& id : ranks)
    if (id.version != reference.version || id.git_commit != reference.git_commit)
      return fmt::format("ranks run different nodeaudit builds: {}, but {}; run one build on every rank",
                         describe(reference), describe(id));
  return std::nullopt;
}

std::vector<std::string> distinct_hosts(const std::vector<RankIdentity>& ranks) {
  std::vector<std::string> hosts;
  for (const RankIdentity& id : ranks)
    if (std::find(hosts.begin(), hosts.end(), id.host) == hosts.end()) hosts.push_back(id.host);
  return hosts;
}

int pingpong_partner(const std::vector<RankIdentity>& ranks) {
  for (const RankIdentity& id : ranks)
    if (id.host != ranks.front().host) return id.rank;
  return 1;
}

std::vector<double> mean_across_ranks(const std::vector<std::vector<double>>& per_rank) {
  if (per_rank.empty()) return {};
  const std::size_t samples = per_rank.front().size();
  std::vector<double> mean(samples, 0.0);
  for (const auto& rank_samples : per_rank) {
    if (rank_samples.size() != samples) throw std::invalid_argument("ranks disagree on the number of samples");
    for (std::size_t k = 0; k < samples; ++k) mean[k] += rank_samples[k];
  }
  for (double& m : mean) m /= static_cast<double>(per_rank.size());
  return mean;
}

std::uint64_t total_wrong(const std::vector<std::uint64_t>& per_rank) {
  std::uint64_t total = 0;
  for (std::uint64_t w : per_rank) total += w;
  return total;
}

}  // namespace nodeaudit::comm
