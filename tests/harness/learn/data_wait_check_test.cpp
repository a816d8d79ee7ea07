// The data-wait check on a node result without a GPU figure (cpu-only.json): the scorer's slowest
// loader stage per step set against the job's measured compute per step. The expected shares come
// from what the check means, not from its formula: a loader twice as slow as the compute leaves half of
// each step waiting for data, four times as slow three quarters, and a loader faster than the compute
// none.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "harness/core/result.hpp"
#include "harness/learn/data_wait_check.hpp"
#include "harness/score/score.hpp"

namespace nodeaudit::learn {
namespace {

struct ScorerLoader {
  double time_s = 0;  // the slowest loader stage per step, for the scorer's samples per node
  double samples_per_node = 0;
};

// Read from the scorer's own assessment (another component than the check under test).
ScorerLoader scorer_loader(const score::Profile& profile, const nlohmann::json& result) {
  const nlohmann::json assessment = score::assess(profile, result, {}, nullptr);
  ScorerLoader out;
  for (const auto& res : assessment["resources"])
    if (res["resource"] == "storage" || res["resource"] == "cpu_decode" || res["resource"] == "host_to_device")
      out.time_s = std::max(out.time_s, res.value("time_per_step_s", 0.0));
  out.samples_per_node = assessment["step"].value("samples_per_node", 0.0);
  return out;
}

TEST(DataWaitCheck, TheShareOfTheStepSpentWaitingFollowsHowMuchSlowerTheLoaderIs) {
  const score::Profile profile = score::load_profile("cv-resnet50-imagenet");
  const nlohmann::json result = load_result_file(std::string(NODEAUDIT_FIXTURES) + "/results/cpu-only.json");
  const ScorerLoader loader = scorer_loader(profile, result);
  ASSERT_GT(loader.time_s, 0);
  ASSERT_GT(loader.samples_per_node, 0);
  LearnedJob job;
  job.timing.samples_per_step = loader.samples_per_node;  // the job takes the scorer's samples per step
  job.timing.shares.data_wait = 0;
  for (const auto& [compute_s, share] :
       {std::pair{loader.time_s / 2, 0.5}, std::pair{loader.time_s / 4, 0.75}, std::pair{loader.time_s * 2, 0.0}}) {
    job.timing.step_time_s = compute_s;
    const DataWaitCheck check = check_data_wait(job, profile, result, "cpu-only.json");
    ASSERT_TRUE(check.predicted_share.has_value()) << check.basis;
    EXPECT_NEAR(*check.predicted_share, share, 1e-9) << check.basis;
    EXPECT_FALSE(check.scorer_step);
  }
  // Twice the samples per step doubles the loader's work per step: against the same compute (half
  // the loader's time for the scorer's samples) the loader is now four times slower.
  job.timing.samples_per_step = 2 * loader.samples_per_node;
  job.timing.step_time_s = loader.time_s / 2;
  EXPECT_NEAR(*check_data_wait(job, profile, result, "cpu-only.json").predicted_share, 0.75, 1e-9);
}

}  // namespace
}  // namespace nodeaudit::learn
