// On a machine without a GPU the GPU probes are skipped for one reason, and the run says that
// reason once per section (the live lines, the skipped-probes summary, the assessment), not once
// per probe and per verdict line. Where no NVIDIA driver is installed the reason names the missing
// driver library instead of the CUDA runtime's "driver version is insufficient".
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "harness/core/result.hpp"
#include "harness/node/gpu_absence.hpp"
#include "tests/support/cli_expect.hpp"
#include "tests/support/text_search.hpp"

namespace nodeaudit {
namespace {

using nodeaudit::test::find_on_path;
using nodeaudit::test::occurrences;

TEST(SkipReason, AMissingDriverIsNamedAsSuch) {
  if (!NODEAUDIT_GPU_BODIES_BUILT) GTEST_SKIP() << "GPU probes not built in this build";
  if (!nvidia_driver_missing()) GTEST_SKIP() << "an NVIDIA driver (libnvidia-ml.so.1) is installed here";
  const proc::ProcessResult r = proc::run_nodeaudit({"probe", "gpu.gemm", "--format", "json"});
  const nlohmann::json doc = proc::json_output(r);
  ASSERT_TRUE(doc.is_object()) << r.err;
  const nlohmann::json& probe = doc["probes"][0];
  EXPECT_EQ(probe["status"], "skipped");
  EXPECT_EQ(probe["reason"], "no NVIDIA driver (libnvidia-ml.so.1 not found)");
  EXPECT_EQ(probe["reason"].get<std::string>().find("insufficient"), std::string::npos);
}

TEST(SkipReason, ARunSaysEachSkipReasonOncePerSection) {
  // Without a driver every GPU probe must skip; with one they may run, and this is checked by
  // gpu_device_tests instead.
  if (!nvidia_driver_missing()) GTEST_SKIP() << "an NVIDIA driver (libnvidia-ml.so.1) is installed here";
  const std::string dir = proc::make_temp_dir("skip-reason");
  const proc::ProcessResult r = proc::run_nodeaudit(
      {"run", "--only", "gpu.*", "--profile", "llm-finetune-7b", "--out", dir + "/result.json"});
  const nlohmann::json doc = load_result_file(dir + "/result.json");
  std::filesystem::remove_all(dir);
  ASSERT_EQ(doc["probes"][0]["status"], "skipped") << "no NVIDIA driver here, yet a GPU probe did not skip: " << r.out;
  const std::string reason = doc["probes"][0]["reason"];
  ASSERT_FALSE(reason.empty());
  std::size_t skipped = 0;  // for this one reason
  for (const auto& probe : doc["probes"]) skipped += probe["status"] == "skipped" && probe["reason"] == reason;
  ASSERT_GE(skipped, 2u) << r.out;
  // The first skipped probe's line, the grouped summary and the assessment's list: three, not one
  // per probe plus one per verdict line.
  EXPECT_EQ(occurrences(r.out, reason), 3u) << r.out;
  const std::string grouped = std::to_string(skipped) + " probes skipped: " + reason;
  EXPECT_EQ(occurrences(r.out, grouped), 2u) << "the table and the assessment each group them\n" << r.out;
  EXPECT_NE(r.out.find("(same reason as " + doc["probes"][0]["id"].get<std::string>() + ")"), std::string::npos) << r.out;
  ASSERT_TRUE(doc["assessment"]["skipped"].is_array());
  EXPECT_EQ(doc["assessment"]["skipped"][0]["reason"], reason);
  EXPECT_EQ(doc["assessment"]["skipped"][0]["probes"].size(), skipped);
}

}  // namespace
}  // namespace nodeaudit
