// A run for a profile leaves out a probe whose figure the profile's verdict never reads (host.decode
// for a profile that decodes nothing on the CPU), recorded as skipped with the reason; naming the
// probe with --only still measures it.
#include <gtest/gtest.h>

#include <filesystem>

#include "harness/core/result.hpp"
#include "tests/support/cli_expect.hpp"

using nodeaudit::proc::make_temp_dir;
using nodeaudit::proc::run_process;

TEST(ProfilePlan, AProbeTheProfileDoesNotNeedIsSkippedWithTheReason) {
  const std::string dir = make_temp_dir("profile-plan");
  const auto r = run_process({NODEAUDIT_BINARY, "run", "--profile", "llm-finetune-7b", "--skip",
                              "gpu.*,comm.*,storage.*,pipeline.*,host.memory-bandwidth", "--out", dir + "/r.json"});
  const nlohmann::json doc = nodeaudit::load_result_file(dir + "/r.json");
  std::filesystem::remove_all(dir);
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  bool seen = false;
  for (const auto& probe : doc["probes"]) {
    if (probe["id"] != "host.decode") continue;
    seen = true;
    EXPECT_EQ(probe["status"], "skipped");
    EXPECT_EQ(probe["reason"],
              "not needed by profile llm-finetune-7b (data.decode = none: no CPU decode to judge); --only host.decode "
              "measures it");
  }
  EXPECT_TRUE(seen) << r.out;
}

TEST(ProfilePlan, OnlyNamingTheProbeStillMeasuresIt) {
  const std::string dir = make_temp_dir("profile-plan-only");
  const auto r = run_process({NODEAUDIT_BINARY, "run", "--profile", "llm-finetune-7b", "--only", "host.decode",
                              "--repetitions", "1", "--out", dir + "/r.json"});
  const nlohmann::json doc = nodeaudit::load_result_file(dir + "/r.json");
  std::filesystem::remove_all(dir);
  ASSERT_EQ(doc["probes"].size(), 1u);
  EXPECT_EQ(doc["probes"][0]["status"], "ok") << r.out << r.err;
}
