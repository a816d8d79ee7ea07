// host.decode and host.config end to end through `nodeaudit probe ... --format json`.
#include <gtest/gtest.h>

#include <sched.h>

#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/cli_expect.hpp"

namespace {

using nodeaudit::proc::ProcessResult;

// The CLI; `out` is stdout alone (JSON must stay parseable) unless `with_stderr` puts both in it.
ProcessResult run(const std::string& args, bool with_stderr = false) {
  return with_stderr ? nodeaudit::proc::run_nodeaudit_merged(args) : nodeaudit::proc::run_nodeaudit_line(args);
}

int allowed_cpu_count() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

std::set<std::string> finding_codes(const nlohmann::json& probe) {
  std::set<std::string> codes;
  for (const auto& f : probe["findings"]) codes.insert(f["code"].get<std::string>());
  return codes;
}

TEST(HostDecodeCli, SmallRunRecordsTheCatalogueMetrics) {
  ASSERT_TRUE(std::filesystem::exists(NODEAUDIT_BINARY));
  const ProcessResult r = run("probe host.decode --images 6 --width 96 --height 64 --image-size 4KiB --crop 32 "
                              "--workers 1,65536 --repetitions 2 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json probe = nlohmann::json::parse(r.out)["probes"][0];
  EXPECT_EQ(probe["status"], "ok") << probe.dump(2);
  const std::set<std::string> codes = finding_codes(probe);
  EXPECT_TRUE(codes.count("host_decode.workers_capped")) << "65536 workers is more than any CPU count";
  const std::string all = std::to_string(allowed_cpu_count());
  std::set<std::string> series;
  for (const auto& m : probe["metrics"]) {
    EXPECT_EQ(m["unit"], "images/s");
    std::string key = m["name"].get<std::string>();
    for (const auto& [k, v] : m["labels"].items()) key += " " + k + "=" + v.get<std::string>();
    series.insert(key);
  }
  for (const char* stage : {"decode", "augment", "full"}) {
    EXPECT_TRUE(series.count(std::string("images_per_s stage=") + stage + " workers=1")) << stage;
    EXPECT_TRUE(series.count(std::string("images_per_s stage=") + stage + " workers=" + all)) << stage;
    EXPECT_TRUE(series.count(std::string("images_per_s_per_core stage=") + stage)) << stage;
  }
  // With a GPU the per-GPU figure is there; without one an info finding says why it is not.
  EXPECT_NE(series.count("images_per_s_per_gpu stage=full") == 1, codes.count("host_decode.no_gpu") == 1);
  // The quick level's two rounds split the 6 images; the info block is round 1's: images 0..2.
  EXPECT_EQ(probe["round_work_share"], 0.5);
  EXPECT_EQ(probe["info"]["images"], 3);
  EXPECT_EQ(probe["info"]["image_indices"], "0..2 of 6");
  EXPECT_GT(probe["info"]["mean_bytes"].get<double>(), 0);
  EXPECT_GE(probe["info"]["decode_psnr_db"].get<double>(), 25.0);
}

// A data set's own image size (140 KB, more grain than ImageNet's 110 KiB): the decode check is against
// a reference decode of the same JPEG, so the encoder's loss at that grain does not fail the probe.
TEST(HostDecodeCli, TheDecodeCheckHoldsAtAJobsLargerSampleSize) {
  const ProcessResult r = run("probe host.decode --image-size 140KB --images 2 --workers 1 --format json", false);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const nlohmann::json probe = nlohmann::json::parse(r.out)["probes"][0];
  EXPECT_EQ(probe["status"], "ok") << probe.dump().substr(0, 1500);
  EXPECT_GE(probe["info"]["decode_psnr_db"].get<double>(), 45.0);
  EXPECT_LT(probe["info"]["source_psnr_db"].get<double>(), 26.0) << "the encoder's loss at this grain, which the old check failed on";
}

TEST(HostDecodeCli, ZeroMixedWithCountsIsRefused) {
  const ProcessResult r = run("probe host.decode --images 2 --width 32 --height 32 --workers 0,2", true);
  EXPECT_EQ(r.exit_code, 2) << "bad input exits 2";
  EXPECT_NE(r.out.find("--workers 0"), std::string::npos) << r.out;
}

TEST(HostConfigCli, EveryRuleGivesOneFindingAndNoMetric) {
  const ProcessResult r = run("probe host.config --format json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json probe = nlohmann::json::parse(r.out)["probes"][0];
  EXPECT_EQ(probe["status"], "ok");
  EXPECT_TRUE(probe["metrics"].empty());
  const std::set<std::string> codes = finding_codes(probe);
  for (const char* code : {"host_config.governor", "host_config.thp", "host_config.swap", "host_config.shm", "host_config.memlock",
                           "host_config.numa_balancing", "host_config.iommu", "host_config.host_ram", "host_config.cores_per_gpu"})
    EXPECT_TRUE(codes.count(code)) << code;
}

// The kernel log is either read (and says what it found) or not judged with the reason: never silent.
TEST(HostConfigCli, TheKernelLogIsJudgedOrSaysWhyNot) {
  const ProcessResult r = run("probe host.config --format json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json probe = nlohmann::json::parse(r.out)["probes"][0];
  int summaries = 0;
  for (const auto& f : probe["findings"]) {
    if (f["code"] != "host_config.kernel_log") continue;
    ++summaries;
    const std::string message = f["message"].get<std::string>();
    const bool judged = message.find("records from /dev/kmsg") != std::string::npos &&
                        (message.find("no NVIDIA Xid events") != std::string::npos || message.find("Xid event") != std::string::npos);
    const bool not_judged = message.find("not judged (") != std::string::npos;
    EXPECT_NE(judged, not_judged) << message;
  }
  EXPECT_EQ(summaries, 1);
}

}  // namespace
