// The data-wait check: the job's own measurements carried by the one prediction model to a node's
// figures. The expected shares come from what the check means, not from its formula: a loader whose
// CPU work per step, spread over the workers the node's cores can run, takes twice the compute leaves
// half of each step waiting, four times three quarters, and a loader faster than the compute none.
#include <gtest/gtest.h>

#include <string>

#include "harness/core/result.hpp"
#include "harness/learn/data_wait_check.hpp"
#include "harness/score/score.hpp"

namespace nodeaudit::learn {
namespace {

TEST(DataWaitCheck, TheShareOfTheStepSpentWaitingFollowsHowMuchSlowerTheLoaderIs) {
  const score::Profile profile = score::load_profile("cv-resnet50-imagenet");
  // cpu-only.json: 32 CPUs, no GPU, storage from the page cache far faster than these loaders.
  const nlohmann::json result = load_result_file(std::string(NODEAUDIT_FIXTURES) + "/results/cpu-only.json");
  score::JobMeasured job;
  job.samples_per_step = 256, job.loader_workers = 4;  // 4 workers on 32 CPUs: the loader runs 4 wide
  job.compute_s = 0.100;
  for (const auto& [loader_cpu_s, share] : {std::pair{0.800, 0.5}, std::pair{1.600, 0.75}, std::pair{0.200, 0.0}}) {
    // The workers' CPU per step (the tree's minus the rank's own); the loader takes loader_cpu_s / 4.
    job.ranks_cpu_s = 0.010, job.tree_cpu_s = job.ranks_cpu_s + loader_cpu_s;
    job.step_s = 0.100, job.data_wait_s = 0;
    const DataWaitCheck check = check_data_wait(job, profile, result, result, "cpu-only.json");
    ASSERT_TRUE(check.predicted_share.has_value()) << check.basis;
    EXPECT_NEAR(*check.predicted_share, share, 1e-9) << check.basis;
  }
  // Half the workers: the same CPU work takes twice as long: 0.8 s over 2 workers is four times the compute.
  job.loader_workers = 2, job.tree_cpu_s = 0.810;
  EXPECT_NEAR(*check_data_wait(job, profile, result, result, "cpu-only.json").predicted_share, 0.75, 1e-9);
  // A node result without storage.dataset: not judged, naming it, never taken as keeping up.
  nlohmann::json without = result;
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& probe : result["probes"])
    if (probe["id"] != "storage.dataset") kept.push_back(probe);
  without["probes"] = kept;
  const DataWaitCheck missing = check_data_wait(job, profile, result, without, "no-storage.json");
  EXPECT_FALSE(missing.predicted_share.has_value());
  EXPECT_NE(missing.basis.find("storage (storage.dataset"), std::string::npos) << missing.basis;
}

}  // namespace
}  // namespace nodeaudit::learn
