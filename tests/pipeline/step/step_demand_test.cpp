// pipeline.step sees the scorer's numbers: every shipped profile, handed to the probe as the step
// demand (through its JSON text, as a child of `run` receives it), gives back the profile the
// scorer reads (the prediction beside the step is made from that demand: step_prediction_test).
#include <gtest/gtest.h>

#include "harness/score/score.hpp"
#include "harness/score/step_demand.hpp"

namespace nodeaudit::pipeline {
namespace {

score::Profile through_a_child(const score::Profile& profile) {
  const std::string text = score::step_demand_of(profile).to_json().dump();
  return score::profile_of_demand(StepDemand::from_json(nlohmann::json::parse(text)));
}

TEST(StepDemand, EveryShippedProfileArrivesAsTheScorerReadsIt) {
  for (const std::string& name : score::shipped_profile_names()) {
    SCOPED_TRACE(name);
    const score::Profile scorer = score::load_profile(name);
    const score::Profile probe = through_a_child(scorer);
    EXPECT_EQ(probe.name, scorer.name);
    EXPECT_EQ(probe.category, scorer.category);
    EXPECT_EQ(probe.flops_per_sample(), scorer.flops_per_sample());
    EXPECT_EQ(probe.samples_per_step_per_gpu(), scorer.samples_per_step_per_gpu());
    EXPECT_EQ(probe.model_state_bytes(), scorer.model_state_bytes());
    EXPECT_EQ(probe.gradient_bytes(), scorer.gradient_bytes());
    EXPECT_EQ(probe.compute_time_s(3.5, 400), scorer.compute_time_s(3.5, 400));
    EXPECT_EQ(probe.data.sample_bytes, scorer.data.sample_bytes);
    EXPECT_EQ(probe.data.sample_size_distribution.size(), scorer.data.sample_size_distribution.size());
    EXPECT_EQ(probe.data.access, scorer.data.access);
    EXPECT_EQ(probe.data.decode, scorer.data.decode);
    EXPECT_EQ(probe.data.loader, scorer.data.loader);
    EXPECT_EQ(probe.training.comm_overlap, scorer.training.comm_overlap);
    EXPECT_EQ(probe.training.sharding, scorer.training.sharding);
    EXPECT_EQ(probe.training.checkpoint_bytes, scorer.training.checkpoint_bytes);
    EXPECT_EQ(probe.training.checkpoint_interval_s, scorer.training.checkpoint_interval_s);
    EXPECT_EQ(probe.target_run_samples(), scorer.target_run_samples());
  }
}

}  // namespace
}  // namespace nodeaudit::pipeline
