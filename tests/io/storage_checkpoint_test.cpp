// storage.checkpoint end to end on a small size: write, fsync, O_DIRECT restore and byte check,
// one file and N shards, with its figures (the stall among them) and nothing left behind.
#include <map>

#include "tests/io/io_test_util.hpp"

namespace nodeaudit::io {
namespace {

using test::CliResult;
using test::probe_entry;
using test::run_cli;
using test::TempDir;

TEST(StorageCheckpoint, WritesSyncsRestoresAndChecksOneFileAndShards) {
  TempDir dir;
  const CliResult r = run_cli("probe storage.checkpoint --format json --size 2MiB --shards 4 --block-size 64KiB --repetitions 2 --data-dir " + dir.path);
  const auto e = probe_entry(r);
  if (e["status"] == "skipped") SKIP_ONLY_IF_IO_URING_REFUSED("skipped: " + e["reason"].get<std::string>());
  ASSERT_EQ(e["status"], "ok") << r.out;
  EXPECT_EQ(r.exit_code, 0) << r.out;
  // The quick level's two rounds split the 2 repetitions: one each, pooled in round order.
  EXPECT_EQ(e.value("rounds", 1), 2);
  EXPECT_EQ(e.value("round_work_share", 1.0), 0.5);
  for (const auto& f : e["findings"]) EXPECT_NE(f["severity"], "fail") << f.dump();

  // metric name -> shard count -> the metric
  std::map<std::string, std::map<std::string, nlohmann::json>> by_name;
  for (const auto& m : e["metrics"]) by_name[m["name"]][m["labels"]["shards"]] = m;
  ASSERT_EQ(by_name.size(), 3u) << e["metrics"].dump();
  for (const char* name : {"write_bandwidth", "stall_s", "restore_bandwidth"}) {
    ASSERT_EQ(by_name[name].size(), 2u) << name << ": one file and 4 shards expected";
    for (const char* shards : {"1", "4"}) {
      const auto& m = by_name[name][shards];
      EXPECT_EQ(m["n"], 2) << name << " shards=" << shards;
      for (const auto& v : m["samples"]) EXPECT_GT(v.get<double>(), 0) << name << " shards=" << shards;
    }
  }
  EXPECT_EQ(by_name["restore_bandwidth"]["4"]["labels"]["cache"], "none") << "the restore is read with O_DIRECT";
  EXPECT_EQ(by_name["write_bandwidth"]["4"]["unit"], "GB/s");
  EXPECT_EQ(by_name["stall_s"]["4"]["unit"], "s");

  // Each repetition wrote the whole 2 MiB (4 shards of 512 KiB, or one file of 2 MiB) in its stall:
  // write bandwidth x stall = the checkpoint's bytes, repetition by repetition.
  for (const char* shards : {"1", "4"})
    for (std::size_t rep = 0; rep < 2; ++rep) {
      const double gbps = by_name["write_bandwidth"][shards]["samples"][rep];
      const double stall = by_name["stall_s"][shards]["samples"][rep];
      EXPECT_NEAR(gbps * stall * 1e9, 2.0 * (1 << 20), 1e-6 * (1 << 20)) << "shards=" << shards << " repetition " << rep;
    }
  EXPECT_EQ(dir.entries(), 0u) << "the checkpoint directory is removed";
}

}  // namespace
}  // namespace nodeaudit::io
