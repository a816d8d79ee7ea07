// Merging what ranks measured: identities on the wire, the version refusal, mean times, reports.
#include <gtest/gtest.h>

#include "comm/rank_merge.hpp"
#include "comm/rank_report.hpp"

using namespace nodeaudit;
using namespace nodeaudit::comm;

TEST(Identity, WireRoundTrip) {
  const std::string wire = encode_identity({0, "node-a", "0.1.0", "abc123"});
  ASSERT_EQ(wire.size(), identity_wire_bytes);
  const RankIdentity id = decode_identity(wire.data(), 7);
  EXPECT_EQ(id.rank, 7);
  EXPECT_EQ(id.host, "node-a");
  EXPECT_EQ(id.version, "0.1.0");
  EXPECT_EQ(id.git_commit, "abc123");
}

TEST(Identity, DifferentBuildsAreRefusedNamingBoth) {
  std::vector<RankIdentity> ids = {{0, "a", "0.1.0", "abc"}, {1, "a", "0.1.0", "abc"}, {2, "b", "0.2.0", "def"}};
  const auto why = version_mismatch(ids);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("rank 0 on a runs nodeaudit 0.1.0 (git abc)"), std::string::npos) << *why;
  EXPECT_NE(why->find("rank 2 on b runs nodeaudit 0.2.0 (git def)"), std::string::npos) << *why;
  ids[2] = {2, "b", "0.1.0", "abc"};
  EXPECT_FALSE(version_mismatch(ids).has_value());
  ids[1].git_commit = "other";  // same version, other commit: still refused
  EXPECT_TRUE(version_mismatch(ids).has_value());
}

TEST(Identity, DistinctHostsInRankOrder) {
  const std::vector<RankIdentity> ids = {{0, "b", "", ""}, {1, "a", "", ""}, {2, "b", "", ""}};
  EXPECT_EQ(distinct_hosts(ids), (std::vector<std::string>{"b", "a"}));
}

TEST(Merge, MeanAcrossRanksPerSample) {
  EXPECT_EQ(mean_across_ranks({{1, 2, 3}, {3, 4, 5}}), (std::vector<double>{2, 3, 4}));
  EXPECT_THROW(mean_across_ranks({{1, 2}, {1}}), std::invalid_argument);
  EXPECT_EQ(total_wrong({0, 3, 4}), 7u);
}

TEST(Report, JsonRoundTrip) {
  RankReport r;
  r.outcome = Outcome::failed("sums wrong");
  r.metrics.push_back(Metric{"pingpong_bw", "GB/s", Better::higher, {{"size", "8"}, {"ranks", "2"}}, {1.5, 2.5}});
  r.findings.push_back(Finding{Severity::fail, "host_fabric.allreduce_wrong", "3 wrong"});
  r.info["hosts"] = {"a"};
  const auto back = report_from_json(report_to_json(r).dump());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->outcome.status, Status::failed);
  EXPECT_EQ(back->outcome.reason, "sums wrong");
  ASSERT_EQ(back->metrics.size(), 1u);
  EXPECT_EQ(back->metrics[0].labels.at("size"), "8");
  EXPECT_EQ(back->metrics[0].samples, (std::vector<double>{1.5, 2.5}));
  EXPECT_EQ(back->findings[0].severity, Severity::fail);
  EXPECT_EQ(back->info["hosts"][0], "a");
  EXPECT_FALSE(report_from_json("{\"status\":").has_value());
}

TEST(PingPongPartner, FirstRankOnAnotherHostElseRankOne) {
  // mpirun --map-by ppr:4:node: ranks 0-3 on a, 4-7 on b; the pair must cross the network.
  std::vector<RankIdentity> ids;
  for (int r = 0; r < 8; ++r) ids.push_back({r, r < 4 ? "a" : "b", "0.1.0", "abc"});
  EXPECT_EQ(pingpong_partner(ids), 4);
  for (auto& id : ids) id.host = "a";
  EXPECT_EQ(pingpong_partner(ids), 1);  // one host: shared memory between ranks 0 and 1
}
